//! The `ftrace_events` bundles written from the committed raw pages,
//! decoded again with the decoders generated from upstream's schema and
//! checked against the kernel's own text of the same buffer (sched_switch,
//! the wakeups and print field by field, every other event by name, pid and
//! timestamp); compact_sched expanded back equals the typed result; generic
//! events carry every field the format names; hostile formats give counted
//! skips, never a panic.

use crate::ftrace_common;

use ftrace_common::read_back::{Back, read_back};
use ftrace_common::{Recording, fixture_dir, parse_text};
use protozero::HeapWriter;
use zerotrace_probes::ftrace::{
    EventFormat, FormatTable, HeaderPage, Options, Page, PageLayout, Translator,
    holds_data_pointer, holds_kernel_address,
};
use zerotrace_protos::protos::{FtraceEvent, FtraceEventBundleDecoder};
use zerotrace_protos::upstream_tables::{FTRACE_EVENT_MESSAGES, packet_field};

/// Translates every CPU's pages, one packet per bundle; returns the
/// packets' `ftrace_events` payloads with their CPU.
fn translate(rec: &Recording, table: &FormatTable, options: Options) -> (Vec<Vec<u8>>, Translator) {
    let header = HeaderPage::parse(&rec.header_page).expect("header_page");
    let ct = table.common_type().expect("common_type").clone();
    let layout = PageLayout::new(&header, rec.subbuf_size, &ct).expect("layout");
    let mut tr = Translator::new(table, options).expect("translator");
    let mut out = Vec::new();
    for (cpu, raw) in rec.raw.iter().enumerate() {
        let pages: Vec<Page<'_>> = layout.pages(raw).map(|p| p.expect("page")).collect();
        let mut rest = &pages[..];
        while !rest.is_empty() {
            let mut w = HeapWriter::new();
            let n = {
                let mut root = w.root();
                tr.write_bundle(&mut root, cpu as u32, rest)
            };
            assert!(n > 0);
            rest = &rest[n..];
            let bytes = w.finish().expect("writes");
            let d = protozero::TypedDecoder::<16>::new(&bytes);
            let ids: Vec<u32> = d.fields().map(|f| f.id).collect();
            assert_eq!(ids, [packet_field::FTRACE_EVENTS]);
            let payload = d
                .get(packet_field::FTRACE_EVENTS)
                .and_then(|f| f.as_bytes().ok())
                .expect("bundle");
            out.push(payload.to_vec());
        }
    }
    (out, tr)
}

fn table_of(rec: &Recording, rename: bool) -> FormatTable {
    let mut t = FormatTable::new();
    for (ev, text) in &rec.formats {
        let mut f = EventFormat::parse(text).unwrap_or_else(|e| panic!("{ev}: {e}"));
        if rename {
            f.name = format!("x_{}", f.name);
        }
        t.insert(f).expect("insert");
    }
    t
}

#[test]
fn typed_events_match_the_kernel_text() {
    let rec = Recording::load(&fixture_dir()).expect("fixtures");
    let table = table_of(&rec, false);
    let (bundles, tr) = translate(
        &rec,
        &table,
        Options {
            compact_sched: false,
        },
    );
    let back = read_back(&bundles);
    let (text, _) = parse_text(&rec.text);
    assert_eq!(back.len(), text.len());
    let mut rendered = 0;
    for cpu in 0..rec.raw.len() {
        let ours: Vec<&Back> = back.iter().filter(|b| b.cpu as usize == cpu).collect();
        let want: Vec<_> = text.iter().filter(|t| t.cpu == cpu).collect();
        assert_eq!(ours.len(), want.len(), "cpu{cpu}");
        for (o, w) in ours.iter().zip(&want) {
            assert_eq!((o.ts + 500) / 1000, w.ts_us, "{o:?} vs {w:?}");
            assert_eq!(o.pid, Some(w.pid), "{o:?} vs {w:?}");
            if o.name != "print" {
                assert_eq!(o.name, w.name, "{o:?} vs {w:?}");
            }
            if let Some(f) = &o.fields {
                assert_eq!(f, &w.fields, "{o:?} vs {w:?}");
                rendered += 1;
            }
        }
    }
    let s = tr.stats();
    println!("{s:?}, {rendered} rendered");
    assert_eq!(s.typed as usize, back.len());
    assert_eq!(
        (s.generic, s.unknown_ids, s.short_records, s.bad_fields),
        (0, 0, 0, 0)
    );
    assert!(rendered > 500, "{rendered}");
    for name in [
        "sched_switch",
        "sched_waking",
        "print",
        "sys_enter",
        "sys_exit",
    ] {
        assert!(back.iter().any(|b| b.name == name), "no {name}");
    }
}

#[test]
fn compact_sched_expands_to_the_typed_result() {
    let rec = Recording::load(&fixture_dir()).expect("fixtures");
    let table = table_of(&rec, false);
    let (typed, _) = translate(
        &rec,
        &table,
        Options {
            compact_sched: false,
        },
    );
    let (compact, tr) = translate(&rec, &table, Options::default());
    assert!(tr.compact_sched());
    let s = tr.stats();
    assert!(s.compact_switch > 100 && s.compact_waking > 100, "{s:?}");
    let mut typed = read_back(&typed);
    let mut compact = read_back(&compact);
    // Compact drops prev_comm/prev_pid/prev_prio and the pid (derived from
    // the previous switch); compare the rest.
    for b in typed.iter_mut().filter(|b| b.name == "sched_switch") {
        let f = b.fields.take().expect("fields");
        b.fields = Some(f[f.find("prev_state=").expect("prev_state")..].to_owned());
        b.pid = None;
    }
    for b in typed.iter_mut().filter(|b| b.name == "sched_waking") {
        b.pid = None;
    }
    let key = |b: &Back| (b.cpu, b.ts, b.name.clone());
    typed.sort_by_key(key);
    compact.sort_by_key(key);
    assert_eq!(typed.len(), compact.len());
    for (t, c) in typed.iter().zip(&compact) {
        assert_eq!(t, c);
    }
    // Smaller than the typed form.
    let size = |v: &[Vec<u8>]| v.iter().map(Vec::len).sum::<usize>();
    let (typed_bytes, _) = translate(
        &rec,
        &table,
        Options {
            compact_sched: false,
        },
    );
    let (compact_bytes, _) = translate(&rec, &table, Options::default());
    println!(
        "typed {} bytes, compact {}",
        size(&typed_bytes),
        size(&compact_bytes)
    );
    assert!(size(&compact_bytes) < size(&typed_bytes));
}

#[test]
fn unknown_events_are_generic_with_every_named_field() {
    let rec = Recording::load(&fixture_dir()).expect("fixtures");
    let table = table_of(&rec, true);
    let (bundles, tr) = translate(&rec, &table, Options::default());
    let s = tr.stats();
    assert!(!tr.compact_sched());
    assert_eq!(s.typed, 0);
    assert!(s.generic > 500, "{s:?}");
    // Each generic event: its name and the format's fields in order, with
    // the value the format decoder reads.
    let (plain_table, layout) = rec.layout();
    let mut decoded = Vec::new();
    for raw in &rec.raw {
        for page in layout.pages(raw) {
            for r in page.expect("page").records() {
                let r = r.expect("record");
                decoded.push(r);
            }
        }
    }
    let mut i = 0;
    let mut addresses = 0;
    for b in &bundles {
        let d = FtraceEventBundleDecoder::new(b);
        for ev in d.event() {
            let g = ev.generic().expect("generic");
            let e = plain_table.decode(&decoded[i]).expect("decode");
            i += 1;
            assert_eq!(ev.timestamp(), Some(decoded[i - 1].timestamp));
            assert_eq!(g.event_name(), Some(format!("x_{}", e.name()).as_str()));
            let ours: Vec<_> = g.field().collect();
            let names: Vec<&str> = ours.iter().map(|f| f.name().expect("name")).collect();
            let want: Vec<&str> = e.fields().map(|(f, _)| f.name.as_str()).collect();
            assert_eq!(names, want, "{}", e.name());
            for (f, (field, v)) in ours.iter().zip(e.fields()) {
                let v = v.expect("value");
                use zerotrace_probes::ftrace::Value;
                match v {
                    Value::Signed(n) => assert_eq!(f.int_value(), Some(n), "{}", field.name),
                    // A kernel address is written as its index (issue 47).
                    Value::Unsigned(n) if holds_kernel_address(field) => {
                        let index = tr.kernel_addrs().get(&n).map(|&i| u64::from(i));
                        assert!(index.is_some(), "{}: {n:#x} interned", field.name);
                        assert_eq!(f.uint_value(), index, "{}", field.name);
                        addresses += 1;
                    }
                    // A kernel data pointer as its keyed hash (issue 47).
                    Value::Unsigned(n) if holds_data_pointer(field) => {
                        assert_eq!(f.uint_value(), Some(tr.pointer_hash(n)), "{}", field.name);
                        assert!(n == 0 || f.uint_value() != Some(n), "{}", field.name);
                    }
                    Value::Unsigned(n) => assert_eq!(f.uint_value(), Some(n), "{}", field.name),
                    Value::Str(s) => assert_eq!(f.str_value_bytes(), Some(s), "{}", field.name),
                    // args[6] is read as its first element, as upstream.
                    Value::Bytes(b) => assert_eq!(
                        f.uint_value(),
                        Some(u64::from_le_bytes(b[..8].try_into().expect("8"))),
                        "{}",
                        field.name
                    ),
                }
            }
        }
    }
    assert_eq!(i, decoded.len());
    assert!(addresses > 0, "the prints' ip");
}

#[test]
fn lost_events_start_a_flagged_bundle() {
    let rec = Recording::load(&fixture_dir().join("overflow")).expect("fixtures");
    let table = table_of(&rec, false);
    let (bundles, tr) = translate(&rec, &table, Options::default());
    let first = FtraceEventBundleDecoder::new(&bundles[0]);
    assert_eq!(first.lost_events(), Some(true));
    assert_eq!(first.previous_bundle_end_timestamp(), Some(0));
    assert!(tr.stats().lost_bundles >= 1);
    let back = read_back(&bundles);
    let (text, _) = parse_text(&rec.text);
    assert_eq!(back.len(), text.len());
    // Without the loss flag, one read is one bundle per CPU.
    let rec = Recording::load(&fixture_dir()).expect("fixtures");
    let (bundles, _) = translate(
        &rec,
        &table_of(&rec, false),
        Options {
            compact_sched: false,
        },
    );
    assert_eq!(
        bundles.len(),
        rec.raw.iter().filter(|r| !r.is_empty()).count()
    );
    for b in &bundles {
        assert_eq!(FtraceEventBundleDecoder::new(b).lost_events(), None);
    }
}

/// Formats whose fields have unexpected types: the fields that do not fit
/// are left out (as upstream), compact_sched falls back to typed events,
/// records too short for their format are counted, nothing panics.
#[test]
fn hostile_formats_give_counted_skips() {
    let rec = Recording::load(&fixture_dir()).expect("fixtures");
    let mut t = FormatTable::new();
    for (ev, text) in &rec.formats {
        let text = if ev.ends_with("sched_switch") {
            text.replace("pid_t next_pid;", "char next_pid[4];")
                .replace(
                    "long prev_state;\toffset:32;\tsize:8;\tsigned:1;",
                    "unsigned long prev_state;\toffset:32;\tsize:8;\tsigned:0;",
                )
        } else if ev.ends_with("print") {
            // A buf that claims to lie far beyond any record.
            text.replace("char buf[];\toffset:16;", "char buf[];\toffset:60000;")
        } else {
            text.clone()
        };
        t.insert(EventFormat::parse(&text).expect("parses"))
            .expect("insert");
    }
    let (bundles, tr) = translate(&rec, &t, Options::default());
    assert!(!tr.compact_sched());
    let s = tr.stats();
    println!("{s:?}");
    assert!(s.short_records > 0, "{s:?}");
    for b in &bundles {
        for ev in FtraceEventBundleDecoder::new(b).event() {
            if let Some(sw) = ev.sched_switch() {
                assert!(!sw.has_next_pid(), "a char[4] is not an int32");
                assert!(
                    !sw.has_prev_state(),
                    "an unsigned long has no strategy to int64"
                );
            }
        }
    }
}

#[test]
fn field_numbers_are_upstreams() {
    // The numbers the translator writes under, from the generated writer.
    assert_eq!(packet_field::FTRACE_EVENTS, 1);
    assert_eq!(FtraceEvent::FIELD_TIMESTAMP, 1);
    assert_eq!(FtraceEvent::FIELD_PID, 2);
    assert_eq!(FtraceEvent::FIELD_GENERIC, 327);
    let n = |name: &str| {
        FTRACE_EVENT_MESSAGES
            .iter()
            .find(|m| m.name == name)
            .map(|m| m.field)
    };
    assert_eq!(n("print"), Some(3));
    assert_eq!(n("sched_switch"), Some(4));
    assert_eq!(n("sched_waking"), Some(20));
    assert_eq!(n("sys_enter"), Some(329));
    assert_eq!(FTRACE_EVENT_MESSAGES.len(), 26);
}

/// Our packets decoded by Google's protoc with upstream's own
/// `trace_packet.proto`: every field is one upstream declares (no unknown
/// field numbers), with the kernel's values.
#[test]
fn protoc_decodes_the_packets_with_upstreams_schema() {
    use std::io::Write;
    use std::process::{Command, Stdio};
    // The vendored protoc covers every platform the tests run on: a
    // missing one fails rather than passing unchecked.
    let protoc =
        protoc_bin_vendored::protoc_bin_path().expect("a vendored protoc for this platform");
    let rec = Recording::load(&fixture_dir()).expect("fixtures");
    let root = zerotrace_schema_pipeline::upstream_root().expect("the upstream schema");
    for (compact, rename) in [(true, false), (false, false), (true, true)] {
        let table = table_of(&rec, rename);
        let (bundles, _) = translate(
            &rec,
            &table,
            Options {
                compact_sched: compact,
            },
        );
        // A Trace: each bundle as TracePacket.ftrace_events inside Trace.packet (1).
        let mut w = HeapWriter::new();
        {
            let mut trace = w.root();
            for b in &bundles {
                let mut p = trace.begin_nested(1);
                p.append_bytes(packet_field::FTRACE_EVENTS, b);
            }
        }
        let bytes = w.finish().expect("writes");
        let mut child = Command::new(&protoc)
            .arg(format!("-I{}", root.display()))
            .arg("--decode=perfetto.protos.Trace")
            .arg("protos/perfetto/trace/trace.proto")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn protoc");
        let mut stdin = child.stdin.take().expect("stdin");
        let feeder = std::thread::spawn(move || stdin.write_all(&bytes));
        let out = child.wait_with_output().expect("protoc runs");
        feeder.join().expect("feeder").expect("write stdin");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "protoc: {stderr}");
        let text = String::from_utf8_lossy(&out.stdout);
        // Unknown fields print as bare numbers (`327: ...`).
        assert!(
            !text
                .lines()
                .any(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit())),
            "unknown fields in {text}"
        );
        assert!(text.contains("ftrace_events {"));
        assert!(text.contains("cpu: 1"));
        if rename {
            assert!(text.contains("generic {") && text.contains("event_name: \"x_sched_switch\""));
            assert!(text.contains("name: \"next_comm\""));
        } else {
            assert!(
                text.contains("buf: \"zt-begin\\n\""),
                "print buf as written"
            );
            assert!(text.contains("sys_enter {"));
            if compact {
                assert!(text.contains("compact_sched {"));
                assert!(text.contains("intern_table: \"zt-ping\""));
                assert!(text.contains("switch_timestamp: "));
                assert!(text.contains("waking_common_flags: "));
            } else {
                assert!(text.contains("sched_switch {") && text.contains("next_comm: \"zt-pong\""));
            }
        }
    }
}

/// Raw 4096-byte pages holding `records` (timestamp, payload) in order,
/// each delta below 2^27.
fn repack(records: &[(u64, Vec<u8>)]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < records.len() {
        let base = records[i].0;
        let mut data = Vec::new();
        let mut ts = base;
        while let Some((t, p)) = records.get(i) {
            if data.len() + 4 + p.len() > 4096 - 16 {
                break;
            }
            let delta = u32::try_from(t - ts).expect("small delta");
            assert!(delta < 1 << 27 && p.len() % 4 == 0 && p.len() <= 112);
            data.extend_from_slice(&((p.len() / 4) as u32 | (delta << 5)).to_le_bytes());
            data.extend_from_slice(p);
            ts = *t;
            i += 1;
        }
        let mut page = base.to_le_bytes().to_vec();
        page.extend_from_slice(&(data.len() as u64).to_le_bytes());
        page.extend_from_slice(&data);
        page.resize(4096, 0);
        out.extend_from_slice(&page);
    }
    out
}

/// A bundle ends at the first page boundary where its comm table holds
/// more than 64 comms (upstream's threshold); the next bundle starts a
/// fresh table and its previous_bundle_end_timestamp is the last event of
/// the one before.
#[test]
fn many_comms_split_the_compact_bundle_at_a_page_boundary() {
    let mut rec = Recording::load(&fixture_dir()).expect("fixtures");
    let table = table_of(&rec, false);
    let (_, layout) = rec.layout();
    let sw = table
        .formats()
        .find(|f| f.name == "sched_switch")
        .expect("sched_switch")
        .clone();
    let comm = sw.field("next_comm").expect("next_comm").offset;
    let template = layout
        .pages(&rec.raw[1])
        .flat_map(|p| p.expect("page").records().collect::<Vec<_>>())
        .map(|r| r.expect("record"))
        .find(|r| r.id == sw.id)
        .expect("a switch")
        .payload
        .to_vec();
    // 200 switches, each to a comm of its own, 1 µs apart.
    let records: Vec<(u64, Vec<u8>)> = (0..200u64)
        .map(|i| {
            let mut p = template.clone();
            let name = format!("t{i:03}\0");
            p[comm..comm + name.len()].copy_from_slice(name.as_bytes());
            (1_000_000 + i * 1000, p)
        })
        .collect();
    let per_page = 4080 / (4 + template.len());
    rec.raw = vec![repack(&records)];
    let (bundles, _) = translate(&rec, &table, Options::default());
    let tables: Vec<usize> = bundles
        .iter()
        .map(|b| {
            let d = FtraceEventBundleDecoder::new(b);
            d.compact_sched().expect("compact").intern_table().count()
        })
        .collect();
    // Pages are added while the table holds at most 64 comms.
    let pages_first = 64 / per_page + 1;
    assert_eq!(tables[0], pages_first * per_page, "{tables:?}");
    assert_eq!(tables.iter().sum::<usize>(), 200);
    assert!(tables.len() >= 2);
    let second = FtraceEventBundleDecoder::new(&bundles[1]);
    assert_eq!(
        second.previous_bundle_end_timestamp(),
        Some(1_000_000 + (tables[0] as u64 - 1) * 1000)
    );
}

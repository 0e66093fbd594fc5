//! What does turning the kernel's raw ftrace pages into Perfetto packets
//! cost per event, next to the floor (copying the same bytes) and to the
//! text path a naive tool takes (parsing the kernel's `trace` text)?
//!
//! Input: the `sched_switch` records of the committed fixture
//! (`tests/fixtures/ftrace/`, recorded on this machine's kernel), repacked
//! into raw pages of their own (same payloads and timestamps), so every
//! variant handles the same events:
//! * `compact_sched_switch`: parse the pages and write `ftrace_events`
//!   bundles with compact_sched on;
//! * `typed_sched_switch`: the same with compact_sched off (one
//!   `SchedSwitchFtraceEvent` per record);
//! * `generic`: the same records under an unknown name, written as
//!   `GenericFtraceEvent`s with their seven named fields;
//! * `floor_memcpy`: a bulk copy of the same pages;
//! * `text_path`: the fixture `trace.txt` lines of those events parsed into
//!   the same fields (task, pid, cpu, timestamp, and the seven
//!   `key=value` pairs) as a naive tool does.
//!
//! Run: `cargo bench -p zerotrace-probes --bench ftrace_translate -- --warm-up-time 1 --measurement-time 3`.

use std::hint::black_box;
use std::path::PathBuf;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use protozero::HeapWriter;
use zerotrace_probes::ftrace::{
    EventFormat, FormatTable, HeaderPage, Options, Page, PageLayout, Translator,
};

const SUBBUF: usize = 4096;
/// The 64-bit page header: timestamp, commit.
const HEADER: usize = 16;

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ftrace")
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(fixture().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// The fixture's formats (optionally renamed so none is known upstream).
fn table(rename: bool) -> FormatTable {
    let mut t = FormatTable::new();
    for ev in [
        "sched/sched_switch",
        "sched/sched_waking",
        "sched/sched_wakeup",
        "ftrace/print",
    ] {
        let mut f = EventFormat::parse(&read(&format!("events/{ev}/format"))).expect("format");
        if rename {
            f.name = format!("x_{}", f.name);
        }
        t.insert(f).expect("insert");
    }
    t
}

/// Raw pages holding `records` (timestamp, payload), in order, as the
/// kernel writes them (time-extend records where a delta needs them).
fn repack(records: &[(u64, Vec<u8>)]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < records.len() {
        let base = records[i].0;
        let mut data = Vec::new();
        let mut ts = base;
        while let Some((t, p)) = records.get(i) {
            let delta = t - ts;
            let ext = if delta >= 1 << 27 { 8 } else { 0 };
            if data.len() + ext + 4 + p.len() > SUBBUF - HEADER {
                break;
            }
            let mut d = delta;
            if ext > 0 {
                data.extend_from_slice(&(30 | (((d & ((1 << 27) - 1)) as u32) << 5)).to_le_bytes());
                data.extend_from_slice(&((d >> 27) as u32).to_le_bytes());
                d = 0;
            }
            assert!(p.len() % 4 == 0 && p.len() <= 112);
            let type_len = (p.len() / 4) as u32;
            data.extend_from_slice(&(type_len | ((d as u32) << 5)).to_le_bytes());
            data.extend_from_slice(p);
            ts = *t;
            i += 1;
        }
        let mut page = base.to_le_bytes().to_vec();
        page.extend_from_slice(&(data.len() as u64).to_le_bytes());
        page.extend_from_slice(&data);
        page.resize(SUBBUF, 0);
        out.extend_from_slice(&page);
    }
    out
}

/// The fixture's sched_switch records and their `trace.txt` lines.
fn inputs() -> (PageLayout, Vec<u8>, Vec<String>) {
    let t = table(false);
    let header = HeaderPage::parse(&read("header_page")).expect("header_page");
    let ct = t.common_type().expect("common_type").clone();
    let layout = PageLayout::new(&header, SUBBUF, &ct).expect("layout");
    let switch_id = t
        .formats()
        .find(|f| f.name == "sched_switch")
        .expect("sched_switch")
        .id;
    let mut records = Vec::new();
    for cpu in 0..2 {
        let raw = std::fs::read(fixture().join(format!("cpu{cpu}.raw"))).expect("raw");
        for page in layout.pages(&raw) {
            for r in page.expect("page").records() {
                let r = r.expect("record");
                if r.id == switch_id {
                    records.push((r.timestamp, r.payload.to_vec()));
                }
            }
        }
    }
    let lines: Vec<String> = read("trace.txt")
        .lines()
        .filter(|l| !l.starts_with('#') && l.contains(" sched_switch: "))
        .map(str::to_owned)
        .collect();
    assert_eq!(lines.len(), records.len());
    // One CPU's worth of monotonic timestamps: sort (the two CPUs interleave).
    records.sort_by_key(|r| r.0);
    (layout, repack(&records), lines)
}

/// One event as the text path gets it.
#[derive(Debug, Default)]
struct TextSwitch<'a> {
    comm: &'a str,
    pid: i32,
    cpu: u32,
    ts_ns: u64,
    prev_comm: &'a str,
    prev_pid: i32,
    prev_prio: i32,
    prev_state: &'a str,
    next_comm: &'a str,
    next_pid: i32,
    next_prio: i32,
}

/// Parses one `trace` line as a naive tool would: split the columns,
/// then the `key=value` pairs.
fn parse_line(line: &str) -> Option<TextSwitch<'_>> {
    let open = line.find(" [")?;
    let close = open + line[open..].find(']')?;
    let task = line[..open].trim();
    let dash = task.rfind('-')?;
    let mut ev = TextSwitch {
        comm: &task[..dash],
        pid: task[dash + 1..].parse().ok()?,
        cpu: line[open + 2..close].parse().ok()?,
        ..TextSwitch::default()
    };
    let rest = line[close + 1..].trim_start();
    let rest = rest.split_once(' ')?.1.trim_start();
    let (ts, rest) = rest.split_once(": ")?;
    let (secs, usecs) = ts.split_once('.')?;
    ev.ts_ns = (secs.parse::<u64>().ok()? * 1_000_000 + usecs.parse::<u64>().ok()?) * 1000;
    let (_, fields) = rest.split_once(": ")?;
    for kv in fields.split(' ') {
        let Some((k, v)) = kv.split_once('=') else {
            continue;
        };
        match k {
            "prev_comm" => ev.prev_comm = v,
            "prev_pid" => ev.prev_pid = v.parse().ok()?,
            "prev_prio" => ev.prev_prio = v.parse().ok()?,
            "prev_state" => ev.prev_state = v,
            "next_comm" => ev.next_comm = v,
            "next_pid" => ev.next_pid = v.parse().ok()?,
            "next_prio" => ev.next_prio = v.parse().ok()?,
            _ => {}
        }
    }
    Some(ev)
}

/// Translates every page into one reused heap writer; returns bytes.
fn translate(tr: &mut Translator, pages: &[Page<'_>], w: &mut HeapWriter) -> usize {
    let mut rest = pages;
    let mut bytes = 0;
    while !rest.is_empty() {
        w.clear();
        let n = {
            let mut root = w.root();
            tr.write_bundle(&mut root, 0, rest)
        };
        bytes += w.written();
        rest = &rest[n..];
    }
    bytes
}

fn bench(c: &mut Criterion) {
    let (layout, raw, lines) = inputs();
    let pages: Vec<Page<'_>> = layout.pages(&raw).map(|p| p.expect("page")).collect();
    let events = lines.len() as u64;
    let mut g = c.benchmark_group("ftrace_translate");
    g.throughput(Throughput::Elements(events));

    for (name, rename, compact) in [
        ("compact_sched_switch", false, true),
        ("typed_sched_switch", false, false),
        ("generic", true, true),
    ] {
        let mut tr = Translator::new(
            &table(rename),
            Options {
                compact_sched: compact,
            },
        )
        .expect("translator");
        let mut w = HeapWriter::new();
        let before = tr.stats();
        translate(&mut tr, &pages, &mut w);
        let s = tr.stats();
        let written = (s.compact_switch + s.typed + s.generic)
            - (before.compact_switch + before.typed + before.generic);
        assert_eq!(written, events, "{name}: {s:?}");
        g.bench_function(name, |b| {
            b.iter(|| {
                // Each iteration re-parses the page headers too.
                let pages: Vec<Page<'_>> = layout.pages(black_box(&raw)).flatten().collect();
                black_box(translate(&mut tr, &pages, &mut w))
            })
        });
    }

    let mut dst = vec![0u8; raw.len()];
    g.bench_function("floor_memcpy", |b| {
        b.iter(|| {
            dst.copy_from_slice(black_box(&raw));
            black_box(&dst);
        })
    });

    let text: String = lines.join("\n");
    if let Some(bad) = text.lines().find(|l| parse_line(l).is_none()) {
        panic!("text path cannot parse {bad:?}");
    }
    g.bench_function("text_path", |b| {
        b.iter(|| {
            let mut n = 0u64;
            for l in black_box(&text).lines() {
                if let Some(ev) = parse_line(l) {
                    // Every field is used, as a tool would.
                    n = n.wrapping_add(
                        ev.ts_ns
                            ^ u64::from(ev.cpu)
                            ^ (ev.pid ^ ev.prev_pid ^ ev.next_pid ^ ev.prev_prio ^ ev.next_prio)
                                as u64
                            ^ (ev.comm.len()
                                + ev.prev_comm.len()
                                + ev.next_comm.len()
                                + ev.prev_state.len()) as u64,
                    );
                }
            }
            black_box(n)
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);

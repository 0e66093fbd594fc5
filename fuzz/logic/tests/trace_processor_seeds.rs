//! The `trace_processor` target's seeds, made here with the protozero
//! writers rather than recorded: small traces reaching each parser of the
//! trace processor (TrackEvent slices, counters and flows with interned
//! names and debug annotations; the process tree and process stats;
//! `cpu_info`; ftrace print and sched_switch events; `sys_stats`; clock
//! snapshots and packets on another clock; `compressed_packets`; sequence
//! loss and trace stats; a gzip trace file) plus the `trace_file` target's
//! recorded seeds. Each seed must load and fill the table it is for; the
//! committed files (`fuzz/seeds/trace_processor/`) must equal what is built
//! here (`ZEROTRACE_FUZZ_BLESS=1 cargo test -p zerotrace-fuzz-logic --test
//! trace_processor_seeds` rewrites them).

use std::io::Write;
use std::path::Path;

use protozero::Message;
use zerotrace_protos::protos::{SysStats, TracePacket, track_event};
use zerotrace_trace_processor::{TraceProcessor, Value};

/// One packet's bytes, written by `f`.
fn packet(f: impl FnOnce(&mut TracePacket<'_>)) -> Vec<u8> {
    let mut w = protozero::HeapWriter::new();
    {
        let mut p = TracePacket::from_message(w.root());
        f(&mut p);
    }
    w.finish().expect("heap writer")
}

/// A packet written field by field (messages our schema does not declare
/// in `TracePacket`, at upstream's field numbers).
fn raw_packet(f: impl FnOnce(&mut Message<'_>)) -> Vec<u8> {
    packet(|p| f(p.message()))
}

/// Packets framed as a `Trace`.
fn trace(packets: &[Vec<u8>]) -> Vec<u8> {
    let mut w = protozero::HeapWriter::new();
    {
        let mut t = w.root();
        for p in packets {
            t.append_bytes(1, p);
        }
    }
    w.finish().expect("heap writer")
}

fn track_events() -> Vec<u8> {
    let mut packets = vec![
        packet(|p| {
            p.set_trusted_packet_sequence_id(1);
            p.set_sequence_flags(1);
            let mut td = p.begin_track_descriptor();
            td.set_uuid(10);
            let mut th = td.begin_thread();
            th.set_pid(5);
            th.set_tid(6);
            th.set_thread_name("worker");
        }),
        packet(|p| {
            p.set_trusted_packet_sequence_id(1);
            let mut td = p.begin_track_descriptor();
            td.set_uuid(20);
            td.set_parent_uuid(10);
            td.set_name("queue depth");
            td.begin_counter();
        }),
        packet(|p| {
            p.set_trusted_packet_sequence_id(1);
            p.set_timestamp(1000);
            p.set_sequence_flags(2);
            p.begin_interned_data()
                .add_event_names()
                .set_iid(1)
                .set_name("outer");
            let mut e = p.begin_track_event();
            e.set_track_uuid(10);
            e.set_type(track_event::Type::SliceBegin);
            e.add_categories("cat");
            e.set_name_iid(1);
            e.add_flow_ids(77);
            e.add_debug_annotations().set_name("k").set_int_value(42);
        }),
    ];
    for (ts, ty, name) in [
        (1100, track_event::Type::SliceBegin, Some("inner")),
        (1150, track_event::Type::Instant, Some("mark")),
        (1200, track_event::Type::SliceEnd, None),
        (1300, track_event::Type::SliceEnd, None),
    ] {
        packets.push(packet(|p| {
            p.set_trusted_packet_sequence_id(1);
            p.set_timestamp(ts);
            let mut e = p.begin_track_event();
            e.set_track_uuid(10);
            e.set_type(ty);
            if let Some(n) = name {
                e.set_name(n);
            }
        }));
    }
    for (ts, v) in [(1000, 3), (1250, 0)] {
        packets.push(packet(|p| {
            p.set_trusted_packet_sequence_id(1);
            p.set_timestamp(ts);
            let mut e = p.begin_track_event();
            e.set_track_uuid(20);
            e.set_type(track_event::Type::Counter);
            e.set_counter_value(v);
        }));
    }
    trace(&packets)
}

fn processes() -> Vec<u8> {
    let tree = raw_packet(|m| {
        let mut tree = m.begin_nested(2);
        {
            let mut p = tree.begin_nested(1);
            p.append_int32(1, 100);
            p.append_int32(2, 1);
            p.append_string(3, "/bin/app");
            p.append_string(3, "--flag");
            p.append_int32(5, 1_010_123);
        }
        let mut th = tree.begin_nested(2);
        th.append_int32(1, 101);
        th.append_int32(3, 100);
        th.append_string(2, "worker");
    });
    let stats = raw_packet(|m| {
        m.append_uint64(8, 20);
        let mut st = m.begin_nested(9);
        let mut p = st.begin_nested(1);
        p.append_int32(1, 100);
        p.append_uint64(3, 4);
        p.append_uint64(21, 777);
    });
    trace(&[tree, stats])
}

fn cpu_info() -> Vec<u8> {
    trace(&[raw_packet(|m| {
        let mut info = m.begin_nested(67);
        for (max, features) in [(1000u64, 0u64), (2000, 1)] {
            let mut cpu = info.begin_nested(1);
            cpu.append_string(1, "core");
            cpu.append_uint64(2, 500);
            cpu.append_uint64(2, max);
            cpu.append_uint64(5, features);
        }
    })])
}

fn ftrace() -> Vec<u8> {
    trace(&[raw_packet(|m| {
        let mut b = m.begin_nested(1);
        b.append_uint32(1, 0);
        for (ts, buf) in [
            (100u64, "B|5|outer\n"),
            (150, "C|5|depth|3\n"),
            (400, "E|5\n"),
        ] {
            let mut e = b.begin_nested(2);
            e.append_uint64(1, ts);
            e.append_uint32(2, 7);
            e.begin_nested(3).append_string(2, buf);
        }
        let mut e = b.begin_nested(2);
        e.append_uint64(1, 500);
        e.append_uint32(2, 7);
        let mut sw = e.begin_nested(4);
        sw.append_string(1, "app");
        sw.append_int32(2, 7);
        sw.append_int32(3, 120);
        sw.append_int64(4, 1);
        sw.append_string(5, "swapper/0");
        sw.append_int32(6, 0);
        sw.append_int32(7, 120);
    })])
}

fn sys_stats() -> Vec<u8> {
    trace(&[packet(|p| {
        p.set_timestamp(30);
        let mut s = SysStats::from_message(p.message().begin_nested(7));
        s.add_thermal_zone().set_temp(45).set_type("soc");
        s.add_gpufreq_mhz(600);
        s.add_meminfo().set_key_raw(1).set_value(4096);
    })])
}

fn clocks() -> Vec<u8> {
    trace(&[
        packet(|p| {
            p.set_trusted_packet_sequence_id(2);
            p.set_timestamp(5000);
            let mut s = p.begin_clock_snapshot();
            s.add_clocks().set_clock_id(6).set_timestamp(5000);
            s.add_clocks().set_clock_id(3).set_timestamp(1000);
        }),
        packet(|p| {
            p.set_trusted_packet_sequence_id(2);
            p.set_sequence_flags(1);
            p.set_timestamp(1500);
            p.set_timestamp_clock_id(3);
            let mut td = p.begin_track_descriptor();
            td.set_uuid(30);
            td.set_name("on monotonic");
        }),
        packet(|p| {
            p.set_trusted_packet_sequence_id(2);
            p.set_timestamp(1600);
            p.set_timestamp_clock_id(3);
            let mut e = p.begin_track_event();
            e.set_track_uuid(30);
            e.set_type(track_event::Type::Instant);
            e.set_name("then");
        }),
    ])
}

fn compressed() -> Vec<u8> {
    let mut enc = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(&track_events()).expect("deflate");
    let z = enc.finish().expect("deflate");
    trace(&[packet(|p| {
        p.set_compressed_packets(&z);
    })])
}

fn sequence_loss() -> Vec<u8> {
    trace(&[
        packet(|p| {
            p.set_trusted_packet_sequence_id(3);
            p.set_sequence_flags(1);
            let mut td = p.begin_track_descriptor();
            td.set_uuid(40);
            td.set_name("lossy");
        }),
        packet(|p| {
            p.set_trusted_packet_sequence_id(3);
            p.set_previous_packet_dropped(1);
            p.set_timestamp(10);
            let mut e = p.begin_track_event();
            e.set_track_uuid(40);
            e.set_type(track_event::Type::SliceBegin);
            e.set_name("cut");
        }),
        packet(|p| {
            p.set_trusted_packet_sequence_id(3);
            p.set_timestamp(20);
            p.set_sequence_flags(2);
            let mut e = p.begin_track_event();
            e.set_track_uuid(40);
            e.set_type(track_event::Type::SliceBegin);
            e.set_name_iid(9);
        }),
        packet(|p| {
            let mut s = p.begin_trace_stats();
            s.add_writer_stats().set_sequence_id(3).set_buffer(0);
        }),
    ])
}

fn gzip_file() -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(&track_events()).expect("gzip");
    enc.finish().expect("gzip")
}

/// Every made seed, with a query that must answer a count above zero.
fn made() -> Vec<(&'static str, Vec<u8>, &'static str)> {
    vec![
        ("track-events", track_events(), "SELECT count(*) FROM slice"),
        (
            "processes",
            processes(),
            "SELECT count(*) FROM process WHERE pid = 100",
        ),
        ("cpu-info", cpu_info(), "SELECT count(*) FROM cpu"),
        ("ftrace", ftrace(), "SELECT count(*) FROM slice"),
        ("sys-stats", sys_stats(), "SELECT count(*) FROM counter"),
        (
            "clocks",
            clocks(),
            "SELECT count(*) FROM slice WHERE ts = 5600",
        ),
        ("compressed", compressed(), "SELECT count(*) FROM slice"),
        (
            "sequence-loss",
            sequence_loss(),
            "SELECT count(*) FROM stats WHERE value > 0",
        ),
        ("gzip-file", gzip_file(), "SELECT count(*) FROM slice"),
    ]
}

/// The `trace_file` target's recorded seeds, shared.
const SHARED: &[&str] = &[
    "demo-excerpt",
    "genuine-service-packets",
    "genuine-track-events",
];

#[test]
fn trace_processor_seeds_load_and_are_committed() {
    let seeds = Path::new(env!("CARGO_MANIFEST_DIR")).join("../seeds");
    let dir = seeds.join("trace_processor");
    let bless = std::env::var_os("ZEROTRACE_FUZZ_BLESS").is_some();
    let mut all: Vec<(String, Vec<u8>)> = Vec::new();
    for (name, bytes, query) in made() {
        let tp = TraceProcessor::from_reader(bytes.as_slice())
            .unwrap_or_else(|e| panic!("{name} does not load: {e}"));
        let r = tp
            .query(query)
            .unwrap_or_else(|e| panic!("{name}: {query}: {e}"));
        assert!(
            matches!(r.rows.as_slice(), [row] if matches!(row.as_slice(), [Value::Int(n)] if *n > 0)),
            "{name}: {query} answered {:?}",
            r.rows
        );
        all.push((name.to_owned(), bytes));
    }
    for name in SHARED {
        let path = seeds.join("trace_file").join(name);
        let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        TraceProcessor::from_bytes(&bytes).unwrap_or_else(|e| panic!("{name} does not load: {e}"));
        all.push((format!("trace-file-{name}"), bytes));
    }
    if bless {
        std::fs::create_dir_all(&dir).expect("the seed directory");
    }
    let mut names: Vec<String> = Vec::new();
    for (name, bytes) in &all {
        let path = dir.join(name);
        if bless {
            std::fs::write(&path, bytes).expect("write a seed");
        }
        let committed = std::fs::read(&path).unwrap_or_default();
        assert!(
            committed == *bytes,
            "{} is stale (ZEROTRACE_FUZZ_BLESS=1 rewrites it)",
            path.display()
        );
        zerotrace_fuzz_logic::trace_processor(bytes);
        names.push(name.clone());
    }
    // No seed is left that is not made here.
    let mut on_disk: Vec<String> = std::fs::read_dir(&dir)
        .expect("fuzz/seeds/trace_processor")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    on_disk.sort();
    names.sort();
    assert_eq!(
        on_disk, names,
        "fuzz/seeds/trace_processor holds other files"
    );
}

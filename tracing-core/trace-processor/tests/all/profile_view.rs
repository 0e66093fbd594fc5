//! The profile views' model built from the trace processor's storage
//! (`profile_view`, `storage/profile_facts.rs`): what the views print that
//! Perfetto's tables do not hold, on small traces written with the cli's
//! test writers (`linux.perf` sequences, heapprofd dumps), and that
//! gathering it leaves the tables and `stats` as upstream has them.

use crate::heap_support;
use crate::perf_support;

use heap_support::{HeapSeq, header, hf};
use perf_support::{Fr, PerfSeq, Trace, app};
use zerotrace_protos::protos::perf_sample::SampleSkipReason;
use zerotrace_trace_processor::profile_view::{Profile, Unresolved};
use zerotrace_trace_processor::{Loader, TraceProcessor, Value};

/// The trace loaded with the views' facts gathered, for SQL: its tables
/// and stats must be what a plain load gives.
fn tp_with_facts(bytes: &[u8]) -> TraceProcessor {
    let mut l = Loader::with_profile_facts();
    l.push(bytes).unwrap();
    TraceProcessor::from_storage(l.finish().unwrap()).unwrap()
}

fn stat(tp: &TraceProcessor, name: &str) -> i64 {
    let r = tp
        .query(&format!(
            "SELECT coalesce(sum(value), 0) FROM stats WHERE name = '{name}'"
        ))
        .expect("query");
    match r.rows.first().and_then(|r| r.first()) {
        Some(Value::Int(v)) => *v,
        _ => 0,
    }
}

#[test]
fn samples_keep_their_packet_sequence_and_why_a_callstack_did_not_resolve() {
    let mut t = Trace::default();
    let mut s = PerfSeq::new(7);
    s.start(&mut t, Some(1_000_000)); // packet 0
    s.sample(&mut t, 10, 1, 2, &[app("main", 1), app("leaf", 2)]); // packet 1
    s.raw_sample(&mut t, 20, |p| {
        p.set_pid(1).set_tid(2).set_callstack_iid(999);
    }); // packet 2
    s.raw_sample(&mut t, 30, |p| {
        p.set_pid(1)
            .set_sample_skipped_reason(SampleSkipReason::ProfilerSkipReadStage);
    }); // packet 3: a skip, no sample
    let p = Profile::from_trace(t.bytes()).unwrap();
    let got: Vec<(u64, u32, u64)> = p
        .samples()
        .iter()
        .map(|x| (x.packet, x.sequence, x.ts))
        .collect();
    assert_eq!(got, [(1, 7, 10), (2, 7, 20)]);
    assert_eq!(p.stack_names(&p.samples()[0]), ["main", "leaf"]);
    assert_eq!(p.samples()[1].unresolved, Some(Unresolved::Callstack(999)));
    let c = p.counts();
    assert_eq!((c.samples, c.unresolved), (2, 1));
    assert_eq!(c.skipped.get("PROFILER_SKIP_READ_STAGE"), Some(&1));
    assert_eq!(p.cpu_ns_per_sample(), Some(1_000_000));
    // A load for SQL alone keeps no copy of the samples.
    let mut plain = Loader::new();
    plain.push(t.bytes()).unwrap();
    let storage = plain.finish().unwrap();
    assert!(Profile::from_storage(&storage).samples().is_empty());
    // The tables and stats are upstream's: one failed lookup counted once.
    let tp = tp_with_facts(t.bytes());
    assert_eq!(stat(&tp, "stackprofile_invalid_callstack_id"), 1);
}

#[test]
fn hex_text_build_ids_of_module_symbols_name_the_raw_mapping() {
    let mut t = Trace::default();
    let mut s = PerfSeq::new(3);
    s.start(&mut t, None);
    let anon = Fr {
        name: None,
        path: "/bin/app",
        build_id: b"\x01\x02\x03\x04",
        rel_pc: 0x10,
    };
    s.sample(&mut t, 1, 1, 1, &[anon]);
    // As `zerotrace symbolize` writes it: the build id in hex text.
    t.module_symbols("/bin/app", b"01020304", &[(0x10, &["named_late"])]);
    let p = Profile::from_trace(t.bytes()).unwrap();
    assert_eq!(p.stack_names(&p.samples()[0]), ["named_late"]);
    let tp = tp_with_facts(t.bytes());
    assert_eq!(stat(&tp, "stackprofile_invalid_mapping_id"), 0);
}

#[test]
fn heap_dumps_as_written_gaps_summed_and_unfinished_dumps_counted_apart() {
    let mut t = Trace::default();
    let mut s = HeapSeq::new(4);
    s.dump(
        &mut t,
        &header(9, "libc.malloc", 100, 4096),
        &[(&[hf("main", 1), hf("grow", 2)], 8192, 4096, 2, 1)],
    );
    // Index 1 comes next; 4 means three packets were lost.
    t.packet(|p| {
        p.set_trusted_packet_sequence_id(4).set_timestamp(200);
        let mut pp = p.begin_profile_packet();
        {
            let mut d = pp.add_process_dumps();
            d.set_pid(9).set_timestamp(200).set_heap_name("libc.malloc");
            d.add_samples()
                .set_callstack_id(12345)
                .set_self_allocated(64)
                .set_alloc_count(1);
        }
        // Continued, and the trace ends: the dump never closes.
        pp.set_continued(true).set_index(5);
    });
    let bytes = t.bytes();
    let p = Profile::from_trace(bytes).unwrap();
    let dumps = p.heap_dumps();
    assert_eq!(dumps.len(), 2);
    assert_eq!(
        (dumps[0].ts, dumps[0].pid, dumps[0].unfinished),
        (100, 9, false)
    );
    assert_eq!(p.names_of(&dumps[0].samples[0].stack), ["main", "grow"]);
    assert_eq!(
        (dumps[0].samples[0].allocated, dumps[0].samples[0].freed),
        (8192, 4096),
        "running totals as written"
    );
    assert!(dumps[1].unfinished);
    assert_eq!(
        dumps[1].samples[0].unresolved,
        Some(Unresolved::Callstack(12345))
    );
    let c = p.heap_counts();
    assert_eq!((c.missing_packets, c.unfinished, c.unresolved), (3, 1, 1));
    // Upstream never resolves an unfinished dump: its failed lookup is not
    // a stat, and the gap is one `heapprofd_missing_packet`.
    let tp = tp_with_facts(bytes);
    assert_eq!(stat(&tp, "stackprofile_invalid_callstack_id"), 0);
    assert_eq!(stat(&tp, "heapprofd_missing_packet"), 1);
}

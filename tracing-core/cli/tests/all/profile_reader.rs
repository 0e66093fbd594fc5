//! The sample reader, folded stacks and pprof over synthetic `linux.perf`
//! traces written with the generated writers.

use crate::perf_support;
use crate::support::framed;

use std::io::Read as _;

use perf_support::{Fr, PerfSeq, Trace, app};
use zerotrace_protos::pprof::ProfileDecoder;
use zerotrace_protos::protos::perf_sample::SampleSkipReason;
use zerotrace_protos::protos::profiling::StackUnwindError;

use zerotrace_trace_processor::profile_view::*;

/// Every packet of `trace`, read by the trace processor.
fn profile_of(trace: &Trace) -> Profile {
    Profile::from_trace(trace.bytes()).unwrap()
}

fn names(p: &Profile) -> Vec<Vec<String>> {
    p.samples().iter().map(|s| p.stack_names(s)).collect()
}

#[test]
fn callstacks_resolve_root_first_with_names_or_mapping_offsets() {
    let mut t = Trace::default();
    let mut s = PerfSeq::new(7);
    s.start(&mut t, Some(1_000_000));
    let unnamed = Fr {
        name: None,
        path: "/usr/lib/libc.so.6",
        build_id: b"\xaa",
        rel_pc: 0x1f2,
    };
    s.sample(
        &mut t,
        100,
        10,
        11,
        &[app("main", 1), app("work", 2), unnamed],
    );
    s.sample(&mut t, 200, 10, 12, &[app("main", 1), app("work", 2)]);
    let p = profile_of(&t);
    assert_eq!(
        names(&p),
        [
            vec!["main", "work", "libc.so.6+0x1f2"],
            vec!["main", "work"]
        ]
    );
    let first = &p.samples()[0];
    assert_eq!(
        (first.ts, first.pid, first.tid, first.cpu),
        (100, 10, 11, Some(1))
    );
    assert_eq!(cpu_mode_name(first.cpu_mode), "MODE_USER");
    assert_eq!(first.sequence, 7);
    // The second sample reuses the interned frames: same indices.
    assert_eq!(p.samples()[1].stack[..], first.stack[..2]);
    let libc = p.frames()[first.stack[2]].mapping.unwrap();
    assert_eq!(p.mappings()[libc].path, "/usr/lib/libc.so.6");
    assert_eq!(p.counts().samples, 2);
    assert_eq!(p.counts().unresolved, 0);
    assert_eq!(p.cpu_ns_per_sample(), Some(1_000_000));
}

#[test]
fn module_symbols_after_the_samples_name_their_frames_inlined_expanded() {
    let mut t = Trace::default();
    let mut s = PerfSeq::new(3);
    s.start(&mut t, None);
    let anon = |pc| Fr {
        name: None,
        path: "/bin/app",
        build_id: b"\x01\x02\x03\x04",
        rel_pc: pc,
    };
    s.sample(&mut t, 1, 1, 1, &[anon(0x10), anon(0x20)]);
    // Symbols for another build of the same path do not apply.
    t.module_symbols("/bin/app", b"\x09", &[(0x10, &["wrong"])]);
    t.module_symbols(
        "/bin/app",
        b"\x01\x02\x03\x04",
        &[(0x10, &["main"]), (0x20, &["inlined_leaf", "caller"])],
    );
    let p = profile_of(&t);
    assert_eq!(names(&p), [vec!["main", "caller", "inlined_leaf"]]);
    let f = p.functions(p.samples()[0].stack[1]);
    assert_eq!(f[0].function_name, "inlined_leaf");
    assert_eq!((f[0].source_file.as_deref(), f[0].line), (Some("src.c"), 3));
    assert_eq!(p.cpu_ns_per_sample(), None, "sampled by frequency");
}

#[test]
fn packets_needing_state_are_dropped_until_a_clear() {
    let mut t = Trace::default();
    let mut s = PerfSeq::new(4);
    // No clear yet: dropped and counted.
    s.sample(&mut t, 1, 1, 1, &[app("early", 1)]);
    s.start(&mut t, None);
    s.sample(&mut t, 2, 1, 1, &[app("kept", 1)]);
    // A loss on the sequence invalidates its state until the next clear.
    t.packet(|p| {
        p.set_trusted_packet_sequence_id(4);
        p.set_previous_packet_dropped(1);
    });
    s.sample(&mut t, 3, 1, 1, &[app("after_loss", 2)]);
    s.start(&mut t, None);
    s.sample(&mut t, 4, 1, 1, &[app("after_clear", 3)]);
    let p = profile_of(&t);
    assert_eq!(names(&p), [vec!["kept"], vec!["after_clear"]]);
    assert_eq!(p.counts().packets_without_state, 2);
}

#[test]
fn a_clear_forgets_the_interned_ids() {
    let mut t = Trace::default();
    let mut s = PerfSeq::new(5);
    s.start(&mut t, None);
    s.sample(&mut t, 1, 1, 1, &[app("a", 1)]);
    // Cleared, then a sample naming an iid of before the clear.
    let mut fresh = PerfSeq::new(5);
    fresh.start(&mut t, None);
    s.raw_sample(&mut t, 2, |p| {
        p.set_pid(1).set_tid(1).set_callstack_iid(5);
    });
    let p = profile_of(&t);
    assert_eq!(p.counts().samples, 2);
    assert_eq!(p.counts().unresolved, 1);
    assert_eq!(p.samples()[1].unresolved, Some(Unresolved::Callstack(5)));
    assert!(p.samples()[1].stack.is_empty());
    assert_eq!(p.counts().unresolved_by_kind.get("callstack"), Some(&1));
}

#[test]
fn losses_skips_and_unwind_errors_are_counted_not_sampled() {
    let mut t = Trace::default();
    let mut s = PerfSeq::new(6);
    s.start(&mut t, None);
    s.raw_sample(&mut t, 1, |p| {
        p.set_cpu(0).set_kernel_records_lost(40);
    });
    s.raw_sample(&mut t, 2, |p| {
        p.set_cpu(1).set_kernel_records_lost(2);
    });
    for _ in 0..3 {
        s.raw_sample(&mut t, 3, |p| {
            p.set_pid(9)
                .set_sample_skipped_reason(SampleSkipReason::ProfilerSkipUnwindEnqueue);
        });
    }
    s.raw_sample(&mut t, 4, |p| {
        p.set_pid(9).set_sample_skipped_reason_raw(99);
    });
    s.sample(&mut t, 5, 9, 9, &[app("ok", 1)]);
    s.raw_sample(&mut t, 6, |p| {
        p.set_pid(9)
            .set_unwind_error(StackUnwindError::UnwindErrorMaxFramesExceeded)
            .set_callstack_iid(0xdead);
    });
    s.raw_sample(&mut t, 7, |p| {
        p.set_pid(9)
            .set_unwind_error(StackUnwindError::UnwindErrorNone);
    });
    let p = profile_of(&t);
    let c = p.counts();
    assert_eq!(c.kernel_records_lost, 42);
    assert_eq!(c.skipped.get("PROFILER_SKIP_UNWIND_ENQUEUE"), Some(&3));
    assert_eq!(c.skipped.get("SampleSkipReason(99)"), Some(&1));
    assert_eq!(
        c.samples, 3,
        "ok, the unwind error, the sample without callstack"
    );
    assert_eq!(c.without_callstack, 1);
    assert_eq!(c.unwind_errors.len(), 1, "{c:?}");
    assert_eq!(
        c.unwind_errors.get("UNWIND_ERROR_MAX_FRAMES_EXCEEDED"),
        Some(&1)
    );
    assert_eq!(c.unresolved, 1);
}

#[test]
fn ids_that_do_not_resolve_are_counted_by_kind() {
    use zerotrace_protos::protos::{Callstack, Frame};
    use zerotrace_protos::upstream_tables::{interned_data_field, packet_field};
    let mut t = Trace::default();
    let mut s = PerfSeq::new(8);
    s.start(&mut t, None);
    // Frame 1 names a missing mapping, frame 2 a missing function name;
    // callstack 10 a missing frame, 11 no frame at all.
    t.packet(|p| {
        p.set_trusted_packet_sequence_id(8);
        let mut i = p.message().begin_nested(packet_field::INTERNED_DATA);
        Frame::from_message(i.begin_nested(interned_data_field::FRAMES))
            .set_iid(1)
            .set_mapping_id(77);
        Frame::from_message(i.begin_nested(interned_data_field::FRAMES))
            .set_iid(2)
            .set_function_name_id(78);
        for (iid, frames) in [(10u64, &[1u64][..]), (11, &[]), (12, &[2]), (13, &[5])] {
            let mut c = Callstack::from_message(i.begin_nested(interned_data_field::CALLSTACKS));
            c.set_iid(iid);
            for f in frames {
                c.add_frame_ids(*f);
            }
        }
        // An entry without iid, and one that does not decode.
        Frame::from_message(i.begin_nested(interned_data_field::FRAMES)).set_rel_pc(1);
        i.append_bytes(interned_data_field::CALLSTACKS, &[0x08]);
    });
    for cs in [10, 11, 12, 13] {
        s.raw_sample(&mut t, 1, |p| {
            p.set_callstack_iid(cs);
        });
    }
    let p = profile_of(&t);
    let c = p.counts();
    assert_eq!(c.unresolved, 4);
    let kinds: Vec<(&str, u64)> = c.unresolved_by_kind.iter().map(|(k, n)| (*k, *n)).collect();
    assert_eq!(
        kinds,
        [
            ("empty callstack", 1),
            ("frame", 1),
            ("function name", 1),
            ("mapping", 1)
        ]
    );
    assert_eq!(c.malformed, 2);
}

#[test]
fn truncated_and_corrupted_traces_never_panic() {
    let mut t = Trace::default();
    let mut s = PerfSeq::new(9);
    s.start(&mut t, Some(10));
    s.sample(&mut t, 1, 1, 1, &[app("a", 1), app("b", 2)]);
    t.module_symbols("/bin/app", b"\x01\x02\x03\x04", &[(1, &["x"])]);
    let packets: Vec<Vec<u8>> = protozero::Decoder::new(t.bytes())
        .map(|f| f.unwrap().as_bytes().unwrap().to_vec())
        .collect();
    for p in &packets {
        for cut in 0..p.len() {
            let mut flipped = p.clone();
            flipped[cut] ^= 0xff;
            let mut all: Vec<&[u8]> = vec![&p[..cut]];
            all.extend(packets.iter().map(Vec::as_slice));
            all.push(&flipped);
            let prof = Profile::from_trace(&framed(&all)).unwrap();
            for s in prof.samples() {
                let _ = prof.stack_names(s);
            }
            let _ = encode_pprof(&prof, &Filter::default()).unwrap();
        }
    }
}

/// The three-stack profile the folded and pprof tests share.
fn three_stacks() -> Profile {
    let mut t = Trace::default();
    let mut s = PerfSeq::new(2);
    s.start(&mut t, Some(250_000));
    for ts in 0..5 {
        s.sample(&mut t, ts, 100, 101, &[app("main", 1), app("hot", 2)]);
    }
    for ts in 5..8 {
        s.sample(&mut t, ts, 100, 102, &[app("main", 1), app("cold", 3)]);
    }
    s.sample(&mut t, 8, 200, 200, &[app("other_main", 4)]);
    s.raw_sample(&mut t, 9, |p| {
        p.set_pid(100).set_tid(101).set_callstack_iid(999);
    });
    profile_of(&t)
}

#[test]
fn folded_stacks_count_samples_per_stack_and_filter() {
    let p = three_stacks();
    let all = folded(&p, &Filter::default());
    assert_eq!(all.lines(), ["main;cold 3", "main;hot 5", "other_main 1"]);
    assert_eq!(all.without_stack, 1);
    let pid = folded(
        &p,
        &Filter {
            pid: Some(100),
            ..Filter::default()
        },
    );
    assert_eq!(pid.lines(), ["main;cold 3", "main;hot 5"]);
    let tid = folded(
        &p,
        &Filter {
            tid: Some(102),
            ..Filter::default()
        },
    );
    assert_eq!(tid.lines(), ["main;cold 3"]);
    let window = folded(
        &p,
        &Filter {
            from: Some(3),
            to: Some(5),
            ..Filter::default()
        },
    );
    assert_eq!(window.lines(), ["main;cold 1", "main;hot 2"]);
    assert_eq!(window.samples(), 3);
}

#[test]
fn pprof_decodes_back_with_the_generated_decoders() {
    let p = three_stacks();
    let gz = encode_pprof(&p, &Filter::default()).unwrap();
    let mut raw = Vec::new();
    flate2::read::GzDecoder::new(&gz[..])
        .read_to_end(&mut raw)
        .unwrap();
    let d = ProfileDecoder::new(&raw);
    assert!(d.decode_error().is_none());
    let strings: Vec<&str> = d.string_table().collect();
    assert_eq!(strings[0], "");
    let s = |i: i64| strings[i as usize];
    let types: Vec<(&str, &str)> = d
        .sample_type()
        .map(|t| (s(t.r#type().unwrap()), s(t.unit().unwrap())))
        .collect();
    assert_eq!(types, [("samples", "count"), ("cpu", "nanoseconds")]);
    assert_eq!(d.period(), Some(250_000));
    assert_eq!(s(d.default_sample_type().unwrap()), "cpu");
    // Functions by id, locations by id (each with its lines' functions).
    let functions: std::collections::HashMap<u64, &str> = d
        .function()
        .map(|f| (f.id().unwrap(), s(f.name().unwrap())))
        .collect();
    let locations: std::collections::HashMap<u64, Vec<&str>> = d
        .location()
        .map(|l| {
            (
                l.id().unwrap(),
                l.line()
                    .map(|line| functions[&line.function_id().unwrap()])
                    .collect(),
            )
        })
        .collect();
    assert_eq!(locations.len(), 4, "main, hot, cold, other_main");
    let mappings: Vec<(String, String)> = d
        .mapping()
        .map(|m| {
            (
                s(m.filename().unwrap()).to_owned(),
                s(m.build_id().unwrap()).to_owned(),
            )
        })
        .collect();
    assert_eq!(mappings, [("/bin/app".to_owned(), "01020304".to_owned())]);
    let mut samples: Vec<(Vec<&str>, Vec<i64>)> = d
        .sample()
        .map(|smp| {
            let stack = smp
                .location_id()
                .flat_map(|id| locations[&id].clone())
                .collect();
            (stack, smp.value().collect())
        })
        .collect();
    samples.sort();
    assert_eq!(
        samples,
        [
            (vec!["cold", "main"], vec![3, 750_000]),
            (vec!["hot", "main"], vec![5, 1_250_000]),
            (vec!["other_main"], vec![1, 250_000]),
        ],
        "leaf first, the unresolved sample left out"
    );
}

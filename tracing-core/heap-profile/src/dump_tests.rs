use zerotrace_protos::protos::{InternedDataDecoder, TracePacketDecoder};

use zerotrace_profiling::BufferSink as VecSink;

use super::*;
use zerotrace_profiling::intern::{FrameDesc, MappingDesc};

fn frame(name: &str, pc: u64) -> FrameDesc {
    FrameDesc {
        mapping: MappingDesc {
            path: "/usr/bin/app".into(),
            build_id: vec![0xab; 20],
            start: 0x1000,
            end: 0x9000,
            ..MappingDesc::default()
        },
        rel_pc: pc,
        function: Some(name.into()),
    }
}

fn header() -> ProcessHeader {
    ProcessHeader {
        pid: 42,
        timestamp: 1000,
        heap_name: "libc.malloc".into(),
        sampling_interval_bytes: 4096,
        orig_sampling_interval_bytes: 4096,
        stats: DumpStats {
            heap_samples: 3,
            unwinding_time_us: vec![(Some(10), 2), (None, 1)],
            ..DumpStats::default()
        },
        ..ProcessHeader::default()
    }
}

/// (index, continued, samples, has interned data) of each profile packet.
fn shape(packets: &[Vec<u8>]) -> Vec<(u64, bool, usize, bool)> {
    packets
        .iter()
        .filter_map(|b| {
            let p = TracePacketDecoder::new(b);
            let pp = p.profile_packet()?;
            let samples = pp
                .process_dumps()
                .map(|d| d.samples().count())
                .sum::<usize>();
            Some((
                pp.index().unwrap(),
                pp.continued().unwrap_or(false),
                samples,
                p.interned_data().is_some(),
            ))
        })
        .collect()
}

#[test]
fn a_dump_is_samples_then_new_callstacks_then_an_empty_closing_packet() {
    let mut interner = Interner::new();
    let a = interner.callstack(&[frame("leaf", 0x10), frame("main", 0x20)]);
    let b = interner.callstack(&[frame("other", 0x30), frame("main", 0x20)]);
    let samples = [
        DumpSample {
            callstack_iid: a,
            allocated: 8192,
            freed: 4096,
            alloc_count: 2,
            free_count: 1,
            at_max: None,
        },
        DumpSample {
            callstack_iid: b,
            allocated: 4096,
            alloc_count: 1,
            ..DumpSample::default()
        },
    ];
    let mut sink = VecSink::default();
    let mut w = DumpWriter::new();
    w.dump(&mut sink, 5000, &header(), &samples, &mut interner);

    // The fixed internings first, clearing incremental state.
    let first = TracePacketDecoder::new(&sink.packets[0]);
    assert_eq!(first.sequence_flags(), Some(1));
    let fixed = first.interned_data().unwrap();
    assert_eq!(fixed.function_names().count(), 1);
    assert_eq!(
        shape(&sink.packets),
        [(0, true, 2, true), (1, false, 0, false)]
    );

    let p = TracePacketDecoder::new(&sink.packets[1]);
    assert_eq!(p.timestamp(), Some(5000));
    let d = p.profile_packet().unwrap().process_dumps().next().unwrap();
    assert_eq!(
        (
            d.pid(),
            d.heap_name(),
            d.sampling_interval_bytes(),
            d.timestamp()
        ),
        (Some(42), Some("libc.malloc"), Some(4096), Some(1000))
    );
    let stats = d.stats().unwrap();
    assert_eq!(stats.heap_samples(), Some(3));
    let buckets: Vec<_> = stats
        .unwinding_time_us()
        .unwrap()
        .buckets()
        .map(|b| (b.upper_limit(), b.max_bucket(), b.count()))
        .collect();
    assert_eq!(
        buckets,
        [(Some(10), None, Some(2)), (None, Some(true), Some(1))]
    );
    let s: Vec<_> = d
        .samples()
        .map(|s| {
            (
                s.callstack_id(),
                s.self_allocated(),
                s.self_freed(),
                s.alloc_count(),
                s.free_count(),
            )
        })
        .collect();
    assert_eq!(
        s,
        [
            (Some(a), Some(8192), Some(4096), Some(2), Some(1)),
            (Some(b), Some(4096), Some(0), Some(1), Some(0)),
        ]
    );
    let interned: InternedDataDecoder<'_> = p.interned_data().unwrap();
    assert_eq!(interned.callstacks().count(), 2);
    assert_eq!(interned.frames().count(), 3, "main is one frame");

    // A second dump: the same callstacks are not defined again, the index
    // counts on, and no fixed internings.
    let mut again = VecSink::default();
    w.dump(&mut again, 6000, &header(), &samples, &mut interner);
    assert_eq!(
        shape(&again.packets),
        [(2, true, 2, false), (3, false, 0, false)]
    );
    assert_eq!(again.packets.len(), 2);
}

#[test]
fn a_large_dump_is_split_under_the_threshold_and_each_part_continues() {
    let mut interner = Interner::new();
    let samples: Vec<DumpSample> = (0..40_000u64)
        .map(|i| {
            let iid = interner.callstack(&[frame(&format!("f{i}"), i), frame("main", 1)]);
            DumpSample {
                callstack_iid: iid,
                allocated: u64::MAX - i,
                freed: u64::MAX / 2,
                alloc_count: 1 << 40,
                free_count: 1 << 40,
                at_max: None,
            }
        })
        .collect();
    let mut sink = VecSink::default();
    DumpWriter::new().dump(&mut sink, 1, &header(), &samples, &mut interner);
    let s = shape(&sink.packets);
    assert!(s.len() >= 4, "{s:?}");
    let (closing, parts) = s.split_last().unwrap();
    assert_eq!(*closing, (s.len() as u64 - 1, false, 0, false));
    assert!(
        parts.iter().all(|p| p.1),
        "every part but the last continues"
    );
    assert_eq!(parts.iter().map(|p| p.2).sum::<usize>(), 40_000);
    for (i, p) in parts.iter().enumerate() {
        assert_eq!(p.0, i as u64);
    }
    for b in &sink.packets {
        assert!(b.len() < 500_000, "a packet of {} bytes", b.len());
    }
    // The definitions were split over several packets, none lost.
    let callstacks: usize = sink
        .packets
        .iter()
        .filter_map(|b| TracePacketDecoder::new(b).interned_data())
        .map(|d| d.callstacks().count())
        .sum();
    assert_eq!(callstacks, 40_000);
}

#[test]
fn dump_at_max_writes_self_max_instead_of_the_totals() {
    let mut interner = Interner::new();
    let a = interner.callstack(&[frame("leaf", 1)]);
    let mut sink = VecSink::default();
    DumpWriter::new().dump(
        &mut sink,
        1,
        &header(),
        &[DumpSample {
            callstack_iid: a,
            allocated: 10,
            freed: 5,
            alloc_count: 3,
            free_count: 1,
            at_max: Some(7),
        }],
        &mut interner,
    );
    let p = TracePacketDecoder::new(&sink.packets[1]);
    let d = p.profile_packet().unwrap().process_dumps().next().unwrap();
    let s = d.samples().next().unwrap();
    assert_eq!(
        (
            s.self_max(),
            s.self_allocated(),
            s.self_freed(),
            s.alloc_count()
        ),
        (Some(7), None, None, Some(3))
    );
}

#[test]
fn a_rejected_process_is_one_packet() {
    let mut sink = VecSink::default();
    DumpWriter::new().reject_concurrent(&mut sink, 9, 77);
    let p = TracePacketDecoder::new(&sink.packets[0]);
    let d = p.profile_packet().unwrap().process_dumps().next().unwrap();
    assert_eq!((d.pid(), d.rejected_concurrent()), (Some(77), Some(true)));
}

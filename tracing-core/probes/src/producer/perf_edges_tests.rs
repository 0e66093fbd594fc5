//! Issue 47, "the profilers at their edges", on `linux.perf`'s data
//! source without the kernel: kernel threads told by the callchain's
//! `PERF_CONTEXT_USER` marker where the kernel walks the user frames; the
//! memory guardrail weighing the instance, not a process whose other
//! memory (the service's trace buffers) it does not hold; and the stop
//! reading the buffers to the end though the drain's queue is full.

use super::*;
use crate::perf::abi::context;
use crate::perf::fake_buffer::fake_buffer;

/// A sample of `pid` in `UNWIND_KERNEL_FRAME_POINTER` mode (callchain,
/// no registers or stack) whose callchain is `chain`.
fn chain_sample(layout: &SampleLayout, pid: u32, misc: u16, chain: &[u64]) -> Vec<u8> {
    assert_eq!(layout.sample_type & sample::REGS_USER, 0);
    let mut b = Vec::new();
    b.extend(pid.to_ne_bytes());
    b.extend(pid.to_ne_bytes());
    b.extend(words(&[3_000, 1, 9]));
    b.extend(words(&[chain.len() as u64]));
    b.extend(words(chain));
    rec(record::SAMPLE, misc, &b)
}

fn kernel_fp(kernel_frames: bool) -> PerfOptions {
    config(|c| {
        c.begin_callstack_sampling()
            .set_kernel_frames(kernel_frames)
            .set_user_frames_raw(4);
    })
}

/// Upstream's `LooksLikeKernelThread` where the kernel walks the user
/// frames: no `PERF_CONTEXT_USER` marker in the callchain is a kernel
/// thread (out of scope without kernel frames, its command line not read;
/// with them, kernel frames only and the unwinder not asked); a marker,
/// even with no user frame after it, is a process with a user context.
#[test]
fn kernel_threads_are_told_by_the_user_context_marker() {
    let k = 0xffff_ffff_8100_0040;
    let root = fake_proc(&[(2, b""), (7, b"/bin/app\0")]);
    let (mut p, calls) = probe(kernel_fp(false), &root);
    let l = p.layout;
    let back = feed(
        &mut p,
        &[
            chain_sample(&l, 2, KERNEL, &[context::KERNEL, k]),
            chain_sample(&l, 7, KERNEL, &[context::KERNEL, k, context::USER]),
            chain_sample(&l, 7, USER, &[context::USER, 0x40_1000]),
        ],
    );
    let s0 = PerfSampleDecoder::new(back[0].sample.as_deref().unwrap());
    assert_eq!(
        s0.sample_skipped_reason(),
        Some(SampleSkipReason::ProfilerSkipNotInScope),
        "a kernel thread without kernel frames is out"
    );
    for b in &back[1..] {
        let s = PerfSampleDecoder::new(b.sample.as_deref().unwrap());
        assert_eq!(s.sample_skipped_reason(), None);
        assert!(s.callstack_iid().is_some());
    }
    assert_eq!(calls.lock().unwrap().unwound, [7, 7]);

    // With kernel frames: the kernel thread is in, the unwinder not asked.
    let (mut p, calls) = probe(kernel_fp(true), &root);
    let back = feed(
        &mut p,
        &[chain_sample(&l, 2, KERNEL, &[context::KERNEL, k])],
    );
    let s = PerfSampleDecoder::new(back[0].sample.as_deref().unwrap());
    assert_eq!((s.sample_skipped_reason(), s.unwind_error()), (None, None));
    assert!(s.callstack_iid().is_some());
    assert!(calls.lock().unwrap().unwound.is_empty());
}

/// `zerotraced --probes`: the service's trace buffers live in the
/// profiler's process. A buffer far past `max_daemon_memory_kb` that the
/// profiler does not hold does not stop it; what the instance itself
/// holds is what the guardrail weighs.
#[test]
fn the_guardrail_weighs_the_profiler_not_the_process() {
    const LIMIT_KB: u32 = 96 << 10;
    // Another component's memory in this process (a trace buffer),
    // written so that it is resident.
    let buffer = vec![0x5au8; 2 * (LIMIT_KB as usize) * 1024];
    let o = config(|c| {
        c.set_max_daemon_memory_kb(LIMIT_KB);
    });
    let root = fake_proc(&[]);
    let (mut p, _) = probe(o, &root);
    p.arm_timers(0);
    let mut sink = BufferSink::default();
    p.poll(1_000_000_000, &mut sink);
    std::hint::black_box(&buffer);
    assert!(!p.stopped, "stopped for memory it does not hold");
    assert!(sink.packets.is_empty());

    // The instance's own state counts: its interned entries.
    let before = p.footprint();
    let o = config(|c| {
        c.begin_callstack_sampling()
            .set_kernel_frames(true)
            .set_user_frames(UnwindMode::UnwindDwarf);
    });
    let (mut p, _) = probe(o, &root);
    let l = p.layout;
    let empty = p.footprint();
    feed(&mut p, &[sample_rec(&l, 5, KERNEL, &[1], true)]);
    let fed = p.footprint();
    assert!(fed.interned_entries > empty.interned_entries, "{fed:?}");
    assert!(fed.kb() < u64::from(LIMIT_KB), "{before:?} {fed:?}");
}

/// Samples the kernel wrote just before the stop are in the trace though
/// the drain's queue was full then: the stop reads the buffers to the end,
/// whatever the cap.
#[test]
fn the_stop_reads_every_buffer_to_the_end_though_the_queue_is_full() {
    let o = config(|c| {
        c.set_ring_buffer_read_period_ms(3_600_000);
    });
    let root = fake_proc(&[]);
    let (mut p, _) = probe(o, &root);
    let l = p.layout;
    let one = sample_rec(&l, 7, USER, &[1], false);
    let (buffer, kernel) = fake_buffer(0);
    p.events = vec![Box::new(buffer)];
    // Room for one sample: the thread queues one and waits.
    p.queue_cap = one.len() as u64;
    let mut sink = BufferSink::default();
    p.start(0, &mut sink);
    kernel.write(&one);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while p.drain.as_ref().unwrap().room_waits() == 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "the queue never filled"
        );
        std::thread::yield_now();
    }
    // Written just before the stop, while the queue is full.
    for n in 2..=5u64 {
        kernel.write(&sample_rec(&l, 7, USER, &[n], false));
    }
    let mut sink = BufferSink::default();
    p.stop(10, &mut sink);
    let counts: Vec<u64> = read_back(&sink.packets)
        .iter()
        .filter_map(|b| b.sample.as_deref())
        .filter_map(|s| PerfSampleDecoder::new(s).timebase_count())
        .collect();
    assert_eq!(counts, [1, 2, 3, 4, 5]);
    assert_eq!(kernel.pending(), 0, "the buffer ends empty");
    assert_eq!(p.stats.samples, 5);
}

/// `target_cpu` as upstream's `CreateCpuMask` takes it: narrowed to the
/// CPUs online; none left refuses the instance with the reason, before
/// any event is opened.
#[test]
fn target_cpus_that_are_not_online_are_dropped_and_none_left_refuses() {
    let root = fake_proc(&[]);
    let cpu = root.join("sys/devices/system/cpu");
    std::fs::create_dir_all(&cpu).unwrap();
    // This machine's CPU 0 is said to be offline.
    std::fs::write(cpu.join("online"), "1-3\n").unwrap();
    let ds = |targets: &[u32]| {
        let mut w = HeapWriter::new();
        {
            let mut m = w.root();
            m.append_string(
                zerotrace_protos::upstream_tables::data_source_field::NAME,
                NAME,
            );
            let mut c = PerfEventConfig::from_message(m.begin_nested(
                zerotrace_protos::upstream_tables::data_source_field::PERF_EVENT_CONFIG,
            ));
            for &t in targets {
                c.add_target_cpu(t);
            }
        }
        w.finish().unwrap()
    };
    let ctx = ProbeContext {
        root: ProcRoot::at(&*root),
        ..ProbeContext::system()
    };
    let err = PerfSource::system()
        .create(&ds(&[0, 4096 - 1]), &ctx)
        .err()
        .expect("no target CPU is online");
    let text = err.to_string();
    assert!(
        text.contains("target_cpu: none of [0, 4095] is an online CPU"),
        "{text}"
    );
    assert_eq!(sampled_cpus(&[0, 2, 9], &ctx).unwrap(), [2]);
    assert_eq!(sampled_cpus(&[], &ctx).unwrap(), [1, 2, 3]);
}

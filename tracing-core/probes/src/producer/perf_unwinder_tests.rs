//! `linux.perf` with a slow unwinder, driven without the kernel: a flush
//! is answered on the probes' thread without waiting on unwinding, the
//! samples come out unwound all the same, and a sample the unwinder's
//! queue has no room for is written as skipped and counted by the trace
//! processor's `stats`.
//!
//! The clock is fake and per thread: each unwind costs the thread that
//! runs it ten seconds of its own clock (no sleeping), so the time a flush
//! takes on the probes' thread is read off that thread's clock.

use std::cell::Cell;
use std::sync::mpsc;

use super::*;
use crate::perf::fake_buffer::fake_buffer;
use crate::producer::runtime::ANSWER_TIMEOUT;

thread_local! {
    /// The calling thread's fake clock, ns.
    static NOW: Cell<u64> = const { Cell::new(1_000) };
}

fn now() -> u64 {
    NOW.with(Cell::get)
}

/// What one unwind costs the thread that runs it.
const UNWIND_COST_NS: u64 = 10_000_000_000;

/// Unwinds each stack to one frame, costing [`UNWIND_COST_NS`] of its
/// thread's clock; with a gate, waits for the test's word before each.
struct SlowStacks {
    gate: Option<Mutex<mpsc::Receiver<()>>>,
}

impl UserStacks for SlowStacks {
    fn unwind(&mut self, _: &UserInput<'_>) -> (Vec<FrameDesc>, Option<StackUnwindError>) {
        if let Some(g) = &self.gate {
            let _ = g.lock().unwrap().recv();
        }
        NOW.with(|n| n.set(n.get() + UNWIND_COST_NS));
        let frame = FrameDesc {
            mapping: MappingDesc::default(),
            rel_pc: 0x10,
            function: Some("leaf".into()),
        };
        (vec![frame], None)
    }

    fn clear(&mut self) {}
}

/// A DWARF instance on one fake CPU buffer, read once an hour (only the
/// flush and the stop read it), clocked by [`now`], waking `woken`.
fn slow_probe(
    root: &std::path::Path,
    unwinder: SlowStacks,
    woken: mpsc::Sender<()>,
) -> (PerfProbe, crate::perf::fake_buffer::FakeKernel) {
    let o = config(|c| {
        c.set_ring_buffer_read_period_ms(3_600_000);
        c.begin_callstack_sampling()
            .set_user_frames(UnwindMode::UnwindDwarf);
    });
    let woken = Mutex::new(woken);
    let ctx = ProbeContext {
        root: ProcRoot::at(root),
        clock: Arc::new(now),
        wake: Arc::new(move || {
            let _ = woken.lock().unwrap().send(());
        }),
        ..ProbeContext::system()
    };
    let (buffer, kernel) = fake_buffer(0);
    let p = PerfProbe::new(o, vec![Box::new(buffer)], ctx, Box::new(unwinder), None);
    (p, kernel)
}

fn callstacks(sink: &BufferSink) -> usize {
    read_back(&sink.packets)
        .iter()
        .filter_map(|b| b.sample.as_deref())
        .filter(|s| PerfSampleDecoder::new(s).callstack_iid().is_some())
        .count()
}

/// The driver's flush reads the buffers and answers at once, though each
/// sample takes ten seconds to unwind: the unwinding is on the unwinder's
/// thread, whose clock pays for it. The samples are written unwound at
/// the polls that follow, woken by the unwinder.
#[test]
fn a_slow_unwinder_does_not_hold_up_a_flush() {
    let root = fake_proc(&[]);
    let (woken, wakes) = mpsc::channel();
    let (mut p, kernel) = slow_probe(&root, SlowStacks { gate: None }, woken);
    let l = p.layout;
    let mut sink = BufferSink::default();
    p.start(now(), &mut sink);
    let n = 5;
    for pid in 0..n {
        kernel.write(&sample_rec(&l, 100 + pid, USER, &[1], false));
    }
    let before = now();
    p.flush(before, &mut sink);
    let spent = now() - before;
    assert!(
        u128::from(spent) < ANSWER_TIMEOUT.as_nanos(),
        "the flush took {} s of the probes' thread",
        spent / 1_000_000_000
    );
    // The unwinder's thread says when it has samples for the driver.
    while callstacks(&sink) < n as usize {
        wakes
            .recv_timeout(std::time::Duration::from_secs(60))
            .expect("the unwinder wakes the driver");
        if p.next_deadline().is_some_and(|d| d <= now()) {
            p.poll(now(), &mut sink);
        }
    }
    assert_eq!(now(), before, "the driver unwound nothing itself");
    p.stop(now(), &mut sink);
    assert_eq!(p.stats.samples, u64::from(n));
    assert_eq!(p.stats.skipped, 0);
}

/// The trace as the service would hand it over: each packet on one
/// trusted sequence.
fn trace_of(sink: &BufferSink) -> Vec<u8> {
    let mut trace = Vec::new();
    for p in &sink.packets {
        let mut w = HeapWriter::new();
        {
            let mut m = w.root();
            m.append_bytes(1, &[p.as_slice(), &[(10 << 3) as u8, 1]].concat());
        }
        trace.extend(w.finish().unwrap());
    }
    trace
}

/// The unwinder's queue holds two samples (queued, being unwound, or
/// unwound and not yet written): the three more samples read are written as skipped for want of room
/// (`UNWIND_ENQUEUE`), counted by the instance, and the trace processor
/// counts them in `perf_samples_skipped`; the two queued are unwound.
#[test]
fn a_full_unwind_queue_is_a_stat_in_the_trace_processor() {
    let root = fake_proc(&[]);
    let (woken, _wakes) = mpsc::channel();
    let (go, gate) = mpsc::channel();
    let slow = SlowStacks {
        gate: Some(Mutex::new(gate)),
    };
    let (mut p, kernel) = slow_probe(&root, slow, woken);
    p.unwind_capacity = 2;
    let l = p.layout;
    let mut sink = BufferSink::default();
    p.start(now(), &mut sink);
    // Two unwinds may go (a third finds the gate gone and goes too); the
    // two queued samples hold their places until the driver takes them.
    go.send(()).unwrap();
    go.send(()).unwrap();
    drop(go);
    for pid in 0..5 {
        kernel.write(&sample_rec(&l, 100 + pid, USER, &[1], false));
    }
    p.flush(now(), &mut sink);
    assert_eq!(p.stats.unwind_queue_full, 3);
    p.stop(now(), &mut sink);
    assert_eq!((p.stats.samples, p.stats.skipped), (2, 3));
    assert_eq!(callstacks(&sink), 2);

    let tp = zerotrace_trace_processor::TraceProcessor::from_bytes(&trace_of(&sink)).unwrap();
    let r = tp
        .query("SELECT value FROM stats WHERE name = 'perf_samples_skipped'")
        .unwrap();
    assert_eq!(r.rows, [[zerotrace_trace_processor::Value::Int(3)]]);
}

//! `linux.perf`'s data source driven without the kernel: fabricated ring
//! buffer records handed to an instance with no events, a fake unwinder
//! that says what it was asked, a fake `/proc` for command lines, an
//! injected memory reading and a fake clock; the packets read back.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use protozero::{Decoder, HeapWriter};

use super::*;
use crate::perf::abi::{record, regs_abi, sample};
use crate::perf::intern::MappingDesc;
use crate::procfs::ProcRoot;
use crate::producer::BufferSink;
use zerotrace_protos::protos::perf_event_config::UnwindMode;
use zerotrace_protos::protos::perf_events::Counter;
use zerotrace_protos::protos::perf_sample::ProducerEventDecoder;
use zerotrace_protos::protos::perf_sample::producer_event::DataSourceStopReason;
use zerotrace_protos::protos::profiling::StackUnwindError;
use zerotrace_protos::protos::{PerfEventConfig, PerfSampleDecoder, PerfSampleDefaultsDecoder};
use zerotrace_protos::upstream_tables::{packet_defaults_field, packet_field};

/// What the fake unwinder was asked.
#[derive(Debug, Default)]
struct Calls {
    unwound: Vec<u32>,
    clears: u32,
    forgotten: Vec<u32>,
}

/// Unwinds every stack to one frame, and keeps what it was asked.
struct FakeStacks(Arc<Mutex<Calls>>);

impl UserStacks for FakeStacks {
    fn unwind(&mut self, input: &UserInput<'_>) -> (Vec<FrameDesc>, Option<StackUnwindError>) {
        self.0.lock().unwrap().unwound.push(input.pid);
        let frame = FrameDesc {
            mapping: MappingDesc::default(),
            rel_pc: 0x10,
            function: Some("leaf".into()),
        };
        (vec![frame], None)
    }

    fn clear(&mut self) {
        self.0.lock().unwrap().clears += 1;
    }

    fn forget(&mut self, pid: u32) {
        self.0.lock().unwrap().forgotten.push(pid);
    }
}

fn config(f: impl FnOnce(&mut PerfEventConfig<'_>)) -> PerfOptions {
    let mut w = HeapWriter::new();
    {
        let mut c = PerfEventConfig::from_message(w.root());
        f(&mut c);
    }
    PerfOptions::from_config(&w.finish().unwrap()).unwrap()
}

/// A fake `/proc` holding each `(pid, cmdline)`, removed when dropped.
struct FakeProc(std::path::PathBuf);

impl Drop for FakeProc {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

impl std::ops::Deref for FakeProc {
    type Target = std::path::Path;
    fn deref(&self) -> &std::path::Path {
        &self.0
    }
}

fn fake_proc(cmdlines: &[(u32, &[u8])]) -> FakeProc {
    static N: AtomicU64 = AtomicU64::new(0);
    let dir = std::env::temp_dir().join(format!(
        "zerotrace-perf-tests-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    for (pid, c) in cmdlines {
        let p = dir.join(format!("proc/{pid}"));
        std::fs::create_dir_all(&p).unwrap();
        std::fs::write(p.join("cmdline"), c).unwrap();
    }
    std::fs::create_dir_all(&dir).unwrap();
    FakeProc(dir)
}

fn probe(options: PerfOptions, root: &std::path::Path) -> (PerfProbe, Arc<Mutex<Calls>>) {
    let calls = Arc::new(Mutex::new(Calls::default()));
    let ctx = ProbeContext {
        root: ProcRoot::at(root),
        ..ProbeContext::system()
    };
    let sharding = options
        .callstacks
        .as_ref()
        .map(|c| c.scope.process_shard_count)
        .filter(|&n| n > 0)
        .map(|count| ProcessSharding { count, chosen: 1 });
    let p = PerfProbe::new(
        options,
        Vec::new(),
        ctx,
        Box::new(FakeStacks(calls.clone())),
        sharding,
    );
    (p, calls)
}

fn rec(kind: u32, misc: u16, body: &[u8]) -> Vec<u8> {
    let mut v = Vec::new();
    v.extend(kind.to_ne_bytes());
    v.extend(misc.to_ne_bytes());
    v.extend(u16::try_from(8 + body.len()).unwrap().to_ne_bytes());
    v.extend(body);
    v
}

fn words(w: &[u64]) -> Vec<u8> {
    w.iter().flat_map(|x| x.to_ne_bytes()).collect()
}

/// `PERF_RECORD_MISC_USER` / `_KERNEL`.
const USER: u16 = 2;
const KERNEL: u16 = 1;

/// A sample record of `pid` for `layout`: counts `counts` (timebase
/// first); user registers unless `kthread`; a 16-byte stack copy.
fn sample_rec(
    layout: &SampleLayout,
    pid: u32,
    misc: u16,
    counts: &[u64],
    kthread: bool,
) -> Vec<u8> {
    let t = layout.sample_type;
    let mut b = Vec::new();
    b.extend(pid.to_ne_bytes());
    b.extend((pid + 1).to_ne_bytes());
    b.extend(words(&[1_000 + u64::from(pid)]));
    b.extend(words(&[counts.len() as u64]));
    b.extend(words(counts));
    if t & sample::CALLCHAIN != 0 {
        b.extend(words(&[
            2,
            crate::perf::abi::context::KERNEL,
            0xffff_ffff_8100_0000,
        ]));
    }
    if t & sample::REGS_USER != 0 {
        if kthread {
            b.extend(words(&[regs_abi::NONE]));
        } else {
            b.extend(words(&[regs_abi::ABI_64, 0xb0, 0x5000, 0x1234]));
        }
    }
    if t & sample::STACK_USER != 0 {
        if kthread {
            b.extend(words(&[0]));
        } else {
            b.extend(words(&[16, 1, 2, 16]));
        }
    }
    rec(record::SAMPLE, misc, &b)
}

/// A packet read back: its top-level numbers and its `perf_sample`.
#[derive(Debug, Default)]
struct Back {
    ts: Option<u64>,
    clock_id: Option<u64>,
    flags: Option<u64>,
    sample: Option<Vec<u8>>,
}

fn read_back(packets: &[Vec<u8>]) -> Vec<Back> {
    packets
        .iter()
        .map(|p| {
            let mut b = Back::default();
            for f in Decoder::new(p) {
                let f = f.unwrap();
                match f.id {
                    packet_field::TIMESTAMP => b.ts = f.as_u64().ok(),
                    packet_field::TIMESTAMP_CLOCK_ID => b.clock_id = f.as_u64().ok(),
                    packet_field::SEQUENCE_FLAGS => b.flags = f.as_u64().ok(),
                    packet_field::PERF_SAMPLE => b.sample = Some(f.as_bytes().unwrap().to_vec()),
                    _ => {}
                }
            }
            b
        })
        .collect()
}

/// The bytes of message field `id` of `msg`.
fn field(msg: &[u8], id: u32) -> &[u8] {
    Decoder::new(msg)
        .filter_map(Result::ok)
        .find(|f| f.id == id)
        .and_then(|f| f.as_bytes().ok())
        .unwrap()
}

fn feed(p: &mut PerfProbe, records: &[Vec<u8>]) -> Vec<Back> {
    let bytes: Vec<u8> = records.concat();
    let mut sink = BufferSink::default();
    p.handle_bytes(0, &bytes, &mut sink, 5_000, &mut 0);
    read_back(&sink.packets)
}

fn dwarf_with_scope(
    f: impl FnOnce(&mut zerotrace_protos::protos::perf_event_config::Scope<'_>),
) -> PerfOptions {
    config(|c| {
        c.add_followers().set_counter(Counter::SwPageFaults);
        let mut cs = c.begin_callstack_sampling();
        cs.set_user_frames(UnwindMode::UnwindDwarf);
        f(&mut cs.begin_scope());
    })
}

/// Upstream stamps its own packets (losses, the guardrail stop) with the
/// boot clock and says so, whatever clock the samples are in.
#[test]
fn losses_and_the_guardrail_stop_say_they_are_on_the_boot_clock() {
    let o = config(|c| {
        c.begin_timebase()
            .set_frequency(10)
            .set_timestamp_clock(zerotrace_protos::protos::perf_events::PerfClock::MonotonicRaw);
        c.set_max_daemon_memory_kb(100);
    });
    let root = fake_proc(&[]);
    let (mut p, _) = probe(o, &root);
    let mut sink = BufferSink::default();
    p.write_defaults(&mut sink);
    let lost = rec(record::LOST, 0, &words(&[1, 42]));
    p.handle_bytes(3, &lost, &mut sink, 7_000, &mut 0);
    let back = read_back(&sink.packets);
    assert_eq!(back.len(), 3, "the defaults, the fixed strings, the loss");
    let l = &back[2];
    assert_eq!((l.ts, l.clock_id, l.flags), (Some(7_000), Some(6), Some(2)));
    let s = PerfSampleDecoder::new(l.sample.as_deref().unwrap());
    assert_eq!((s.cpu(), s.kernel_records_lost()), (Some(3), Some(42)));

    // The guardrail, with the memory reading injected: checked once a
    // second from the start, past the limit it stops the source.
    static READS: AtomicU64 = AtomicU64::new(0);
    fn over(_: &Footprint) -> Option<u64> {
        READS.fetch_add(1, Ordering::Relaxed);
        Some(101)
    }
    p.memory = over;
    p.arm_timers(0);
    let mut sink = BufferSink::default();
    p.poll(500_000_000, &mut sink);
    assert_eq!(READS.load(Ordering::Relaxed), 0, "not due before a second");
    assert!(sink.packets.is_empty());
    p.poll(1_000_000_000, &mut sink);
    assert_eq!(READS.load(Ordering::Relaxed), 1);
    let back = read_back(&sink.packets);
    assert_eq!(back.len(), 1, "the stop packet alone");
    let g = &back[0];
    assert_eq!(
        (g.ts, g.clock_id, g.flags),
        (Some(1_000_000_000), Some(6), Some(2))
    );
    let s = PerfSampleDecoder::new(g.sample.as_deref().unwrap());
    let ev = ProducerEventDecoder::new(s.producer_event_bytes().unwrap());
    assert_eq!(
        ev.source_stop_reason(),
        Some(DataSourceStopReason::ProfilerStopGuardrail)
    );
    // Stopped: nothing more.
    p.poll(3_000_000_000, &mut sink);
    assert_eq!(sink.packets.len(), 1);
    assert_eq!(p.next_deadline(), None);
}

#[test]
fn under_the_memory_limit_the_source_goes_on() {
    let o = config(|c| {
        c.set_max_daemon_memory_kb(100);
    });
    let root = fake_proc(&[]);
    let (mut p, _) = probe(o, &root);
    p.memory = |_| Some(100);
    p.arm_timers(0);
    let mut sink = BufferSink::default();
    p.poll(1_000_000_000, &mut sink);
    assert!(sink.packets.is_empty());
    assert!(!p.stopped);
}

/// Upstream's "rejected" path: every sample of a process out of scope is
/// written, skipped as not in scope, with its counts.
#[test]
fn out_of_scope_samples_are_written_as_skipped_with_their_counts() {
    let root = fake_proc(&[(7, b"/bin/app\0"), (9, b"/bin/other\0")]);
    let (mut p, calls) = probe(
        dwarf_with_scope(|s| {
            s.add_target_cmdline("app");
        }),
        &root,
    );
    let l = p.layout;
    let back = feed(
        &mut p,
        &[
            sample_rec(&l, 7, USER, &[100, 3], false),
            sample_rec(&l, 9, USER, &[200, 4], false),
            sample_rec(&l, 9, USER, &[300, 5], false),
        ],
    );
    assert_eq!(back.len(), 3);
    let s0 = PerfSampleDecoder::new(back[0].sample.as_deref().unwrap());
    assert!(s0.callstack_iid().is_some());
    assert_eq!(s0.sample_skipped_reason(), None);
    for (b, (tb, f)) in back[1..].iter().zip([(200, 4), (300, 5)]) {
        let s = PerfSampleDecoder::new(b.sample.as_deref().unwrap());
        assert_eq!(
            s.sample_skipped_reason(),
            Some(SampleSkipReason::ProfilerSkipNotInScope)
        );
        assert_eq!((s.pid(), s.tid(), s.cpu()), (Some(9), Some(10), Some(0)));
        assert_eq!(s.timebase_count(), Some(tb));
        assert_eq!(s.follower_counts().collect::<Vec<_>>(), [f]);
        assert_eq!(s.callstack_iid(), None);
        assert_eq!(b.flags, Some(2));
        assert_eq!(b.ts, Some(1_009));
    }
    assert_eq!(calls.lock().unwrap().unwound, [7]);
    assert_eq!(p.stats.skipped, 2);
}

/// A kernel thread (no user registers) with no kernel frames recorded is
/// out, its command line not read.
#[test]
fn kernel_threads_are_out_without_kernel_frames() {
    let root = fake_proc(&[(2, b"")]);
    let (mut p, calls) = probe(dwarf_with_scope(|_| {}), &root);
    let l = p.layout;
    let back = feed(&mut p, &[sample_rec(&l, 2, KERNEL, &[1, 1], true)]);
    let s = PerfSampleDecoder::new(back[0].sample.as_deref().unwrap());
    assert_eq!(
        s.sample_skipped_reason(),
        Some(SampleSkipReason::ProfilerSkipNotInScope)
    );
    assert!(calls.lock().unwrap().unwound.is_empty());
}

/// `additional_cmdline_count`: the first N distinct command lines, read
/// from `/proc`; a process whose command line cannot be read is not one.
#[test]
fn additional_command_lines_are_distinct_and_must_be_readable() {
    let root = fake_proc(&[
        (10, b"/bin/a\0x\0"),
        (11, b"/bin/a\0x\0"),
        (12, b"/bin/a\0y\0"),
    ]);
    let (mut p, calls) = probe(
        dwarf_with_scope(|s| {
            s.set_additional_cmdline_count(1);
        }),
        &root,
    );
    let l = p.layout;
    let back = feed(
        &mut p,
        &[10, 13, 11, 12].map(|pid| sample_rec(&l, pid, USER, &[1, 1], false)),
    );
    let skipped: Vec<bool> = back
        .iter()
        .map(|b| {
            PerfSampleDecoder::new(b.sample.as_deref().unwrap())
                .sample_skipped_reason()
                .is_some()
        })
        .collect();
    // 13 has no /proc entry; 11 shares 10's command line; 12's differs.
    assert_eq!(skipped, [false, true, false, true]);
    assert_eq!(calls.lock().unwrap().unwound, [10, 11]);
}

/// The chosen shard is written in the defaults and decides the processes
/// the lists do not name.
#[test]
fn the_shard_is_in_the_defaults_and_decides() {
    let root = fake_proc(&[]);
    let (mut p, _) = probe(
        dwarf_with_scope(|s| {
            s.set_process_shard_count(2);
        }),
        &root,
    );
    let mut sink = BufferSink::default();
    p.write_defaults(&mut sink);
    let l = p.layout;
    let back = feed(
        &mut p,
        &[
            sample_rec(&l, 5, USER, &[1, 1], false),
            sample_rec(&l, 6, USER, &[1, 1], false),
        ],
    );
    let skipped: Vec<bool> = back
        .iter()
        .map(|b| {
            PerfSampleDecoder::new(b.sample.as_deref().unwrap())
                .sample_skipped_reason()
                .is_some()
        })
        .collect();
    assert_eq!(skipped, [false, true], "shard 1 of 2: odd pids");
    let ps = PerfSampleDefaultsDecoder::new(field(
        field(&sink.packets[0], packet_field::TRACE_PACKET_DEFAULTS),
        packet_defaults_field::PERF_SAMPLE_DEFAULTS,
    ));
    assert_eq!(
        (ps.process_shard_count(), ps.chosen_process_shard()),
        (Some(2), Some(1))
    );
}

/// Instances of one tracing session share one shard choice.
#[test]
fn a_session_shares_its_shard() {
    let src = PerfSource::system();
    let ctx = ProbeContext::system();
    let (a, _ta) = src.session_shard(Some(7), 1000, &ctx);
    let (b, _tb) = src.session_shard(Some(7), 1000, &ctx);
    assert_eq!(a, b);
    assert!(a.chosen < 1000);
    // Another count in the same session: the session's wins.
    let (c, _tc) = src.session_shard(Some(7), 3, &ctx);
    assert_eq!(c, a);
    // Once no instance of it is left, a session chooses afresh (the
    // count shows it).
    drop((_ta, _tb, _tc));
    let (d, _td) = src.session_shard(Some(7), 3, &ctx);
    assert_eq!(d.count, 3);
}

/// A kernel-frames-only config writes a user-mode sample with its counts
/// alone (no callstack, nothing to unwind).
#[test]
fn a_kernel_only_config_writes_user_mode_samples_as_counts() {
    let o = config(|c| {
        let mut cs = c.begin_callstack_sampling();
        cs.set_kernel_frames(true)
            .set_user_frames(UnwindMode::UnwindSkip);
    });
    let root = fake_proc(&[(7, b"/bin/app\0")]);
    let (mut p, calls) = probe(o, &root);
    let l = p.layout;
    let back = feed(
        &mut p,
        &[
            sample_rec(&l, 7, USER, &[9], false),
            sample_rec(&l, 7, KERNEL, &[10], false),
        ],
    );
    let s0 = PerfSampleDecoder::new(back[0].sample.as_deref().unwrap());
    assert_eq!(
        (s0.pid(), s0.timebase_count(), s0.callstack_iid()),
        (Some(7), Some(9), None)
    );
    let s1 = PerfSampleDecoder::new(back[1].sample.as_deref().unwrap());
    assert!(s1.callstack_iid().is_some());
    assert!(calls.lock().unwrap().unwound.len() <= 1);
}

/// `max_enqueued_footprint_kb`: a sample whose stack copy would bring
/// the stack bytes taken for unwinding in one pass to the limit is written
/// skipped (`UNWIND_ENQUEUE`) with its counts, as upstream's; samples out
/// of scope take nothing of it.
#[test]
fn samples_past_the_enqueued_footprint_are_skipped_with_counts() {
    let o = config(|c| {
        c.set_max_enqueued_footprint_kb(1);
        c.begin_callstack_sampling()
            .begin_scope()
            .add_exclude_pid(8);
    });
    let root = fake_proc(&[]);
    let (mut p, calls) = probe(o, &root);
    let l = p.layout;
    // Each sample copies 16 stack bytes: 63 of them stay under 1024.
    let n = 70;
    let mut recs = vec![sample_rec(&l, 8, USER, &[1], false); 10];
    recs.extend(vec![sample_rec(&l, 7, USER, &[5], false); n]);
    let back = feed(&mut p, &recs);
    let reasons: Vec<Option<SampleSkipReason>> = back[10..]
        .iter()
        .map(|b| PerfSampleDecoder::new(b.sample.as_deref().unwrap()).sample_skipped_reason())
        .collect();
    let kept = reasons.iter().filter(|r| r.is_none()).count();
    assert_eq!(kept, 1023 / 16);
    assert!(
        reasons[kept..]
            .iter()
            .all(|r| *r == Some(SampleSkipReason::ProfilerSkipUnwindEnqueue))
    );
    let last = PerfSampleDecoder::new(back[10 + n - 1].sample.as_deref().unwrap());
    assert_eq!(last.timebase_count(), Some(5));
    assert_eq!(calls.lock().unwrap().unwound.len(), kept);
}

/// `unwind_state_clear_period_ms`: the unwinder's state is dropped every
/// period (upstream's default, five minutes, when the config says none).
#[test]
fn the_unwinder_is_cleared_every_period() {
    let root = fake_proc(&[]);
    let (mut p, calls) = probe(dwarf_with_scope(|_| {}), &root);
    assert_eq!(p.options.unwind_state_clear_period_ms, 300_000);
    p.arm_timers(0);
    let mut sink = BufferSink::default();
    p.poll(299_999_999_999, &mut sink);
    assert_eq!(calls.lock().unwrap().clears, 0);
    p.poll(300_000_000_000, &mut sink);
    assert_eq!(calls.lock().unwrap().clears, 1);
    p.poll(600_000_000_000, &mut sink);
    assert_eq!(calls.lock().unwrap().clears, 2);
    let o = config(|c| {
        c.set_unwind_state_clear_period_ms(50);
        c.begin_callstack_sampling();
    });
    let (mut p, calls) = probe(o, &root);
    p.arm_timers(0);
    p.poll(50_000_000, &mut sink);
    assert_eq!(calls.lock().unwrap().clears, 1);
}

/// `ring_buffer_read_period_ms`: without the drain thread the buffers are
/// read every period.
#[test]
fn the_read_period_sets_the_next_read() {
    let o = config(|c| {
        c.set_ring_buffer_read_period_ms(40);
    });
    let root = fake_proc(&[]);
    let (mut p, _) = probe(o, &root);
    p.arm_timers(0);
    assert_eq!(p.next_deadline(), Some(40_000_000));
    let mut sink = BufferSink::default();
    p.poll(40_000_000, &mut sink);
    assert_eq!(p.next_deadline(), Some(80_000_000));
}

/// An exec drops the process's unwinding state (and an exit); its next
/// sample is unwound from a fresh state.
/// The sequence's first packets as traced_perf writes them: the defaults
/// stamped on the boot clock (saying so), the incremental state cleared,
/// the events described as the kernel was asked for them (the default
/// timebase spelled out; a tracepoint's name as configured and its filter,
/// empty if none; a raw event's four numbers; names; the counted levels
/// when not all); then the fixed interned strings.
#[test]
fn the_defaults_describe_the_events_as_upstream_does() {
    let root = fake_proc(&[]);
    let (p, _) = probe(config(|_| {}), &root);
    let mut sink = BufferSink::default();
    p.write_defaults(&mut sink);
    assert_eq!(sink.packets.len(), 2);
    let ids: Vec<u32> = Decoder::new(&sink.packets[0])
        .filter_map(Result::ok)
        .map(|f| f.id)
        .collect();
    assert_eq!(
        ids,
        [
            packet_field::TIMESTAMP,
            packet_field::TIMESTAMP_CLOCK_ID,
            packet_field::SEQUENCE_FLAGS,
            packet_field::TRACE_PACKET_DEFAULTS
        ]
    );
    let back = read_back(&sink.packets);
    assert_eq!((back[0].clock_id, back[0].flags), (Some(6), Some(1)));
    assert_eq!((back[1].ts, back[1].flags), (None, Some(2)));
    let defaults = field(&sink.packets[0], packet_field::TRACE_PACKET_DEFAULTS);
    let perf = field(defaults, packet_defaults_field::PERF_SAMPLE_DEFAULTS);
    // timebase { frequency: 10 counter: SW_CPU_CLOCK }
    assert_eq!(field(perf, 1), [0x10, 10, 0x20, 1]);

    let o = config(|c| {
        {
            let mut tb = c.begin_timebase();
            tb.set_period(1).set_name("switches");
            tb.begin_tracepoint().set_name("sched:sched_switch");
            tb.message().append_varint(12, 1);
        }
        c.add_followers()
            .begin_raw_event()
            .set_type(4)
            .set_config(0xc0);
    });
    let (p, _) = probe(o, &root);
    let mut sink = BufferSink::default();
    p.write_defaults(&mut sink);
    let defaults = field(&sink.packets[0], packet_field::TRACE_PACKET_DEFAULTS);
    let perf = field(defaults, packet_defaults_field::PERF_SAMPLE_DEFAULTS);
    let mut tb = HeapWriter::new();
    {
        let mut m = tb.root();
        m.append_varint(1, 1);
        {
            let mut t = m.begin_nested(3);
            t.append_string(1, "sched:sched_switch");
            t.append_string(2, "");
        }
        m.append_string(10, "switches");
        m.append_varint(12, 1);
    }
    assert_eq!(field(perf, 1), tb.finish().unwrap());
    let mut fe = HeapWriter::new();
    {
        let mut m = fe.root();
        let mut r = m.begin_nested(3);
        r.append_varint(1, 4);
        r.append_varint(2, 0xc0);
        r.append_varint(3, 0);
        r.append_varint(4, 0);
    }
    assert_eq!(field(perf, 4), fe.finish().unwrap());
}

/// Without callstacks a sample is its counts, written in upstream's order
/// for such samples (cpu, counts, then pid, tid, cpu mode); an unwound
/// one says who it was first.
#[test]
fn counts_only_samples_keep_upstreams_field_order() {
    let root = fake_proc(&[]);
    let o = config(|c| {
        c.add_followers().set_counter(Counter::SwPageFaults);
    });
    let (mut p, _) = probe(o, &root);
    let l = p.layout;
    let back = feed(&mut p, &[sample_rec(&l, 7, USER, &[3, 4], false)]);
    let ids: Vec<u32> = Decoder::new(back[0].sample.as_deref().unwrap())
        .filter_map(Result::ok)
        .map(|f| f.id)
        .collect();
    assert_eq!(ids, [1, 6, 7, 2, 3, 5]);
    let (mut p, _) = probe(dwarf_with_scope(|_| {}), &root);
    let l = p.layout;
    let back = feed(&mut p, &[sample_rec(&l, 7, USER, &[3, 4], false)]);
    let ids: Vec<u32> = Decoder::new(back[0].sample.as_deref().unwrap())
        .filter_map(Result::ok)
        .map(|f| f.id)
        .collect();
    assert_eq!(ids, [1, 2, 3, 5, 6, 7, 4]);
}

/// A kernel thread in scope (kernel frames recorded) has its kernel frames
/// and no unwinding error, the unwinder not asked; a kernel thread on a
/// pid first seen as a user process's is skipped at the unwinding stage,
/// as upstream's unwinder skips it.
#[test]
fn kernel_threads_have_kernel_frames_only_and_a_reused_pid_is_skipped() {
    let o = config(|c| {
        c.begin_callstack_sampling()
            .set_kernel_frames(true)
            .set_user_frames(UnwindMode::UnwindDwarf);
    });
    let root = fake_proc(&[(7, b"/bin/app\0")]);
    let (mut p, calls) = probe(o, &root);
    let l = p.layout;
    let back = feed(
        &mut p,
        &[
            sample_rec(&l, 5, KERNEL, &[1], true),
            sample_rec(&l, 7, USER, &[2], false),
            sample_rec(&l, 7, KERNEL, &[3], true),
        ],
    );
    let s0 = PerfSampleDecoder::new(back[0].sample.as_deref().unwrap());
    assert!(s0.callstack_iid().is_some());
    assert_eq!(
        (s0.unwind_error(), s0.sample_skipped_reason()),
        (None, None)
    );
    let s2 = PerfSampleDecoder::new(back[2].sample.as_deref().unwrap());
    assert_eq!(
        s2.sample_skipped_reason(),
        Some(SampleSkipReason::ProfilerSkipUnwindStage)
    );
    assert_eq!(s2.timebase_count(), Some(3));
    assert_eq!(calls.lock().unwrap().unwound, [7]);
}

#[path = "perf_kernel_tests.rs"]
mod kernel_frames;

#[path = "perf_edges_tests.rs"]
mod edges;

#[path = "perf_exec_tests.rs"]
mod exec;

#[path = "perf_unwinder_tests.rs"]
mod unwinder;

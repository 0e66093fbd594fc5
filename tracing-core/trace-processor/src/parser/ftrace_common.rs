//! The core kernel events the ftrace importer handles itself: `print`,
//! the kernel's tracing_mark_write and g2d_tracing_mark_write and the msm
//! kernel's `zero` go to the systrace (atrace) parser; CPU frequency
//! limits and CFS utilisation become per-CPU counters; `task_newtask`
//! starts processes and threads; the OOM killer's victim is a
//! `mem.oom_kill` instant on its thread.
//!
//! Events our generated messages lack are read with protozero's
//! schema-less decoder at upstream's field numbers (`FtraceEvent` field
//! 12, `cpu_frequency_limits`; 421, `sched_cpu_util_cfs`).

use protozero::Decoder;
use zerotrace_protos::protos::{
    FtraceEvent, PrintFtraceEventDecoder, TaskNewtaskFtraceEventDecoder,
};

use super::Parser;
use super::importer::{FtraceHandler, FtraceInput};
use crate::storage::args::ArgValue;
use crate::storage::rows::CounterRow;
use crate::tables::opt_u32::OptU32;
use crate::tracker::tracks::{EventType, TrackSpec};

/// FtraceEvent.cpu_frequency_limits.
const CPU_FREQUENCY_LIMITS: u32 = 12;
/// FtraceEvent.sched_cpu_util_cfs.
const SCHED_CPU_UTIL_CFS: u32 = 421;
/// FtraceEvent.tracing_mark_write: {pid 1, trace_name 2, trace_begin 3}.
const TRACING_MARK_WRITE: u32 = 80;
/// FtraceEvent.g2d_tracing_mark_write: {pid 1, name 4, type 5, value 6}.
const G2D_TRACING_MARK_WRITE: u32 = 349;
/// FtraceEvent.mark_victim (the OOM killer's victim): {pid 1}.
const MARK_VICTIM: u32 = 334;
/// FtraceEvent.zero (the msm kernel's systrace events): {flag 1, name 2,
/// pid 3, value 4}.
const ZERO: u32 = 331;

/// The events this module handles (gathered by `ftrace_registry.rs`).
pub const FTRACE_HANDLERS: &[(u32, FtraceHandler)] = &[
    (FtraceEvent::FIELD_TASK_NEWTASK, new_task),
    (FtraceEvent::FIELD_PRINT, print),
    (TRACING_MARK_WRITE, tracing_mark_write),
    (G2D_TRACING_MARK_WRITE, g2d_tracing_mark_write),
    (MARK_VICTIM, mark_victim),
    (ZERO, zero),
    (CPU_FREQUENCY_LIMITS, cpu_frequency_limits),
    (SCHED_CPU_UTIL_CFS, sched_cpu_util_cfs),
];

fn print(p: &mut Parser, e: &FtraceInput<'_>) {
    // The write carrying this text cannot nest with the atrace slice.
    super::syscalls::truncate_write(p, e.ts, e.tid);
    if let Some(buf) = PrintFtraceEventDecoder::new(e.body).buf() {
        super::systrace::parse(p, e.ts, e.tid, buf);
    }
}

fn tracing_mark_write(p: &mut Parser, e: &FtraceInput<'_>) {
    let md = Decoder::new(e.body);
    let tgid = md.find_last(1).and_then(|f| f.as_i32().ok()).map(i64::from);
    let name = md.find_last(2).and_then(|f| f.as_str().ok());
    let phase = if field_u64(e.body, 3) != 0 { 'B' } else { 'E' };
    super::systrace::apply(p, e.ts, e.tid, phase, tgid, name, None);
}

fn g2d_tracing_mark_write(p: &mut Parser, e: &FtraceInput<'_>) {
    let b = e.body;
    let md = Decoder::new(b);
    let tgid = md.find_last(1).and_then(|f| f.as_i32().ok()).map(i64::from);
    let name = md.find_last(4).and_then(|f| f.as_str().ok());
    let value = md.find_last(6).and_then(|f| f.as_i32().ok()).map(f64::from);
    let phase = char::from_u32(field_u64(b, 5) as u32).unwrap_or('?');
    super::systrace::apply(p, e.ts, e.tid, phase, tgid, name, value);
}

/// A kernel systrace event: its flag's lowest bit set is a begin, else
/// the next an end, else the next a counter (of process `pid`); none of
/// them is a parse failure.
fn zero(p: &mut Parser, e: &FtraceInput<'_>) {
    let md = Decoder::new(e.body);
    let flag = md.find_last(1).and_then(|f| f.as_i32().ok()).unwrap_or(0);
    let name = md.find_last(2).and_then(|f| f.as_str().ok());
    let tgid = md.find_last(3).and_then(|f| f.as_i32().ok()).unwrap_or(0);
    let value = md
        .find_last(4)
        .and_then(|f| f.as_u64().ok())
        .map_or(0.0, |v| v as i64 as f64);
    let phase = if flag & 1 != 0 {
        'B'
    } else if flag & 2 != 0 {
        'E'
    } else if flag & 4 != 0 {
        'C'
    } else {
        p.storage.stats.incr("systrace_parse_failure");
        return;
    };
    super::systrace::apply(
        p,
        e.ts,
        e.tid,
        phase,
        Some(i64::from(tgid)),
        name,
        Some(value),
    );
}

fn mark_victim(p: &mut Parser, e: &FtraceInput<'_>) {
    let victim = field_u64(e.body, 1) as i64;
    let utid = p.processes.get_or_create_thread(&mut p.storage, victim);
    let track = p.tracks.thread_track(&mut p.storage, utid);
    let name = p.storage.strings.intern("mem.oom_kill");
    p.slices.instant(
        &mut p.storage,
        crate::storage::rows::SliceRow {
            ts: e.ts,
            track_id: track,
            name,
            ..Default::default()
        },
    );
}

fn cpu_frequency_limits(p: &mut Parser, e: &FtraceInput<'_>) {
    let v = |id| field_u64(e.body, id);
    let cpu = v(3);
    cpu_counter(
        p,
        &format!("Cpu {cpu} Max Freq Limit"),
        "cpu_max_frequency_limit",
        cpu,
        e.ts,
        v(2),
    );
    cpu_counter(
        p,
        &format!("Cpu {cpu} Min Freq Limit"),
        "cpu_min_frequency_limit",
        cpu,
        e.ts,
        v(1),
    );
}

fn sched_cpu_util_cfs(p: &mut Parser, e: &FtraceInput<'_>) {
    let v = |id| field_u64(e.body, id);
    let (cpu, ts) = (v(4), e.ts);
    cpu_counter(
        p,
        &format!("Cpu {cpu} Util"),
        "cpu_utilization",
        cpu,
        ts,
        v(6),
    );
    cpu_counter(p, &format!("Cpu {cpu} Cap"), "cpu_capacity", cpu, ts, v(2));
    cpu_counter(
        p,
        &format!("Cpu {cpu} Nr Running"),
        "cpu_nr_running",
        cpu,
        ts,
        v(11),
    );
}

fn field_u64(msg: &[u8], id: u32) -> u64 {
    Decoder::new(msg)
        .find_last(id)
        .and_then(|f| f.as_u64().ok())
        .unwrap_or(0)
}

fn cpu_counter(p: &mut Parser, name: &str, classification: &str, cpu: u64, ts: i64, value: u64) {
    let mut spec = TrackSpec::new(Some(name), classification, EventType::Counter);
    spec.dimensions = vec![("cpu", ArgValue::Int(cpu as i64))];
    let track = p.tracks.interned_counter(&mut p.storage, &spec);
    p.storage.counters.push(CounterRow {
        ts,
        track_id: track,
        value: value as f64,
        arg_set_id: OptU32::NONE,
    });
}

/// `task_newtask`: a new process (fork) or thread (CLONE_THREAD), which
/// starts runnable in `thread_state`, woken by its creator; a new
/// task 0 (the idle task, cloned by init at boot) is ignored.
fn new_task(p: &mut Parser, e: &FtraceInput<'_>) {
    /// The kernel's CLONE_THREAD.
    const CLONE_THREAD: u64 = 0x0001_0000;
    let t = TaskNewtaskFtraceEventDecoder::new(e.body);
    let (ts, source_tid) = (e.ts, e.tid);
    let new_tid = i64::from(t.pid().unwrap_or(0));
    if new_tid == 0 {
        return;
    }
    let comm = p.storage.strings.intern(t.comm().unwrap_or(""));
    if t.clone_flags().unwrap_or(0) & CLONE_THREAD == 0 {
        let upid = p
            .processes
            .start_new_process(&mut p.storage, ts, new_tid, comm);
        let source = p.processes.get_or_create_thread(&mut p.storage, source_tid);
        let new = p.processes.get_or_create_thread(&mut p.storage, new_tid);
        p.processes.set_parent_thread(&mut p.storage, upid, source);
        p.sched.new_task(&mut p.storage, ts, new, source);
    } else {
        let new = p
            .processes
            .start_new_thread(&mut p.storage, ts, new_tid, source_tid, comm);
        let source = p.processes.get_or_create_thread(&mut p.storage, source_tid);
        p.sched.new_task(&mut p.storage, ts, new, source);
    }
}

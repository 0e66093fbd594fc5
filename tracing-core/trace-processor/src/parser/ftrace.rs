//! One ftrace event (split from its bundle by the loader, at its own
//! time): `print` goes to the systrace (atrace) parser; CPU frequency
//! limits and CFS utilisation become per-CPU counters; f2fs I/O statistics
//! go to their own parser; `task_newtask` starts processes and threads
//! (the first event also makes tid 0 the swapper, utid 0); the OOM
//! killer's victim is a `mem.oom_kill` instant on its thread; ion_stat
//! gives the `mem.ion` and per-thread `mem.ion_change` counters; the
//! kernel's tracing_mark_write and g2d_tracing_mark_write go to the
//! systrace parser. The scheduler's events, CPU frequency and idle go to
//! their own parsers, and every event gets its `ftrace_event` row first.
//! Events from before tracing started are dropped, and before every CPU's
//! data is valid only the raw row is kept (`sched::drop_bounds`).
//!
//! Events our generated messages lack are read with protozero's
//! schema-less decoder at upstream's field numbers (`FtraceEvent` field
//! 12, `cpu_frequency_limits`; 421, `sched_cpu_util_cfs`).

use protozero::Decoder;
use zerotrace_protos::protos::FtraceEventDecoder;

use super::Parser;
use crate::sequence_state::Generation;
use crate::storage::args::ArgValue;
use crate::storage::rows::CounterRow;
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
/// FtraceEvent.ion_stat: {buffer_id 1, len 2, total_allocated 3}.
const ION_STAT: u32 = 335;

/// Parses one event recorded on `cpu`.
pub fn parse(p: &mut Parser, cpu: u32, bytes: &[u8], ts: i64, generation: &Generation) {
    if !p.saw_ftrace {
        // A Linux system trace: tid/pid 0 are the idle task, utid/upid 0.
        p.saw_ftrace = true;
        p.processes.set_pid_zero_is_idle(&mut p.storage);
    }
    let ev = FtraceEventDecoder::new(bytes);
    let tid = i64::from(ev.pid().unwrap_or(0));
    let (hard, soft) = super::sched::drop_bounds(p);
    if ts < hard {
        p.storage.stats.incr("ftrace_packet_before_tracing_start");
        return;
    }
    super::ftrace_raw::insert(p, cpu, ts, tid, bytes, generation);
    if ts < soft {
        return;
    }
    if super::sched::parse(p, cpu, ts, &ev, bytes, generation)
        || super::cpu_freq_idle::parse(p, ts, &ev)
    {
        return;
    }
    if let Some(t) = ev.task_newtask() {
        new_task(p, ts, tid, &t);
        return;
    }
    if let Some(print) = ev.print() {
        if let Some(buf) = print.buf() {
            super::systrace::parse(p, ts, tid, buf);
        }
        return;
    }
    let d = Decoder::new(bytes);
    for (field, latency) in [
        (super::f2fs_iostat::F2FS_IOSTAT, false),
        (super::f2fs_iostat::F2FS_IOSTAT_LATENCY, true),
    ] {
        if let Some(b) = d.find_last(field).and_then(|f| f.as_bytes().ok()) {
            super::f2fs_iostat::parse(p, ts, b, latency);
            return;
        }
    }
    if let Some(b) = d
        .find_last(TRACING_MARK_WRITE)
        .and_then(|f| f.as_bytes().ok())
    {
        let md = Decoder::new(b);
        let tgid = md.find_last(1).and_then(|f| f.as_i32().ok()).map(i64::from);
        let name = md.find_last(2).and_then(|f| f.as_str().ok());
        let phase = if field_u64(b, 3) != 0 { 'B' } else { 'E' };
        super::systrace::apply(p, ts, tid, phase, tgid, name, None);
        return;
    }
    if let Some(b) = d
        .find_last(G2D_TRACING_MARK_WRITE)
        .and_then(|f| f.as_bytes().ok())
    {
        let md = Decoder::new(b);
        let tgid = md.find_last(1).and_then(|f| f.as_i32().ok()).map(i64::from);
        let name = md.find_last(4).and_then(|f| f.as_str().ok());
        let value = md.find_last(6).and_then(|f| f.as_i32().ok()).map(f64::from);
        let phase = char::from_u32(field_u64(b, 5) as u32).unwrap_or('?');
        super::systrace::apply(p, ts, tid, phase, tgid, name, value);
        return;
    }
    if let Some(b) = d.find_last(MARK_VICTIM).and_then(|f| f.as_bytes().ok()) {
        let victim = field_u64(b, 1) as i64;
        let utid = p.processes.get_or_create_thread(&mut p.storage, victim);
        let track = p.tracks.thread_track(&mut p.storage, utid);
        let name = p.storage.strings.intern("mem.oom_kill");
        p.slices.instant(
            &mut p.storage,
            crate::storage::rows::SliceRow {
                ts,
                track_id: track,
                name,
                ..Default::default()
            },
        );
        return;
    }
    if let Some(b) = d.find_last(ION_STAT).and_then(|f| f.as_bytes().ok()) {
        let spec = TrackSpec::new(Some("mem.ion"), "android_ion", EventType::Counter);
        let track = p.tracks.interned_counter(&mut p.storage, &spec);
        push(p, track, ts, field_u64(b, 3) as f64);
        let utid = p.processes.get_or_create_thread(&mut p.storage, tid);
        let mut spec = TrackSpec::new(
            Some("mem.ion_change"),
            "android_ion_change",
            EventType::Counter,
        );
        spec.utid = Some(utid);
        let track = p.tracks.interned_counter(&mut p.storage, &spec);
        push(p, track, ts, field_u64(b, 2) as i64 as f64);
        return;
    }
    if let Some(b) = d
        .find_last(CPU_FREQUENCY_LIMITS)
        .and_then(|f| f.as_bytes().ok())
    {
        let v = |id| field_u64(b, id);
        let cpu = v(3);
        cpu_counter(
            p,
            &format!("Cpu {cpu} Max Freq Limit"),
            "cpu_max_frequency_limit",
            cpu,
            ts,
            v(2),
        );
        cpu_counter(
            p,
            &format!("Cpu {cpu} Min Freq Limit"),
            "cpu_min_frequency_limit",
            cpu,
            ts,
            v(1),
        );
    } else if let Some(b) = d
        .find_last(SCHED_CPU_UTIL_CFS)
        .and_then(|f| f.as_bytes().ok())
    {
        let v = |id| field_u64(b, id);
        let cpu = v(4);
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
}

fn field_u64(msg: &[u8], id: u32) -> u64 {
    Decoder::new(msg)
        .find_last(id)
        .and_then(|f| f.as_u64().ok())
        .unwrap_or(0)
}

fn push(p: &mut Parser, track: u32, ts: i64, value: f64) {
    p.storage.counters.push(CounterRow {
        ts,
        track_id: track,
        value,
        arg_set_id: None,
    });
}

fn cpu_counter(p: &mut Parser, name: &str, classification: &str, cpu: u64, ts: i64, value: u64) {
    let mut spec = TrackSpec::new(Some(name), classification, EventType::Counter);
    spec.dimensions = vec![("cpu", ArgValue::Int(cpu as i64))];
    let track = p.tracks.interned_counter(&mut p.storage, &spec);
    p.storage.counters.push(CounterRow {
        ts,
        track_id: track,
        value: value as f64,
        arg_set_id: None,
    });
}

/// `task_newtask`: a new process (fork) or thread (CLONE_THREAD), which
/// starts runnable in `thread_state`, woken by its creator; a new
/// task 0 (the idle task, cloned by init at boot) is ignored.
fn new_task(
    p: &mut Parser,
    ts: i64,
    source_tid: i64,
    t: &zerotrace_protos::protos::TaskNewtaskFtraceEventDecoder<'_>,
) {
    /// The kernel's CLONE_THREAD.
    const CLONE_THREAD: u64 = 0x0001_0000;
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
        let parent = p.storage.threads.get(source as usize).and_then(|t| t.upid);
        if let (Some(parent), Some(row)) = (parent, p.storage.processes.get_mut(upid as usize)) {
            row.parent_upid = Some(parent);
        }
        p.sched.new_task(&mut p.storage, ts, new, source);
    } else {
        let new = p
            .processes
            .start_new_thread(&mut p.storage, ts, new_tid, source_tid, comm);
        let source = p.processes.get_or_create_thread(&mut p.storage, source_tid);
        p.sched.new_task(&mut p.storage, ts, new, source);
    }
}

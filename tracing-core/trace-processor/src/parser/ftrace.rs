//! One ftrace event (split from its bundle by the loader, at its own
//! time): `print` goes to the systrace (atrace) parser; CPU frequency
//! limits and CFS utilisation become per-CPU counters; f2fs I/O statistics
//! go to their own parser; `task_newtask` starts processes and threads
//! (the first event also makes tid 0 the swapper, utid 0). Other events are
//! not read yet.
//!
//! Events our generated messages lack are read with protozero's
//! schema-less decoder at upstream's field numbers (`FtraceEvent` field
//! 12, `cpu_frequency_limits`; 421, `sched_cpu_util_cfs`).

use protozero::Decoder;
use zerotrace_protos::protos::FtraceEventDecoder;

use super::Parser;
use crate::storage::args::ArgValue;
use crate::storage::rows::CounterRow;
use crate::tracker::tracks::{EventType, TrackSpec};

/// FtraceEvent.cpu_frequency_limits.
const CPU_FREQUENCY_LIMITS: u32 = 12;
/// FtraceEvent.sched_cpu_util_cfs.
const SCHED_CPU_UTIL_CFS: u32 = 421;

/// Parses one event recorded on `cpu`.
pub fn parse(p: &mut Parser, _cpu: u32, bytes: &[u8], ts: i64) {
    if !p.saw_ftrace {
        // A Linux system trace: tid/pid 0 are the idle task, utid/upid 0.
        p.saw_ftrace = true;
        p.processes.set_pid_zero_is_idle(&mut p.storage);
    }
    let ev = FtraceEventDecoder::new(bytes);
    let tid = i64::from(ev.pid().unwrap_or(0));
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

/// `task_newtask`: a new process (fork) or thread (CLONE_THREAD); a new
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
        let parent = p.storage.threads.get(source as usize).and_then(|t| t.upid);
        if let (Some(parent), Some(row)) = (parent, p.storage.processes.get_mut(upid as usize)) {
            row.parent_upid = Some(parent);
        }
    } else {
        p.processes
            .start_new_thread(&mut p.storage, ts, new_tid, source_tid, comm);
    }
}

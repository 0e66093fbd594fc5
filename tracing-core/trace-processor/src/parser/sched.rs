//! The scheduler's ftrace events: `sched_switch` (a `sched_slice` per CPU
//! run, `thread_state` for both tasks, and its own `ftrace_event` row),
//! `sched_waking` (a blocked thread becomes runnable, woken by the task
//! that emitted it), `sched_blocked_reason` (I/O wait and the kernel
//! function, symbolized from the sequence's interned kernel symbols, on
//! the thread's last blocked state), the events decoded from
//! `compact_sched`, `task_rename` and `sched_process_free`; and the kernel
//! version from `system_info`, which decides how `prev_state` is read.

use protozero::Decoder;
use zerotrace_protos::protos::{
    FtraceEvent, SchedProcessFreeFtraceEventDecoder, SchedSwitchFtraceEventDecoder,
    SchedWakingFtraceEventDecoder, TaskRenameFtraceEventDecoder,
};
use zerotrace_protos::upstream_tables::interned_data_field::KERNEL_SYMBOLS;

use super::Parser;
use super::importer::{FtraceHandler, FtraceInput};
use crate::column_store::strings::StrId;
use crate::packet_view::InlineSched;
use crate::sequence_state::Generation;
use crate::storage::args::{ArgSetBuilder, ArgValue};
use crate::storage::sched_rows::FtraceEventRow;
use crate::tracker::process::NamePriority;
use crate::tracker::sched::{CpuRun, SchedTracker};
use crate::tracker::task_state::{kernel_version, task_state_text};

/// `FtraceEvent.sched_blocked_reason`: {pid 1, caller 2, io_wait 3}.
pub const SCHED_BLOCKED_REASON: u32 = 18;

/// Notes the kernel version a `system_info` packet's `utsname` gives
/// (`parser/system_info.rs` reads the packet).
pub fn note_kernel(p: &mut Parser, sysname: &str, release: &str) {
    p.sched.kernel_version = kernel_version(sysname, release);
}

/// The times before which ftrace events are dropped (before tracing
/// started (the service's event last read, set by the loader), counted in
/// `ftrace_packet_before_tracing_start`) and before
/// which they only get their raw row (not every CPU's data is valid yet:
/// `ftrace_latest_data_start_ns`), fixed when the first event is parsed,
/// as upstream does by default.
pub fn drop_bounds(p: &mut Parser) -> (i64, i64) {
    if let Some(b) = p.sched.drop_before {
        return b;
    }
    let hard = if p.sched.preserve_ftrace_buffer {
        0
    } else {
        p.sched.tracing_started.unwrap_or(0)
    };
    let soft = p
        .storage
        .metadata_int("ftrace_latest_data_start_ns")
        .unwrap_or(0)
        .max(hard);
    p.sched.drop_before = Some((hard, soft));
    (hard, soft)
}

/// The scheduler's ftrace events (gathered by `ftrace_registry.rs`).
pub const FTRACE_HANDLERS: &[(u32, FtraceHandler)] = &[
    (FtraceEvent::FIELD_SCHED_SWITCH, sched_switch),
    (FtraceEvent::FIELD_SCHED_WAKING, sched_waking),
    (FtraceEvent::FIELD_TASK_RENAME, task_rename),
    (FtraceEvent::FIELD_SCHED_PROCESS_FREE, sched_process_free),
    (SCHED_BLOCKED_REASON, sched_blocked_reason),
];

fn sched_switch(p: &mut Parser, e: &FtraceInput<'_>) {
    switch(p, e.cpu, e.ts, &SchedSwitchFtraceEventDecoder::new(e.body));
}

fn sched_waking(p: &mut Parser, e: &FtraceInput<'_>) {
    let w = SchedWakingFtraceEventDecoder::new(e.body);
    let wakee = p
        .processes
        .get_or_create_thread(&mut p.storage, i64::from(w.pid().unwrap_or(0)));
    let comm = p.storage.strings.intern(w.comm().unwrap_or(""));
    p.processes
        .set_thread_name(&mut p.storage, wakee, comm, NamePriority::Ftrace);
    let waker = p.processes.get_or_create_thread(&mut p.storage, e.tid);
    p.sched
        .waking(&mut p.storage, e.ts, wakee, Some(waker), None);
}

fn task_rename(p: &mut Parser, e: &FtraceInput<'_>) {
    let r = TaskRenameFtraceEventDecoder::new(e.body);
    let utid = p
        .processes
        .get_or_create_thread(&mut p.storage, i64::from(r.pid().unwrap_or(0)));
    let comm = p.storage.strings.intern(r.newcomm().unwrap_or(""));
    p.processes
        .set_thread_name(&mut p.storage, utid, comm, NamePriority::Ftrace);
    // The main thread's rename renames its process too.
    let thread = p.storage.threads.get(utid as usize).cloned();
    if let Some(t) = thread {
        if t.is_main_thread == Some(true) {
            if let Some(upid) = t.upid {
                p.processes
                    .set_process_name(&mut p.storage, upid, comm, NamePriority::Ftrace);
            }
        }
    }
}

fn sched_process_free(p: &mut Parser, e: &FtraceInput<'_>) {
    let f = SchedProcessFreeFtraceEventDecoder::new(e.body);
    let tid = i64::from(f.pid().unwrap_or(0));
    p.processes.end_thread(&mut p.storage, e.ts, tid);
}

fn sched_blocked_reason(p: &mut Parser, e: &FtraceInput<'_>) {
    let d = Decoder::new(e.body);
    let pid = d.find_last(1).and_then(|f| f.as_i32().ok()).unwrap_or(0);
    let caller = d.find_last(2).and_then(|f| f.as_u64().ok()).unwrap_or(0);
    let io_wait = d.find_last(3).and_then(|f| f.as_u64().ok()).unwrap_or(0) != 0;
    let utid = p
        .processes
        .get_or_create_thread(&mut p.storage, i64::from(pid));
    let function = kernel_symbol(p, e.generation, caller);
    p.sched
        .blocked_reason(&mut p.storage, utid, Some(io_wait), function);
}

/// The interned kernel symbol `iid` of the sequence, as a string id.
pub fn kernel_symbol(p: &mut Parser, generation: &Generation, iid: u64) -> Option<StrId> {
    let bytes = generation.interned(KERNEL_SYMBOLS, iid)?;
    let name = Decoder::new(bytes)
        .find_last(2)
        .and_then(|f| f.as_bytes().ok())?;
    Some(p.storage.strings.intern(&String::from_utf8_lossy(name)))
}

fn state_id(p: &mut Parser, prev_state: i64) -> StrId {
    match task_state_text(prev_state, p.sched.kernel_version) {
        Some(t) => p.storage.strings.intern(&t),
        None => {
            p.storage.stats.incr("task_state_invalid");
            StrId::NULL
        }
    }
}

fn switch(p: &mut Parser, cpu: u32, ts: i64, ss: &SchedSwitchFtraceEventDecoder<'_>) {
    let next_pid = i64::from(ss.next_pid().unwrap_or(0));
    let next_comm = p.storage.strings.intern(ss.next_comm().unwrap_or(""));
    let next = p.processes.get_or_create_thread(&mut p.storage, next_pid);
    p.processes
        .set_thread_name(&mut p.storage, next, next_comm, NamePriority::Ftrace);
    let prev_pid = i64::from(ss.prev_pid().unwrap_or(0));
    let prev_state = ss.prev_state().unwrap_or(0);
    let run = p.sched.cpu(cpu);
    let state = state_id(p, prev_state);
    if let Some(slice) = run.slice {
        if prev_pid == run.pid {
            SchedTracker::close_slice(&mut p.storage, slice, ts, state);
        } else {
            p.storage.stats.incr("mismatched_sched_switch_tids");
        }
    }
    let prev_comm = p.storage.strings.intern(ss.prev_comm().unwrap_or(""));
    let prev = p.processes.get_or_create_thread(&mut p.storage, prev_pid);
    p.processes
        .set_thread_name(&mut p.storage, prev, prev_comm, NamePriority::Ftrace);
    let next_prio = ss.next_prio().unwrap_or(0);
    raw_switch(
        p,
        cpu,
        ts,
        prev,
        RawSwitch {
            prev_comm,
            prev_pid,
            prev_prio: ss.prev_prio().unwrap_or(0),
            prev_state,
            next_comm,
            next_pid,
            next_prio,
        },
    );
    let slice = SchedTracker::start_slice(&mut p.storage, cpu, ts, next, next_prio);
    p.sched.set_cpu(
        cpu,
        CpuRun {
            slice: Some(slice),
            pid: next_pid,
            utid: Some(next),
            prio: next_prio,
        },
    );
    p.sched.switch(&mut p.storage, ts, cpu, prev, state, next);
}

/// A switch's fields as its `ftrace_event` row's args hold them.
struct RawSwitch {
    prev_comm: StrId,
    prev_pid: i64,
    prev_prio: i32,
    prev_state: i64,
    next_comm: StrId,
    next_pid: i64,
    next_prio: i32,
}

fn raw_switch(p: &mut Parser, cpu: u32, ts: i64, prev: u32, r: RawSwitch) {
    let mut args = ArgSetBuilder::default();
    let fields = [
        ("prev_comm", ArgValue::String(r.prev_comm)),
        ("prev_pid", ArgValue::Int(r.prev_pid)),
        ("prev_prio", ArgValue::Int(i64::from(r.prev_prio))),
        ("prev_state", ArgValue::Int(r.prev_state)),
        ("next_comm", ArgValue::String(r.next_comm)),
        ("next_pid", ArgValue::Int(r.next_pid)),
        ("next_prio", ArgValue::Int(i64::from(r.next_prio))),
    ];
    for (k, v) in fields {
        let k = p.storage.strings.intern(k);
        args.add(k, k, v);
    }
    let arg_set_id = p.storage.args.add_set(&args);
    let name = p.storage.strings.intern("sched_switch");
    p.storage.sched.ftrace_events.push(FtraceEventRow {
        ts,
        name,
        utid: prev,
        arg_set_id,
        common_flags: 0,
        ucpu: cpu,
    });
}

/// An event decoded from `compact_sched`.
pub fn inline(p: &mut Parser, cpu: u32, ts: i64, ev: &InlineSched) {
    if !p.saw_ftrace {
        p.saw_ftrace = true;
        p.processes.set_pid_zero_is_idle(&mut p.storage);
    }
    let (hard, soft) = drop_bounds(p);
    if ts < hard {
        p.storage.stats.incr("ftrace_packet_before_tracing_start");
        return;
    }
    let raw_only = ts < soft;
    match ev {
        InlineSched::Switch {
            prev_state,
            next_pid,
            next_prio,
            next_comm,
        } => {
            let comm = p.storage.strings.intern(next_comm);
            let next = p.processes.get_or_create_thread(&mut p.storage, *next_pid);
            p.processes
                .set_thread_name(&mut p.storage, next, comm, NamePriority::Ftrace);
            let run = p.sched.cpu(cpu);
            let Some(prev) = run.utid else {
                // The CPU's first compact switch names no previous task.
                p.storage.stats.incr("compact_sched_switch_skipped");
                p.sched.set_cpu(
                    cpu,
                    CpuRun {
                        slice: None,
                        pid: *next_pid,
                        utid: Some(next),
                        prio: *next_prio,
                    },
                );
                return;
            };
            let state = state_id(p, *prev_state);
            if let Some(slice) = run.slice {
                SchedTracker::close_slice(&mut p.storage, slice, ts, state);
            }
            let prev_comm = p
                .storage
                .threads
                .get(prev as usize)
                .map_or(StrId::NULL, |t| t.name);
            raw_switch(
                p,
                cpu,
                ts,
                prev,
                RawSwitch {
                    prev_comm,
                    prev_pid: run.pid,
                    prev_prio: run.prio,
                    prev_state: *prev_state,
                    next_comm: comm,
                    next_pid: *next_pid,
                    next_prio: *next_prio,
                },
            );
            if raw_only {
                // Like the CPU's first compact switch: who runs, no slice.
                p.sched.set_cpu(
                    cpu,
                    CpuRun {
                        slice: None,
                        pid: *next_pid,
                        utid: Some(next),
                        prio: *next_prio,
                    },
                );
                return;
            }
            let slice = SchedTracker::start_slice(&mut p.storage, cpu, ts, next, *next_prio);
            p.sched.set_cpu(
                cpu,
                CpuRun {
                    slice: Some(slice),
                    pid: *next_pid,
                    utid: Some(next),
                    prio: *next_prio,
                },
            );
            p.sched.switch(&mut p.storage, ts, cpu, prev, state, next);
        }
        InlineSched::Waking {
            pid,
            target_cpu,
            prio,
            comm,
            common_flags,
        } => {
            let Some(waker) = p.sched.cpu(cpu).utid else {
                p.storage.stats.incr("compact_sched_waking_skipped");
                return;
            };
            let comm = p.storage.strings.intern(comm);
            let mut args = ArgSetBuilder::default();
            let fields = [
                ("comm", ArgValue::String(comm)),
                ("pid", ArgValue::Int(*pid)),
                ("prio", ArgValue::Int(i64::from(*prio))),
                ("target_cpu", ArgValue::Int(i64::from(*target_cpu))),
            ];
            for (k, v) in fields {
                let k = p.storage.strings.intern(k);
                args.add(k, k, v);
            }
            let arg_set_id = p.storage.args.add_set(&args);
            let name = p.storage.strings.intern("sched_waking");
            p.storage.sched.ftrace_events.push(FtraceEventRow {
                ts,
                name,
                utid: waker,
                arg_set_id,
                common_flags: common_flags.unwrap_or(0),
                ucpu: cpu,
            });
            if raw_only {
                return;
            }
            let wakee = p.processes.get_or_create_thread(&mut p.storage, *pid);
            p.sched
                .waking(&mut p.storage, ts, wakee, Some(waker), *common_flags);
        }
    }
}

//! ETW's scheduling and memory events as upstream imports them: a
//! `CSwitch` closes the CPU's open `sched_slice` (when the thread leaving
//! is the one that entered; else `mismatched_sched_switch_tids`), opens the
//! entering thread's, and moves both threads' `thread_state` (the leaving
//! thread's state named by ETW's thread states, a waiting thread's wait
//! reason as its blocked function and I/O wait from it); a thread id the
//! trace withheld is the "Anonymized Process" thread; a `ReadyThread`
//! makes its thread runnable, woken by the event's thread; `MemInfo`'s
//! page counts are `etw_meminfo` counters, one per kind of page.

use protozero::{Decoder, FieldValue};

use super::super::Parser;
use super::super::fields::Fields;
use crate::column_store::strings::StrId;
use crate::storage::args::ArgValue;
use crate::storage::rows::CounterRow;
use crate::tables::opt_u32::OptU32;
use crate::tracker::process::NamePriority;
use crate::tracker::sched::{CpuRun, SchedTracker};
use crate::tracker::tracks::{EventType, TrackSpec};

/// The tid standing for a thread id the trace withheld.
const ANONYMIZED_TID: i64 = u32::MAX as i64;

/// ETW's thread states, by value.
const STATES: [&str; 8] = [
    "Initialized",
    "Ready",
    "Running",
    "Standby",
    "Terminated",
    "Waiting",
    "Transition",
    "DeferredReady",
];
/// The waiting state.
const WAITING: i64 = 5;

/// ETW's wait reasons, by value.
const WAIT_REASONS: [&str; 37] = [
    "Executive",
    "FreePage",
    "PageIn",
    "PoolAllocation",
    "DelayExecution",
    "Suspended",
    "UserRequest",
    "WrExecutive",
    "WrFreePage",
    "WrPageIn",
    "WrPoolAllocation",
    "WrDelayExecution",
    "WrSuspended",
    "WrUserRequest",
    "WrEventPair",
    "WrQueue",
    "WrLpcReceive",
    "WrLpcReply",
    "WrVirtualMemory",
    "WrPageOut",
    "WrRendezvous",
    "WrKeyedEvent",
    "WrTerminated",
    "WrProcessInSwap",
    "WrCpuRateControl",
    "WrCalloutStack",
    "WrKernel",
    "WrResource",
    "WrPushLock",
    "WrMutex",
    "WrQuantumEnd",
    "WrDispatchInt",
    "WrPreempted",
    "WrYieldExecution",
    "WrFastMutex",
    "WrGuardedMutex",
    "WrRundown",
];

/// `CSwitchEtwEvent`'s fields.
mod cswitch_field {
    pub const NEW_THREAD_ID: u32 = 1;
    pub const OLD_THREAD_ID: u32 = 2;
    pub const NEW_THREAD_PRIORITY: u32 = 3;
    pub const OLD_THREAD_WAIT_REASON_INT: u32 = 11;
    pub const OLD_THREAD_STATE: u32 = 8;
    pub const OLD_THREAD_STATE_INT: u32 = 13;
}

/// A `sint32` field's value (zigzag).
fn sint32(f: &Fields<'_>, id: u32) -> Option<i32> {
    let v = f.uint(id)? as u32;
    Some(((v >> 1) as i32) ^ -((v & 1) as i32))
}

/// Whether a wait reason is an I/O wait: PageIn, and the alertable "Wr"
/// reasons from WrExecutive to WrRundown.
fn is_io_wait(reason: u8) -> bool {
    reason == 2 || (7..=36).contains(&reason)
}

/// A context switch on `cpu` at `ts`.
pub fn cswitch(p: &mut Parser, ts: i64, cpu: u32, bytes: &[u8]) {
    use cswitch_field as c;
    let f = Fields::new(bytes);
    let old_state = match f.int32(c::OLD_THREAD_STATE) {
        Some(s) => i64::from(s),
        None => i64::from(sint32(&f, c::OLD_THREAD_STATE_INT).unwrap_or(0)),
    };
    let tid = |id| {
        f.uint(id)
            .map_or(ANONYMIZED_TID, |v| (v & 0xffff_ffff) as i64)
    };
    let old_tid = tid(c::OLD_THREAD_ID);
    let new_tid = tid(c::NEW_THREAD_ID);
    if old_tid == ANONYMIZED_TID || new_tid == ANONYMIZED_TID {
        let utid = p
            .processes
            .get_or_create_thread(&mut p.storage, ANONYMIZED_TID);
        let name = p.storage.strings.intern("Anonymized Process");
        p.processes
            .set_thread_name(&mut p.storage, utid, name, NamePriority::Ftrace);
    }
    let wait_reason = f.int(c::OLD_THREAD_WAIT_REASON_INT).unwrap_or(0) as u8;
    let new_prio = sint32(&f, c::NEW_THREAD_PRIORITY).unwrap_or(0);

    let next = p.processes.get_or_create_thread(&mut p.storage, new_tid);
    let run = p.sched.cpu(cpu);
    let state = match STATES.get(usize::from(old_state as u8)) {
        Some(s) => p.storage.strings.intern(s),
        None => {
            p.storage.stats.incr("task_state_invalid");
            StrId::NULL
        }
    };
    if let Some(slice) = run.slice {
        if old_tid == run.pid {
            SchedTracker::close_slice(&mut p.storage, slice, ts, state);
        } else {
            p.storage.stats.incr("mismatched_sched_switch_tids");
        }
    }
    let slice = SchedTracker::start_slice(&mut p.storage, cpu, ts, next, new_prio);
    p.sched.set_cpu(
        cpu,
        CpuRun {
            slice: Some(slice),
            pid: new_tid,
            utid: Some(next),
            prio: new_prio,
        },
    );
    let prev = p.processes.get_or_create_thread(&mut p.storage, old_tid);
    p.sched.switch(&mut p.storage, ts, cpu, prev, state, next);
    if old_state == WAITING {
        let reason = WAIT_REASONS
            .get(usize::from(wait_reason))
            .map(|r| p.storage.strings.intern(r));
        p.sched
            .blocked_reason(&mut p.storage, prev, Some(is_io_wait(wait_reason)), reason);
    }
}

/// `ReadyThreadEtwEvent.t_thread_id`.
const READY_THREAD_TID: u32 = 1;

/// The event's thread readied another: it becomes runnable.
pub fn ready_thread(p: &mut Parser, ts: i64, waker_tid: u64, bytes: &[u8]) {
    let f = Fields::new(bytes);
    let wakee_tid = f.uint(READY_THREAD_TID).unwrap_or(0) & 0xffff_ffff;
    let wakee = p
        .processes
        .get_or_create_thread(&mut p.storage, wakee_tid as i64);
    let waker = p
        .processes
        .get_or_create_thread(&mut p.storage, waker_tid as i64);
    p.sched.waking(&mut p.storage, ts, wakee, Some(waker), None);
}

/// `MemInfoEtwEvent`'s single counts: (field, kind of page).
const MEM_COUNTS: [(u32, &str); 10] = [
    (2, "Zero"),
    (3, "Free"),
    (4, "Modified"),
    (5, "ModifiedNoWrite"),
    (6, "Bad"),
    (9, "ModifiedPageFile"),
    (10, "PagedPool"),
    (11, "NonPagedPool"),
    (12, "Mdl"),
    (13, "Commit"),
];
/// `MemInfoEtwEvent.standby_page_counts`, one per priority.
const STANDBY_COUNTS: u32 = 7;
/// `MemInfoEtwEvent.repurposed_page_counts`, one per priority.
const REPURPOSED_COUNTS: u32 = 8;

/// The values of a repeated `uint64` field, packed or not.
fn repeated_u64(bytes: &[u8], id: u32) -> Vec<u64> {
    let mut out = Vec::new();
    for f in Decoder::new(bytes).map_while(Result::ok) {
        if f.id != id {
            continue;
        }
        match f.value {
            FieldValue::Varint(v) => out.push(v),
            FieldValue::Bytes(b) => {
                let mut rest = b;
                while !rest.is_empty() {
                    let Some((v, n)) = varint(rest) else {
                        break;
                    };
                    out.push(v);
                    rest = rest.get(n..).unwrap_or(&[]);
                }
            }
            _ => {}
        }
    }
    out
}

/// A varint at the start of `b`: its value and length.
fn varint(b: &[u8]) -> Option<(u64, usize)> {
    let mut v = 0u64;
    for (i, byte) in b.iter().enumerate().take(10) {
        v |= u64::from(byte & 0x7f) << (7 * i);
        if byte & 0x80 == 0 {
            return Some((v, i + 1));
        }
    }
    None
}

/// The page counts of a `MemInfo` event, each on its kind's counter.
pub fn mem_info(p: &mut Parser, ts: i64, bytes: &[u8]) {
    let f = Fields::new(bytes);
    let mut values: Vec<(String, u64)> = MEM_COUNTS
        .iter()
        .map(|&(id, kind)| (kind.to_owned(), f.uint(id).unwrap_or(0)))
        .collect();
    for (i, v) in repeated_u64(bytes, STANDBY_COUNTS).into_iter().enumerate() {
        values.push((format!("Standby Pri-{i}"), v));
    }
    for (i, v) in repeated_u64(bytes, REPURPOSED_COUNTS)
        .into_iter()
        .enumerate()
    {
        values.push((format!("Repurposed Pri-{i}"), v));
    }
    for (kind, value) in values {
        let name = format!("{kind} Page Count");
        let kind_id = p.storage.strings.intern(&kind);
        let mut spec = TrackSpec::new(Some(name.as_str()), "etw_meminfo", EventType::Counter);
        spec.dimensions = vec![("counter_type", ArgValue::String(kind_id))];
        spec.unit = Some("pages");
        let track_id = p.tracks.interned_counter(&mut p.storage, &spec);
        p.storage.counters.push(CounterRow {
            ts,
            track_id,
            value: value as f64,
            arg_set_id: OptU32::NONE,
        });
    }
}

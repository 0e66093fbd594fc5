//! Perfetto's generic kernel packets, which an OS without ftrace (or a
//! converter) writes instead of scheduler events: one task's new state per
//! `generic_kernel_task_state_event` (TracePacket 117) becomes
//! `thread_state` rows, and the running states of a CPU become
//! `sched_slice` rows; `generic_kernel_task_rename_event` (120) names a
//! thread, `generic_kernel_process_tree` (122) gives processes and threads,
//! and `generic_kernel_cpu_freq_event` (118) is a `cpufreq` counter.
//!
//! A task state event tells of one task only, so a CPU's switch arrives
//! as two events in either order: the next task's running state and the
//! previous task's end state. A running state closes the CPU's open slice
//! with no end state and remembers it per thread; the previous task's
//! state at that very time then becomes the closed slice's end state.
//! Events out of order (created twice, anything but destroyed after dead,
//! running twice, two changes at one time) are counted in
//! `generic_task_state_invalid_order`; an unknown state in
//! `task_state_invalid`. The rules are facts of upstream's generic kernel
//! importer and `generic_kernel/generic_task.proto`; the bytes are read
//! with protozero's schema-less decoder.

use protozero::{Decoder, Field};

use super::Parser;
use super::importer::{Importer, Input};
use crate::column_store::strings::StrId;
use crate::hash::HashMap;
use crate::storage::args::ArgValue;
use crate::storage::rows::CounterRow;
use crate::tables::opt_u32::OptU32;
use crate::tracker::process::NamePriority;
use crate::tracker::sched::SchedTracker;
use crate::tracker::tracks::{EventType, TrackSpec};

/// `TracePacket.generic_kernel_task_state_event`.
const TASK_STATE_EVENT: u32 = 117;
/// `TracePacket.generic_kernel_cpu_freq_event`.
const CPU_FREQ_EVENT: u32 = 118;
/// `TracePacket.generic_kernel_task_rename_event`.
const TASK_RENAME_EVENT: u32 = 120;
/// `TracePacket.generic_kernel_process_tree`.
const PROCESS_TREE: u32 = 122;

/// `GenericKernelTaskStateEvent.TaskStateEnum`, as `thread_state` names
/// each value (index = enum value).
const STATE_NAMES: [&str; 9] = [
    "Unknown", "Created", "R", "Running", "S", "D", "T", "Z", "X",
];
const CREATED: u64 = 1;
const RUNNING: u64 = 3;
const DEAD: u64 = 7;
const DESTROYED: u64 = 8;

/// The payloads this module imports.
pub const IMPORTERS: &[(u32, Importer)] = &[
    (TASK_STATE_EVENT, task_state),
    (CPU_FREQ_EVENT, cpu_freq),
    (TASK_RENAME_EVENT, task_rename),
    (PROCESS_TREE, process_tree),
];

/// A CPU's open slice as the last running state there opened it.
#[derive(Debug, Clone, Copy)]
struct Pending {
    /// The `sched_slice` row.
    slice: usize,
    /// The task running.
    tid: i64,
    utid: u32,
}

/// What the task state events keep between packets.
#[derive(Debug, Default)]
pub struct GenericKernelState {
    /// Per CPU, the slice the last running state opened, while open.
    cpus: HashMap<u32, Pending>,
    /// Per thread, the slice a later running state closed without an end
    /// state, waiting for the thread's own state at that time.
    closed: HashMap<u32, Pending>,
}

fn fields(bytes: &[u8]) -> impl Iterator<Item = Field<'_>> {
    let mut d = Decoder::new(bytes);
    std::iter::from_fn(move || d.read_field().and_then(Result::ok))
}

fn text(f: &Field<'_>) -> Option<String> {
    f.as_bytes()
        .ok()
        .map(|b| String::from_utf8_lossy(b).into_owned())
}

/// One task's new state.
fn task_state(p: &mut Parser, input: &Input<'_>) {
    let (mut cpu, mut comm, mut tid, mut state, mut prio) = (0u32, None, 0i64, 0u64, 0i32);
    for f in fields(input.bytes) {
        match f.id {
            // int32 read as upstream does: a negative CPU wraps.
            1 => cpu = f.as_i32().unwrap_or(0) as u32,
            2 => comm = text(&f),
            3 => tid = f.as_i64().unwrap_or(0),
            4 => state = f.as_u64().unwrap_or(0),
            5 => prio = f.as_i32().unwrap_or(0),
            _ => {}
        }
    }
    let ts = input.ts;
    let comm = comm.map_or(StrId::NULL, |c| p.storage.strings.intern(&c));
    let Some(utid) = utid_for_state(p, ts, tid, comm, state) else {
        return;
    };
    let name = STATE_NAMES
        .get(usize::try_from(state).unwrap_or(usize::MAX))
        .copied()
        .unwrap_or("Unknown");
    let state_id = p.storage.strings.intern(name);
    let previous = p.generic_kernel.cpus.get(&cpu).copied();
    let running = state == RUNNING;
    match push_switch(p, ts, cpu, tid, utid, state_id, running, prio) {
        Switch::EndStateOfClosed => {
            p.sched.update_pending_state(&mut p.storage, utid, state_id);
        }
        switch => {
            if switch == Switch::StartClosingPrevious {
                if let Some(prev) = previous {
                    push_state(p, ts, prev.utid, StrId::NULL, None);
                }
            }
            push_state(p, ts, utid, state_id, running.then_some(cpu));
        }
    }
}

/// Opens `state` for `utid`, counting two changes at one time.
fn push_state(p: &mut Parser, ts: i64, utid: u32, state: StrId, cpu: Option<u32>) {
    if p.sched
        .push_thread_state(&mut p.storage, ts, utid, state, cpu)
    {
        p.storage.stats.incr("generic_task_state_invalid_order");
    }
}

/// The thread a state event is about, or None (counted) when the event
/// is out of order or its state unknown.
fn utid_for_state(p: &mut Parser, ts: i64, tid: i64, comm: StrId, state: u64) -> Option<u32> {
    let utid = match state {
        CREATED => {
            if p.processes.thread_or_null(&p.storage, tid).is_some() {
                p.storage.stats.incr("generic_task_state_invalid_order");
                return None;
            }
            let utid = p.processes.start_reused_thread(&mut p.storage, tid);
            if let Some(t) = p.storage.threads.get_mut(utid as usize) {
                t.start_ts = Some(ts);
            }
            utid
        }
        DESTROYED => {
            let utid = match p.processes.thread_or_null(&p.storage, tid) {
                Some(u) => u,
                None => {
                    let u = p.processes.get_or_create_thread(&mut p.storage, tid);
                    p.processes
                        .set_thread_name(&mut p.storage, u, comm, NamePriority::Ftrace);
                    u
                }
            };
            p.processes.end_thread(&mut p.storage, ts, tid);
            return Some(utid);
        }
        2..=DEAD => match p.processes.thread_or_null(&p.storage, tid) {
            Some(utid) => {
                let prev = p.sched.prev_state(&p.storage, utid);
                let dead = p.storage.strings.intern(STATE_NAMES[DEAD as usize]);
                let running = p.storage.strings.intern(STATE_NAMES[RUNNING as usize]);
                let invalid = prev == Some(dead) || (state == RUNNING && prev == Some(running));
                if invalid {
                    p.storage.stats.incr("generic_task_state_invalid_order");
                    return None;
                }
                utid
            }
            None => p.processes.get_or_create_thread(&mut p.storage, tid),
        },
        _ => {
            p.storage.stats.incr("task_state_invalid");
            return None;
        }
    };
    p.processes
        .set_thread_name(&mut p.storage, utid, comm, NamePriority::Ftrace);
    Some(utid)
}

/// What a state event did to its CPU's slices.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Switch {
    /// A running state opened a slice on a CPU with none open.
    Start,
    /// A running state closed the CPU's open slice (of another task) and
    /// opened its own.
    StartClosingPrevious,
    /// The running task's state closed its slice.
    Close,
    /// The state is the end state of a slice a running state closed at
    /// the same time.
    EndStateOfClosed,
    /// Nothing to do with a slice.
    None,
}

#[allow(clippy::too_many_arguments)]
fn push_switch(
    p: &mut Parser,
    ts: i64,
    cpu: u32,
    tid: i64,
    utid: u32,
    state: StrId,
    running: bool,
    prio: i32,
) -> Switch {
    let open = p.generic_kernel.cpus.get(&cpu).copied();
    if running {
        let mut switch = Switch::Start;
        if let Some(prev) = open {
            SchedTracker::close_slice(&mut p.storage, prev.slice, ts, StrId::NULL);
            p.generic_kernel.closed.insert(prev.utid, prev);
            switch = Switch::StartClosingPrevious;
        }
        let slice = SchedTracker::start_slice(&mut p.storage, cpu, ts, utid, prio);
        p.generic_kernel
            .cpus
            .insert(cpu, Pending { slice, tid, utid });
        return switch;
    }
    if let Some(prev) = open.filter(|o| o.tid == tid) {
        SchedTracker::close_slice(&mut p.storage, prev.slice, ts, state);
        p.generic_kernel.cpus.remove(&cpu);
        return Switch::Close;
    }
    if let Some(closed) = p.generic_kernel.closed.get(&utid).copied() {
        let end = p
            .storage
            .sched
            .slices
            .get(closed.slice)
            .map(|r| r.ts.saturating_add(r.dur));
        if end == Some(ts) {
            if let Some(r) = p.storage.sched.slices.get_mut(closed.slice) {
                r.end_state = state;
            }
            p.generic_kernel.closed.remove(&utid);
            return Switch::EndStateOfClosed;
        }
    }
    Switch::None
}

/// A CPU's frequency, in kHz on the CPU's `cpufreq` track.
fn cpu_freq(p: &mut Parser, input: &Input<'_>) {
    let d = Decoder::new(input.bytes);
    let cpu = d.find_last(1).and_then(|f| f.as_i32().ok()).unwrap_or(0);
    let hz = d.find_last(2).and_then(|f| f.as_i64().ok()).unwrap_or(0);
    let mut spec = TrackSpec::new(Some("cpufreq"), "cpu_frequency", EventType::Counter);
    spec.dimensions = vec![("cpu", ArgValue::Int(i64::from(cpu as u32)))];
    let track = p.tracks.interned_counter(&mut p.storage, &spec);
    p.storage.counters.push(CounterRow {
        ts: input.ts,
        track_id: track,
        value: hz as f64 / 1000.0,
        arg_set_id: OptU32::NONE,
    });
}

/// A thread's new name (its process's too when it is the main thread).
fn task_rename(p: &mut Parser, input: &Input<'_>) {
    let d = Decoder::new(input.bytes);
    let tid = d.find_last(1).and_then(|f| f.as_i64().ok()).unwrap_or(0);
    let comm = d.find_last(2).and_then(|f| text(&f));
    let utid = p.processes.get_or_create_thread(&mut p.storage, tid);
    let Some(comm) = comm else {
        return;
    };
    let comm = p.storage.strings.intern(&comm);
    p.processes
        .set_thread_name(&mut p.storage, utid, comm, NamePriority::Ftrace);
    let upid = p.storage.threads.get(utid as usize).and_then(|t| t.upid);
    if let Some(upid) = upid {
        if p.storage.processes.get(upid as usize).map(|r| r.pid) == Some(tid) {
            p.processes
                .set_process_name(&mut p.storage, upid, comm, NamePriority::Ftrace);
        }
    }
}

/// Processes (pid, parent, command line) and threads (process, name, main
/// and idle flags); a process without a command line is skipped, as
/// upstream skips it, and no process gets a main thread it was not told of.
fn process_tree(p: &mut Parser, input: &Input<'_>) {
    for f in fields(input.bytes).filter(|f| f.id == 1) {
        let Ok(bytes) = f.as_bytes() else { continue };
        let (mut pid, mut ppid, mut cmdline) = (0i64, 0i64, None);
        for pf in fields(bytes) {
            match pf.id {
                1 => pid = pf.as_i64().unwrap_or(0),
                2 => ppid = pf.as_i64().unwrap_or(0),
                3 => cmdline = text(&pf),
                _ => {}
            }
        }
        let Some(cmdline) = cmdline else { continue };
        let name = cmdline.split(' ').next().unwrap_or("");
        let pupid = p
            .processes
            .get_or_create_process_without_main_thread(&mut p.storage, ppid);
        let upid = p
            .processes
            .get_or_create_process_without_main_thread(&mut p.storage, pid);
        let name = p.storage.strings.intern(name);
        let cmd = p.storage.strings.intern(&cmdline);
        p.processes
            .set_process_name(&mut p.storage, upid, name, NamePriority::ProcessTree);
        if let Some(row) = p.storage.processes.get_mut(upid as usize) {
            if row.parent_upid.is_none() {
                row.parent_upid = Some(pupid);
            }
            row.cmdline = cmd;
        }
    }
    for f in fields(input.bytes).filter(|f| f.id == 2) {
        let Ok(bytes) = f.as_bytes() else { continue };
        let (mut tid, mut pid, mut comm, mut main, mut idle) = (0i64, 0i64, None, false, false);
        for tf in fields(bytes) {
            match tf.id {
                1 => tid = tf.as_i64().unwrap_or(0),
                2 => pid = tf.as_i64().unwrap_or(0),
                3 => comm = text(&tf),
                4 => main = tf.as_bool().unwrap_or(false),
                5 => idle = tf.as_bool().unwrap_or(false),
                _ => {}
            }
        }
        p.processes
            .get_or_create_process_without_main_thread(&mut p.storage, pid);
        let utid = p.processes.update_thread(&mut p.storage, tid, pid);
        if let Some(t) = p.storage.threads.get_mut(utid as usize) {
            t.is_main_thread = Some(main);
            t.is_idle = idle;
        }
        if let Some(comm) = comm {
            let id = p.storage.strings.intern(&comm);
            p.processes
                .set_thread_name(&mut p.storage, utid, id, NamePriority::ProcessTree);
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::{TraceProcessor, Value};
    use zerotrace_protos::protos::TracePacket;

    /// A packet at `ts` whose payload field `field` is written by `f`,
    /// framed as a `Trace`'s packet.
    fn packet(ts: u64, field: u32, f: impl FnOnce(&mut protozero::Message<'_>)) -> Vec<u8> {
        let mut w = protozero::HeapWriter::new();
        {
            let mut p = TracePacket::from_message(w.root());
            p.set_timestamp(ts);
            let mut m = p.message().begin_nested(field);
            f(&mut m);
        }
        let p = w.finish().expect("writer");
        let mut out = vec![0x0a];
        let mut n = p.len();
        while n >= 0x80 {
            out.push((n as u8) | 0x80);
            n >>= 7;
        }
        out.push(n as u8);
        out.extend_from_slice(&p);
        out
    }

    /// A task state event (cpu, comm, tid, state, prio).
    fn state(ts: u64, cpu: Option<i32>, comm: &str, tid: i64, state: i32) -> Vec<u8> {
        packet(ts, super::TASK_STATE_EVENT, |m| {
            if let Some(cpu) = cpu {
                m.append_int32(1, cpu);
            }
            m.append_string(2, comm);
            m.append_int64(3, tid);
            m.append_enum(4, state);
            m.append_int32(5, 100);
        })
    }

    fn rows(tp: &TraceProcessor, sql: &str) -> Vec<Vec<Value>> {
        tp.query(sql).expect("query").rows
    }

    fn i(v: i64) -> Value {
        Value::Int(v)
    }

    fn s(v: &str) -> Value {
        Value::Text(v.to_owned())
    }

    fn stat(tp: &TraceProcessor, name: &str) -> Vec<Vec<Value>> {
        rows(
            tp,
            &format!("SELECT value FROM stats WHERE name = '{name}' AND value > 0"),
        )
    }

    #[test]
    fn a_cpus_switch_told_in_two_events_becomes_a_slice_with_its_end_state() {
        // task1 runs, task2 runs at 2000, and task1's own event says at
        // 2000 that it was destroyed: the closed slice gets X. task2 then
        // sleeps at 2500 (its own slice ends S), task3 runs at 3000 and
        // its runnable state at 3500 ends its slice R.
        let mut t = Vec::new();
        t.extend(state(1000, Some(0), "task1", 101, 3));
        t.extend(state(2000, Some(0), "task2", 102, 3));
        t.extend(state(2000, Some(0), "task1", 101, 8));
        t.extend(state(2500, Some(0), "task2", 102, 4));
        t.extend(state(3000, Some(0), "task3", 103, 3));
        t.extend(state(3500, None, "task3", 103, 2));
        let tp = TraceProcessor::from_bytes(&t).expect("trace");
        assert_eq!(
            rows(
                &tp,
                "SELECT ts, dur, cpu, utid, end_state, priority FROM sched_slice ORDER BY id"
            ),
            vec![
                vec![i(1000), i(1000), i(0), i(1), s("X"), i(100)],
                vec![i(2000), i(500), i(0), i(2), s("S"), i(100)],
                vec![i(3000), i(500), i(0), i(3), s("R"), i(100)],
            ]
        );
        assert_eq!(
            rows(
                &tp,
                "SELECT ts, dur, cpu, utid, state FROM thread_state ORDER BY id"
            ),
            vec![
                vec![i(1000), i(1000), i(0), i(1), s("Running")],
                vec![i(2000), i(-1), Value::Null, i(1), s("X")],
                vec![i(2000), i(500), i(0), i(2), s("Running")],
                vec![i(2500), i(-1), Value::Null, i(2), s("S")],
                vec![i(3000), i(500), i(0), i(3), s("Running")],
                vec![i(3500), i(-1), Value::Null, i(3), s("R")],
            ]
        );
        assert_eq!(
            rows(
                &tp,
                "SELECT tid, name, start_ts, end_ts FROM thread WHERE utid = 1"
            ),
            vec![vec![i(101), s("task1"), Value::Null, i(2000)]]
        );
    }

    #[test]
    fn a_late_end_state_leaves_the_closed_slice_without_one() {
        let mut t = Vec::new();
        t.extend(state(1000, Some(0), "task1", 101, 3));
        t.extend(state(2000, Some(0), "task2", 102, 3));
        t.extend(state(3000, Some(0), "task1", 101, 8));
        let tp = TraceProcessor::from_bytes(&t).expect("trace");
        assert_eq!(
            rows(&tp, "SELECT utid, end_state FROM sched_slice ORDER BY id"),
            vec![vec![i(1), Value::Null], vec![i(2), Value::Null]]
        );
        assert_eq!(
            rows(
                &tp,
                "SELECT ts, dur, utid, state FROM thread_state ORDER BY id"
            ),
            vec![
                vec![i(1000), i(1000), i(1), s("Running")],
                vec![i(2000), i(1000), i(1), Value::Null],
                vec![i(2000), i(-1), i(2), s("Running")],
                vec![i(3000), i(-1), i(1), s("X")],
            ]
        );
    }

    #[test]
    fn events_out_of_order_are_counted_and_dropped() {
        let mut t = Vec::new();
        // Running twice.
        t.extend(state(1000, Some(0), "a", 101, 3));
        t.extend(state(1100, Some(0), "a", 101, 3));
        // Created for a live thread.
        t.extend(state(1200, None, "a", 101, 1));
        // Running after dead.
        t.extend(state(1300, None, "b", 102, 7));
        t.extend(state(1400, Some(1), "b", 102, 3));
        // Two changes at one time (counted, kept).
        t.extend(state(1500, None, "c", 103, 4));
        t.extend(state(1500, None, "c", 103, 5));
        // An unknown state.
        t.extend(state(1600, None, "d", 104, 0));
        t.extend(state(1700, None, "d", 104, 42));
        let tp = TraceProcessor::from_bytes(&t).expect("trace");
        assert_eq!(
            stat(&tp, "generic_task_state_invalid_order"),
            vec![vec![i(4)]]
        );
        assert_eq!(stat(&tp, "task_state_invalid"), vec![vec![i(2)]]);
        assert_eq!(
            rows(&tp, "SELECT ts, utid, state FROM thread_state ORDER BY id"),
            vec![
                vec![i(1000), i(1), s("Running")],
                vec![i(1300), i(2), s("Z")],
                vec![i(1500), i(3), s("S")],
                vec![i(1500), i(3), s("D")],
            ]
        );
    }

    #[test]
    fn created_and_destroyed_threads_start_and_end_and_a_tid_comes_back_new() {
        let mut t = Vec::new();
        t.extend(state(1000, None, "task1", 1, 1));
        t.extend(state(2000, None, "task1", 1, 8));
        t.extend(state(3000, Some(0), "again", 1, 3));
        t.extend(packet(4000, super::TASK_RENAME_EVENT, |m| {
            m.append_int64(1, 1);
            m.append_string(2, "renamed");
        }));
        let tp = TraceProcessor::from_bytes(&t).expect("trace");
        assert_eq!(
            rows(
                &tp,
                "SELECT utid, tid, name, start_ts, end_ts FROM thread ORDER BY utid"
            ),
            vec![
                vec![i(0), i(0), s("swapper"), Value::Null, Value::Null],
                vec![i(1), i(1), s("task1"), i(1000), i(2000)],
                vec![i(2), i(1), s("renamed"), Value::Null, Value::Null],
            ]
        );
        assert_eq!(
            rows(
                &tp,
                "SELECT ts, dur, utid, state FROM thread_state ORDER BY id"
            ),
            vec![
                vec![i(1000), i(1000), i(1), s("Created")],
                vec![i(2000), i(-1), i(1), s("X")],
                vec![i(3000), i(-1), i(2), s("Running")],
            ]
        );
    }

    #[test]
    fn the_process_tree_makes_no_main_thread_it_was_not_told_of() {
        let t = packet(1000, super::PROCESS_TREE, |m| {
            for (pid, ppid, cmdline) in [(1, None, "init"), (10, Some(1), "proc1 --hello")] {
                let mut p = m.begin_nested(1);
                p.append_int64(1, pid);
                if let Some(ppid) = ppid {
                    p.append_int64(2, ppid);
                }
                p.append_string(3, cmdline);
            }
            // No command line: skipped.
            m.begin_nested(1).append_int64(1, 99);
            for (tid, pid, comm, main, idle) in [
                (1234, 10, "task1", true, false),
                (5678, 22, "task2", false, false),
                (9012, 33, "idle", false, true),
            ] {
                let mut th = m.begin_nested(2);
                th.append_int64(1, tid);
                th.append_int64(2, pid);
                th.append_string(3, comm);
                th.append_bool(4, main);
                th.append_bool(5, idle);
            }
        });
        let tp = TraceProcessor::from_bytes(&t).expect("trace");
        assert_eq!(
            rows(
                &tp,
                "SELECT upid, pid, name, parent_upid, cmdline FROM process ORDER BY upid"
            ),
            vec![
                vec![i(0), i(0), Value::Null, Value::Null, Value::Null],
                vec![i(1), i(1), s("init"), i(0), s("init")],
                vec![i(2), i(10), s("proc1"), i(1), s("proc1 --hello")],
                vec![i(3), i(22), Value::Null, Value::Null, Value::Null],
                vec![i(4), i(33), Value::Null, Value::Null, Value::Null],
            ]
        );
        assert_eq!(
            rows(
                &tp,
                "SELECT utid, tid, name, upid, is_main_thread, is_idle FROM thread ORDER BY utid"
            ),
            vec![
                vec![i(0), i(0), s("swapper"), i(0), i(1), i(1)],
                vec![i(1), i(1234), s("task1"), i(2), i(1), i(0)],
                vec![i(2), i(5678), s("task2"), i(3), i(0), i(0)],
                vec![i(3), i(9012), s("idle"), i(4), i(0), i(1)],
            ]
        );
    }

    #[test]
    fn cpu_frequency_is_a_cpufreq_counter_in_khz() {
        let t = packet(1000, super::CPU_FREQ_EVENT, |m| {
            m.append_int32(1, 2);
            m.append_int64(2, 1_500_000_000);
        });
        let tp = TraceProcessor::from_bytes(&t).expect("trace");
        assert_eq!(
            rows(
                &tp,
                "SELECT c.ts, t.cpu, c.value, t.name, t.type FROM counter c \
                 JOIN cpu_counter_track t ON c.track_id = t.id"
            ),
            vec![vec![
                i(1000),
                i(2),
                Value::Real(1_500_000.0),
                s("cpufreq"),
                s("cpu_frequency")
            ]]
        );
    }
}

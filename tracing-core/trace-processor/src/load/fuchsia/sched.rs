//! Fuchsia scheduler records, in time order, into `sched_slice` and
//! `thread_state` as upstream puts them. Per thread koid the import keeps
//! its process (from the kernel object records), the time of its last
//! change and its open sched slice and state rows. A switch closes the
//! outgoing thread's slice and state (the slice ends in the state the
//! record gives: `R`, `S`, `T`, `Z`, `X`) and opens its new state; the
//! incoming thread gets a slice (its priority or weight) and `Running`.
//! A wakeup opens `W` with its waker (the woken thread itself when none is
//! named). Idle threads (pid 0 and priority 0 in a legacy switch, weight
//! i32::MIN otherwise) are left out. A weight or waker argument of the
//! wrong type drops the record (`fuchsia_invalid_event_arg_type`).

use crate::column_store::strings::StrId;
use crate::hash::HashMap;
use crate::parser::Parser;
use crate::tables::sched::{SchedSliceRow, ThreadStateRow};
use crate::tracker::profiler_samples::ucpu;

use super::{Arg, ArgValue, SchedRecord};

/// The weight of an idle thread.
const IDLE_WEIGHT: i32 = i32::MIN;

/// One thread's scheduling state.
#[derive(Debug, Default, Clone, Copy)]
struct Thread {
    pid: u64,
    last_ts: i64,
    /// Index of its open `sched_slice` row.
    slice: Option<usize>,
    /// Index of its open `thread_state` row.
    state: Option<usize>,
}

/// The scheduler import's state.
#[derive(Debug)]
pub struct SchedImport {
    threads: HashMap<u64, Thread>,
    running: StrId,
    waking: StrId,
    weight: StrId,
    waker: StrId,
    incoming_weight: StrId,
    outgoing_weight: StrId,
}

/// The state a thread is left in, as a `thread_state` text.
fn outgoing_state(p: &mut Parser, state: u32) -> StrId {
    let text = match state {
        0 | 1 => "R",
        2 => "T",
        3 => "S",
        4 => "Z",
        5 => "X",
        _ => return StrId::NULL,
    };
    p.storage.strings.intern(text)
}

impl SchedImport {
    /// The import, with the processes kernel object records gave threads.
    pub fn new(p: &mut Parser, pids: HashMap<u64, u64>) -> Self {
        let s = &mut p.storage.strings;
        SchedImport {
            threads: pids
                .into_iter()
                .map(|(tid, pid)| {
                    (
                        tid,
                        Thread {
                            pid,
                            ..Thread::default()
                        },
                    )
                })
                .collect(),
            running: s.intern("Running"),
            waking: s.intern("W"),
            weight: s.intern("weight"),
            waker: s.intern("waker"),
            incoming_weight: s.intern("incoming_weight"),
            outgoing_weight: s.intern("outgoing_weight"),
        }
    }

    /// A thread's state, made on first use.
    fn thread(&mut self, tid: u64) -> Thread {
        *self.threads.entry(tid).or_default()
    }

    fn utid(p: &mut Parser, tid: u64, t: &Thread) -> u32 {
        p.processes.update_thread(
            &mut p.storage,
            i64::from(tid as u32),
            i64::from(t.pid as u32),
        )
    }

    /// Closes a thread's open state row at `ts`.
    fn close_state(p: &mut Parser, t: &mut Thread, dur: i64) {
        if let Some(i) = t.state.take() {
            if let Some(r) = p.storage.sched.thread_states.get_mut(i) {
                r.dur = dur;
            }
        }
    }

    fn open_state(p: &mut Parser, row: ThreadStateRow) -> usize {
        p.storage.sched.thread_states.push(row);
        p.storage.sched.thread_states.len() - 1
    }

    fn switch_from(&mut self, p: &mut Parser, tid: u64, ts: i64, cpu: u32, state: u32) {
        let mut t = self.thread(tid);
        let state = outgoing_state(p, state);
        let utid = Self::utid(p, tid, &t);
        let dur = ts - t.last_ts;
        t.last_ts = ts;
        if let Some(i) = t.slice.take() {
            if let Some(r) = p.storage.sched.slices.get_mut(i) {
                r.dur = dur;
                r.end_state = state;
            }
        }
        Self::close_state(p, &mut t, dur);
        let ucpu = ucpu(&mut p.storage, cpu);
        t.state = Some(Self::open_state(
            p,
            ThreadStateRow {
                ts,
                dur: -1,
                utid,
                state,
                ucpu: Some(ucpu),
                ..ThreadStateRow::default()
            },
        ));
        self.threads.insert(tid, t);
    }

    fn switch_to(&mut self, p: &mut Parser, tid: u64, ts: i64, cpu: u32, weight: i32) {
        let mut t = self.thread(tid);
        let utid = Self::utid(p, tid, &t);
        let dur = ts - t.last_ts;
        t.last_ts = ts;
        Self::close_state(p, &mut t, dur);
        let ucpu = ucpu(&mut p.storage, cpu);
        p.storage.sched.slices.push(SchedSliceRow {
            ts,
            dur: -1,
            utid,
            priority: weight,
            ucpu,
            ..SchedSliceRow::default()
        });
        t.slice = Some(p.storage.sched.slices.len() - 1);
        t.state = Some(Self::open_state(
            p,
            ThreadStateRow {
                ts,
                dur: -1,
                utid,
                state: self.running,
                ucpu: Some(ucpu),
                ..ThreadStateRow::default()
            },
        ));
        self.threads.insert(tid, t);
    }

    fn wake(&mut self, p: &mut Parser, tid: u64, ts: i64, cpu: u32, waker: Option<(u32, u64)>) {
        let mut t = self.thread(tid);
        let utid = Self::utid(p, tid, &t);
        let dur = ts - t.last_ts;
        t.last_ts = ts;
        // The waker's state row: the named waker's open one, else this
        // thread's own.
        let waker_row = match waker {
            Some((_, wtid)) => self.threads.get(&wtid).and_then(|w| w.state),
            None => t.state,
        };
        let waker_id = waker_row.and_then(|i| u32::try_from(i).ok());
        Self::close_state(p, &mut t, dur);
        let ucpu = ucpu(&mut p.storage, cpu);
        t.state = Some(Self::open_state(
            p,
            ThreadStateRow {
                ts,
                dur: -1,
                utid,
                state: self.waking,
                ucpu: Some(ucpu),
                waker_utid: Some(waker.map_or(utid, |(u, _)| u)),
                waker_id,
                ..ThreadStateRow::default()
            },
        ));
        self.threads.insert(tid, t);
    }

    /// A weight argument's value; Err when it is no i32.
    fn weight(p: &mut Parser, a: &Arg) -> Result<i32, ()> {
        match a.value {
            ArgValue::I32(w) => Ok(w),
            _ => {
                p.storage.stats.incr("fuchsia_invalid_event_arg_type");
                Err(())
            }
        }
    }

    /// One scheduler record at `ts`.
    pub fn record(&mut self, p: &mut Parser, ts: i64, r: SchedRecord) {
        match r {
            SchedRecord::LegacySwitch {
                cpu,
                outgoing_state,
                outgoing,
                incoming,
                outgoing_priority,
                incoming_priority,
            } => {
                let out = self.thread(outgoing.1);
                let inn = self.thread(incoming.1);
                if !(out.pid == 0 && outgoing_priority == 0) {
                    self.switch_from(p, outgoing.1, ts, cpu, outgoing_state);
                }
                if !(inn.pid == 0 && incoming_priority == 0) {
                    self.switch_to(p, incoming.1, ts, cpu, incoming_priority);
                }
            }
            SchedRecord::Switch {
                cpu,
                outgoing_state,
                outgoing_tid,
                incoming_tid,
                args,
            } => {
                self.thread(outgoing_tid);
                self.thread(incoming_tid);
                let (mut inw, mut outw) = (0, 0);
                for a in &args {
                    if a.name == self.incoming_weight {
                        let Ok(w) = Self::weight(p, a) else { return };
                        inw = w;
                    } else if a.name == self.outgoing_weight {
                        let Ok(w) = Self::weight(p, a) else { return };
                        outw = w;
                    }
                }
                if outw != IDLE_WEIGHT {
                    self.switch_from(p, outgoing_tid, ts, cpu, outgoing_state);
                }
                if inw != IDLE_WEIGHT {
                    self.switch_to(p, incoming_tid, ts, cpu, inw);
                }
            }
            SchedRecord::Wakeup { cpu, tid, args } => {
                self.thread(tid);
                let mut weight = 0;
                let mut waker = None;
                for a in &args {
                    if a.name == self.weight {
                        let Ok(w) = Self::weight(p, a) else { return };
                        weight = w;
                    } else if a.name == self.waker {
                        let ArgValue::Koid(k) = a.value else {
                            p.storage.stats.incr("fuchsia_invalid_event_arg_type");
                            return;
                        };
                        let u = p
                            .processes
                            .get_or_create_thread(&mut p.storage, i64::from(k as u32));
                        waker = Some((u, k));
                    }
                }
                if weight != IDLE_WEIGHT {
                    self.wake(p, tid, ts, cpu, waker);
                }
            }
        }
    }
}

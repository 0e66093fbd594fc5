//! Scheduling state across events: per CPU, the open `sched_slice` and who
//! runs there (so the next switch closes it, and compact events, which omit
//! the previous task, can name it); per thread, its open `thread_state` row
//! and its last blocked row (for `sched_blocked_reason`). A state is
//! `Running` on a CPU, runnable `R` after a wakeup, or the switch-out's
//! `prev_state` text; the swapper (utid 0) gets no thread states.

use crate::hash::HashMap;

use crate::column_store::strings::StrId;
use crate::storage::Storage;
use crate::storage::sched_rows::{SchedSliceRow, ThreadStateRow};

/// Who runs on one CPU, as the last switch there said.
#[derive(Debug, Clone, Copy, Default)]
pub struct CpuRun {
    /// The open slice (row index), if a switch opened one.
    pub slice: Option<usize>,
    /// The tid switched in.
    pub pid: i64,
    /// Its utid (None before the CPU's first switch).
    pub utid: Option<u32>,
    /// Its priority.
    pub prio: i32,
}

/// A thread's last rows in `thread_state`.
#[derive(Debug, Clone, Copy)]
struct ThreadRows {
    last: usize,
    last_blocked: Option<usize>,
}

/// The tracker.
#[derive(Debug, Default)]
pub struct SchedTracker {
    cpus: HashMap<u32, CpuRun>,
    threads: HashMap<u32, ThreadRows>,
    running: StrId,
    runnable: StrId,
    /// The kernel version from `system_info` (decides `prev_state` bits).
    pub kernel_version: Option<super::task_state::KernelVersion>,
    /// Whether ftrace kept its buffer from before tracing started
    /// (`FtraceStats.preserve_ftrace_buffer`): nothing is dropped then.
    pub preserve_ftrace_buffer: bool,
    /// Sequences whose ftrace setup errors were logged (the first start
    /// of trace stats of a sequence that reports any is the one logged).
    pub setup_errors_logged: crate::hash::HashSet<u32>,
    /// When tracing started (the service's event), read before parsing.
    pub tracing_started: Option<i64>,
    /// (drop before, keep only raw before), fixed at the first event.
    pub drop_before: Option<(i64, i64)>,
}

impl SchedTracker {
    /// What the last switch on `cpu` said.
    pub fn cpu(&self, cpu: u32) -> CpuRun {
        self.cpus.get(&cpu).copied().unwrap_or_default()
    }

    /// Records who runs on `cpu` now.
    pub fn set_cpu(&mut self, cpu: u32, run: CpuRun) {
        self.cpus.insert(cpu, run);
    }

    /// Opens a slice of `utid` on `cpu`; its row index.
    pub fn start_slice(s: &mut Storage, cpu: u32, ts: i64, utid: u32, prio: i32) -> usize {
        s.sched.slices.push(SchedSliceRow {
            ts,
            dur: -1,
            utid,
            end_state: StrId::NULL,
            priority: prio,
            ucpu: cpu,
        });
        s.sched.slices.len() - 1
    }

    /// Closes slice `idx` at `ts`, left in `end_state`.
    pub fn close_slice(s: &mut Storage, idx: usize, ts: i64, end_state: StrId) {
        if let Some(r) = s.sched.slices.get_mut(idx) {
            r.dur = ts - r.ts;
            r.end_state = end_state;
        }
    }

    fn ids(&mut self, s: &mut Storage) {
        if self.running.is_null() {
            self.running = s.strings.intern("Running");
            self.runnable = s.strings.intern("R");
        }
    }

    fn is_running(&self, state: StrId) -> bool {
        state == self.running
    }

    fn is_blocked(&self, state: StrId) -> bool {
        state != self.running && state != self.runnable
    }

    fn last_state(&self, s: &Storage, utid: u32) -> Option<StrId> {
        let rows = self.threads.get(&utid)?;
        s.sched.thread_states.get(rows.last).map(|r| r.state)
    }

    /// A switch on `cpu` at `ts`: `prev` leaves in `prev_state`, `next`
    /// runs.
    pub fn switch(
        &mut self,
        s: &mut Storage,
        ts: i64,
        cpu: u32,
        prev: u32,
        prev_state: StrId,
        next: u32,
    ) {
        self.ids(s);
        // A previous thread that was not running: data was lost, its open
        // state keeps its unknown end.
        let lost = self
            .last_state(s, prev)
            .is_some_and(|st| !self.is_running(st));
        self.close(s, ts, prev, lost);
        self.open(s, ts, prev, prev_state, None, None, None);
        self.close(s, ts, next, false);
        let running = self.running;
        self.open(s, ts, next, running, Some(cpu), None, None);
    }

    /// `waker` woke `utid` at `ts` (a blocked thread becomes runnable; a
    /// thread not blocked is left as it is).
    pub fn waking(
        &mut self,
        s: &mut Storage,
        ts: i64,
        utid: u32,
        waker: Option<u32>,
        common_flags: Option<u32>,
    ) {
        self.ids(s);
        let runnable = self.runnable;
        match self.last_state(s, utid) {
            None => self.open(s, ts, utid, runnable, None, waker, common_flags),
            Some(st) if self.is_blocked(st) => {
                self.close(s, ts, utid, false);
                self.open(s, ts, utid, runnable, None, waker, common_flags);
            }
            Some(_) => {}
        }
    }

    /// `waker` created `utid` (task_newtask): it starts runnable, woken
    /// outside interrupt context.
    pub fn new_task(&mut self, s: &mut Storage, ts: i64, utid: u32, waker: u32) {
        self.ids(s);
        let runnable = self.runnable;
        self.open(s, ts, utid, runnable, None, Some(waker), Some(0));
    }

    /// A thread's new state as one event reports it (the generic kernel
    /// packets): its open state closes at `ts` and `state` opens (`cpu`
    /// for a running state). True when the closed state began at `ts`
    /// too (two changes at one time, which upstream counts).
    pub fn push_thread_state(
        &mut self,
        s: &mut Storage,
        ts: i64,
        utid: u32,
        state: StrId,
        cpu: Option<u32>,
    ) -> bool {
        self.ids(s);
        self.close(s, ts, utid, false);
        let same_ts = self
            .threads
            .get(&utid)
            .and_then(|r| s.sched.thread_states.get(r.last))
            .is_some_and(|r| r.ts == ts);
        self.open(s, ts, utid, state, cpu, None, None);
        same_ts
    }

    /// Replaces the state of `utid`'s open row (nothing when it has none).
    pub fn update_pending_state(&mut self, s: &mut Storage, utid: u32, state: StrId) {
        let Some(rows) = self.threads.get(&utid) else {
            return;
        };
        if let Some(r) = s.sched.thread_states.get_mut(rows.last) {
            r.state = state;
        }
    }

    /// The state of `utid`'s last row, if it has one.
    pub fn prev_state(&self, s: &Storage, utid: u32) -> Option<StrId> {
        self.last_state(s, utid)
    }

    /// Why `utid` last blocked: I/O wait and the kernel function.
    pub fn blocked_reason(
        &mut self,
        s: &mut Storage,
        utid: u32,
        io_wait: Option<bool>,
        function: Option<StrId>,
    ) {
        let Some(row) = self.threads.get(&utid).and_then(|r| r.last_blocked) else {
            return;
        };
        if let Some(r) = s.sched.thread_states.get_mut(row) {
            if io_wait.is_some() {
                r.io_wait = io_wait;
            }
            if let Some(f) = function {
                r.blocked_function = f;
            }
        }
    }

    fn close(&mut self, s: &mut Storage, ts: i64, utid: u32, lost: bool) {
        if lost {
            return;
        }
        let Some(rows) = self.threads.get(&utid) else {
            return;
        };
        if let Some(r) = s.sched.thread_states.get_mut(rows.last) {
            r.dur = ts - r.ts;
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn open(
        &mut self,
        s: &mut Storage,
        ts: i64,
        utid: u32,
        state: StrId,
        cpu: Option<u32>,
        waker: Option<u32>,
        common_flags: Option<u32>,
    ) {
        if utid == 0 {
            return;
        }
        let waker_id = waker
            .and_then(|w| self.threads.get(&w))
            .filter(|w| {
                s.sched
                    .thread_states
                    .get(w.last)
                    .is_some_and(|r| self.is_running(r.state))
            })
            .and_then(|w| u32::try_from(w.last).ok());
        s.sched.thread_states.push(ThreadStateRow {
            ts,
            dur: -1,
            utid,
            state,
            waker_utid: waker,
            waker_id,
            irq_context: common_flags.map(|f| u32::from(f & (0x08 | 0x10) != 0)),
            ucpu: cpu,
            ..ThreadStateRow::default()
        });
        let row = s.sched.thread_states.len() - 1;
        if self.is_running(state) {
            self.threads.insert(
                utid,
                ThreadRows {
                    last: row,
                    last_blocked: None,
                },
            );
        } else if self.is_blocked(state) {
            self.threads.insert(
                utid,
                ThreadRows {
                    last: row,
                    last_blocked: Some(row),
                },
            );
        } else {
            self.threads
                .entry(utid)
                .and_modify(|r| r.last = row)
                .or_insert(ThreadRows {
                    last: row,
                    last_blocked: None,
                });
        }
    }
}

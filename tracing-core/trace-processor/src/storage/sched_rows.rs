//! The rows ftrace's scheduler events and raw events load into while a
//! trace is read: `sched_slice` (one per CPU run of a thread),
//! `thread_state` (what a thread was doing, between its switches and
//! wakeups) and `ftrace_event` (every ftrace event with its fields as
//! args), with Perfetto's columns; `sql/build_sched.rs` turns them into
//! columns.

use super::strings::StrId;

/// A row of `__intrinsic_sched_slice`.
#[derive(Debug, Clone, Default)]
pub struct SchedSliceRow {
    /// When the thread was switched in.
    pub ts: i64,
    /// How long it ran; -1 while no switch-out closed it.
    pub dur: i64,
    /// The thread.
    pub utid: u32,
    /// The state it was left in (`prev_state` of the closing switch).
    pub end_state: StrId,
    /// Its priority when switched in.
    pub priority: i32,
    /// The CPU (ucpu).
    pub ucpu: u32,
}

/// A row of `__intrinsic_thread_state`.
#[derive(Debug, Clone, Default)]
pub struct ThreadStateRow {
    /// Start.
    pub ts: i64,
    /// Duration; -1 while open.
    pub dur: i64,
    /// The thread.
    pub utid: u32,
    /// `Running`, `R`, `R+`, `S`, `D`, ...
    pub state: StrId,
    /// Whether a blocked thread waited for I/O (sched_blocked_reason).
    pub io_wait: Option<bool>,
    /// The kernel function it blocked in (sched_blocked_reason).
    pub blocked_function: StrId,
    /// The thread that woke it.
    pub waker_utid: Option<u32>,
    /// The waker's running state row.
    pub waker_id: Option<u32>,
    /// Whether the wakeup came from interrupt context.
    pub irq_context: Option<u32>,
    /// The CPU it runs on (Running states only).
    pub ucpu: Option<u32>,
}

/// A row of `__intrinsic_ftrace_event`.
#[derive(Debug, Clone, Default)]
pub struct FtraceEventRow {
    /// Time.
    pub ts: i64,
    /// The event's name (`sched_switch`).
    pub name: StrId,
    /// The thread that emitted it.
    pub utid: u32,
    /// Its fields.
    pub arg_set_id: Option<u32>,
    /// The kernel's common_flags.
    pub common_flags: u32,
    /// The CPU it was recorded on (ucpu).
    pub ucpu: u32,
}

/// The scheduling and raw ftrace tables.
#[derive(Debug, Clone, Default)]
pub struct SchedRows {
    /// `sched_slice`.
    pub slices: Vec<SchedSliceRow>,
    /// `thread_state`.
    pub thread_states: Vec<ThreadStateRow>,
    /// `ftrace_event`.
    pub ftrace_events: Vec<FtraceEventRow>,
}

//! The scheduling and raw ftrace tables (upstream's `sched_tables.py`,
//! `ftrace_tables.py`): `sched_slice` (one per CPU run of a thread),
//! `thread_state` (what a thread was doing, between its switches and
//! wakeups) and `ftrace_event` (every ftrace event with its fields as
//! args), and `_linux_interrupt_mapping` (the IRQs a trace names). The
//! views over them are in `sql/views_sched.rs`.

use super::table;
use crate::column_store::strings::StrId;

table! {
    /// A row of `__intrinsic_sched_slice`.
    pub struct SchedSliceRow in "__intrinsic_sched_slice" sorted by ts,
        views ["sched", "sched_slice"] {
        /// When the thread was switched in.
        ts: i64,
        /// How long it ran; -1 while no switch-out closed it.
        dur: i64,
        /// The thread.
        utid: u32,
        /// The state it was left in (`prev_state` of the closing switch).
        end_state: StrId,
        /// Its priority when switched in.
        priority: i32,
        /// The CPU (ucpu).
        ucpu: u32,
    }
}

table! {
    /// A row of `__intrinsic_thread_state`.
    pub struct ThreadStateRow in "__intrinsic_thread_state" sorted by ts,
        views ["thread_state"] {
        /// Start.
        ts: i64,
        /// Duration; -1 while open.
        dur: i64,
        /// The thread.
        utid: u32,
        /// `Running`, `R`, `R+`, `S`, `D`, ...
        state: StrId,
        /// Whether a blocked thread waited for I/O (sched_blocked_reason).
        io_wait: Option<bool>,
        /// The kernel function it blocked in (sched_blocked_reason).
        blocked_function: StrId,
        /// The thread that woke it.
        waker_utid: Option<u32>,
        /// The waker's running state row.
        waker_id: Option<u32>,
        /// Whether the wakeup came from interrupt context.
        irq_context: Option<u32>,
        /// The CPU it runs on (Running states only).
        ucpu: Option<u32>,
    }
}

table! {
    /// A row of `__intrinsic_ftrace_event`.
    pub struct FtraceEventRow in "__intrinsic_ftrace_event" sorted by ts,
        views ["ftrace_event", "raw"] {
        /// Time.
        ts: i64,
        /// The event's name (`sched_switch`).
        name: StrId,
        /// The thread that emitted it.
        utid: u32,
        /// Its fields.
        arg_set_id: Option<u32>,
        /// The kernel's common_flags.
        common_flags: u32,
        /// The CPU it was recorded on (ucpu).
        ucpu: u32,
    }
}

table! {
    /// A row of `_linux_interrupt_mapping`: an IRQ's number and name, as
    /// the trace's `interrupt_info` listed them (`/proc/interrupts`).
    pub struct InterruptMappingRow in "_linux_interrupt_mapping" {
        /// The IRQ's number.
        irq_id: u32,
        /// Its name.
        name: StrId,
        /// The machine that listed it (0: the host).
        machine_id: Option<u32>,
    }
}

/// The sched tables' declarations.
pub const TABLES: &[super::TableDecl] = &[
    SchedSliceRow::TABLE,
    ThreadStateRow::TABLE,
    FtraceEventRow::TABLE,
    InterruptMappingRow::TABLE,
];

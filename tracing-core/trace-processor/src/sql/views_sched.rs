//! The public scheduling and raw ftrace views with Perfetto's names and
//! column order: `sched` (with `cpu` and `ts_end`), `sched_slice`,
//! `thread_state`, `ftrace_event` and its older name `raw`.

/// The statements that create the views.
pub const VIEWS: &str = r#"
CREATE VIEW sched AS SELECT id, ts, dur, ucpu AS cpu, utid, end_state, priority, ucpu,
  ts + dur AS ts_end FROM __intrinsic_sched_slice;
CREATE VIEW sched_slice AS SELECT id, ts, dur, cpu, utid, end_state, priority, ucpu FROM sched;
CREATE VIEW thread_state AS SELECT id, ts, dur, ucpu AS cpu, utid, state, io_wait,
  blocked_function, waker_utid, waker_id, irq_context, ucpu FROM __intrinsic_thread_state;
CREATE VIEW ftrace_event AS SELECT id, ts, name, ucpu AS cpu, utid, arg_set_id, common_flags,
  ucpu FROM __intrinsic_ftrace_event;
CREATE VIEW raw AS SELECT * FROM ftrace_event;
"#;

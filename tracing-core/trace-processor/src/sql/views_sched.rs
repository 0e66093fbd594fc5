//! The raw ftrace view's older name, `raw` (another name of
//! `ftrace_event`). The scheduling views (`sched` with `cpu` and `ts_end`,
//! `sched_slice`, `thread_state`, `ftrace_event`) project their tables and
//! take their column lists from the declarations (`tables/views.rs`).

/// The statements that create the views.
pub const VIEWS: &str = r#"
CREATE VIEW raw AS SELECT * FROM ftrace_event;
"#;

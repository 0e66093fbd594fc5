-- Written for zerotrace: the `sched.runnable` module. It provides
-- `sched_previous_runnable_on_thread`: for each `Running` thread state
-- (with a known end), the thread's latest earlier runnable state (`R` or
-- `R+`, by id) and the latest runnable-or-running state up to it that
-- has a waker and was not woken from an interrupt (NULL when none). The
-- rows are built in one pass over the thread states by the native source
-- __intrinsic_sched_previous_runnable
-- (src/sql/thread_slice_time/previous_runnable.rs).

CREATE PERFETTO TABLE sched_previous_runnable_on_thread(
  id JOINID(thread_state.id),
  prev_runnable_id JOINID(thread_state.id),
  prev_wakeup_runnable_id JOINID(thread_state.id)
) AS
SELECT * FROM __intrinsic_sched_previous_runnable;

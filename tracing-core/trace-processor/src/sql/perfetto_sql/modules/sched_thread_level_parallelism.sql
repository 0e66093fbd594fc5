-- Written for zerotrace: the `sched.thread_level_parallelism` module. It
-- provides, as step counters over time (a row wherever the count may
-- change, holding until the next row): `sched_runnable_thread_count`
-- (threads in state R), `sched_uninterruptible_sleep_thread_count`
-- (threads in state D) and `sched_active_cpu_count` (CPUs running a
-- thread other than an idle/swapper one), each counted as
-- `intervals_overlap_count!` counts, built as columns in one pass by the
-- native sources of src/sql/sched_summary/.

INCLUDE PERFETTO MODULE intervals.overlap;

-- intervals_overlap_count! of thread_state's rows in state 'R'.
CREATE PERFETTO TABLE sched_runnable_thread_count(
  ts TIMESTAMP,
  runnable_thread_count LONG
) AS
SELECT * FROM __intrinsic_sched_runnable_thread_count;

-- intervals_overlap_count! of thread_state's rows in state 'D'.
CREATE PERFETTO TABLE sched_uninterruptible_sleep_thread_count(
  ts TIMESTAMP,
  uninterruptible_sleep_thread_count LONG
) AS
SELECT * FROM __intrinsic_sched_uninterruptible_sleep_thread_count;

-- intervals_overlap_count! of the sched slices whose utid is not one of
-- an idle thread.
CREATE PERFETTO TABLE sched_active_cpu_count(
  ts TIMESTAMP,
  active_cpu_count LONG
) AS
SELECT * FROM __intrinsic_sched_active_cpu_count;

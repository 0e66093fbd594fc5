-- Written for zerotrace: the `sched.thread_level_parallelism` module. It
-- provides, as step counters over time (a row wherever the count may
-- change, holding until the next row): `sched_runnable_thread_count`
-- (threads in state R), `sched_uninterruptible_sleep_thread_count`
-- (threads in state D) and `sched_active_cpu_count` (CPUs running a
-- thread other than an idle/swapper one), each through
-- `intervals_overlap_count!`.

INCLUDE PERFETTO MODULE intervals.overlap;

CREATE PERFETTO TABLE sched_runnable_thread_count(
  ts TIMESTAMP,
  runnable_thread_count LONG
) AS
WITH runnable AS (
  SELECT ts, dur FROM thread_state WHERE state = 'R'
)
SELECT ts, value AS runnable_thread_count
FROM intervals_overlap_count!(runnable, ts, dur)
ORDER BY ts;

CREATE PERFETTO TABLE sched_uninterruptible_sleep_thread_count(
  ts TIMESTAMP,
  uninterruptible_sleep_thread_count LONG
) AS
WITH sleeping AS (
  SELECT ts, dur FROM thread_state WHERE state = 'D'
)
SELECT ts, value AS uninterruptible_sleep_thread_count
FROM intervals_overlap_count!(sleeping, ts, dur)
ORDER BY ts;

CREATE PERFETTO TABLE sched_active_cpu_count(
  ts TIMESTAMP,
  active_cpu_count LONG
) AS
WITH busy AS (
  SELECT ts, dur
  FROM sched
  WHERE utid NOT IN (SELECT utid FROM thread WHERE is_idle)
)
SELECT ts, value AS active_cpu_count
FROM intervals_overlap_count!(busy, ts, dur)
ORDER BY ts;

-- Written for zerotrace: the `sched.time_in_state` module. It provides
-- `sched_time_in_state_for_thread` (per thread and scheduling state: the
-- time in it, the thread's total, and the whole percentage, rounded
-- down), `sched_percentage_of_time_in_state` (one row per thread with
-- the percentages of Running, R, R+, S, D and of every other state
-- together), and table functions giving the time a thread spent in each
-- state (and CPU) within an interval, and a CPU in each end state within
-- an interval; a state's time counts only its part inside the interval.

-- Per thread and state: the sum of the states' durations, the sum over
-- all the thread's states, and the first times 100 over the second;
-- built as columns in one pass over thread_state by the native source
-- __intrinsic_sched_time_in_state_for_thread (src/sql/sched_summary/).
CREATE PERFETTO TABLE sched_time_in_state_for_thread(
  utid JOINID(thread.id),
  total_runtime LONG,
  state STRING,
  time_in_state LONG,
  percentage_in_state LONG
) AS
SELECT * FROM __intrinsic_sched_time_in_state_for_thread;

CREATE PERFETTO MACRO _zt_sched_pct(state_name Expr)
RETURNS Expr
AS max(CASE WHEN state = $state_name THEN percentage_in_state END);

CREATE PERFETTO TABLE sched_percentage_of_time_in_state(
  utid JOINID(thread.id),
  running LONG,
  runnable LONG,
  runnable_preempted LONG,
  sleeping LONG,
  uninterruptible_sleep LONG,
  other LONG
) AS
SELECT
  utid,
  _zt_sched_pct!('Running') AS running,
  _zt_sched_pct!('R') AS runnable,
  _zt_sched_pct!('R+') AS runnable_preempted,
  _zt_sched_pct!('S') AS sleeping,
  _zt_sched_pct!('D') AS uninterruptible_sleep,
  sum(
    CASE
      WHEN state IN ('T', 't', 'X', 'Z', 'x', 'I', 'K', 'W', 'P', 'N') THEN time_in_state
    END
  ) * 100 / total_runtime AS other
FROM sched_time_in_state_for_thread
GROUP BY utid;

-- The part of [ts, ts + dur) inside [lo, lo + len): its length.
CREATE PERFETTO MACRO _zt_clipped_dur(ts Expr, dur Expr, lo Expr, len Expr)
RETURNS Expr
AS (min($ts + $dur, $lo + $len) - max($ts, $lo));

CREATE PERFETTO FUNCTION sched_time_in_state_for_thread_in_interval(
  ts TIMESTAMP,
  dur DURATION,
  utid JOINID(thread.id)
)
RETURNS TABLE(
  state STRING,
  io_wait BOOL,
  blocked_function LONG,
  dur DURATION
) AS
SELECT
  s.state,
  s.io_wait,
  s.blocked_function,
  sum(_zt_clipped_dur!(s.ts, s.dur, $ts, $dur)) AS dur
FROM thread_state AS s
WHERE
  s.utid = $utid
  AND s.dur > 0
  AND s.ts < $ts + $dur
  AND s.ts + s.dur > $ts
GROUP BY 1, 2, 3
ORDER BY 4 DESC;

CREATE PERFETTO FUNCTION sched_time_in_state_and_cpu_for_thread_in_interval(
  ts TIMESTAMP,
  dur DURATION,
  utid JOINID(thread.id)
)
RETURNS TABLE(
  state STRING,
  io_wait BOOL,
  cpu LONG,
  blocked_function LONG,
  dur DURATION
) AS
SELECT
  s.state,
  s.io_wait,
  s.cpu,
  s.blocked_function,
  sum(_zt_clipped_dur!(s.ts, s.dur, $ts, $dur)) AS dur
FROM thread_state AS s
WHERE
  s.utid = $utid
  AND s.dur > 0
  AND s.ts < $ts + $dur
  AND s.ts + s.dur > $ts
GROUP BY 1, 2, 3, 4
ORDER BY 5 DESC;

CREATE PERFETTO FUNCTION sched_time_in_state_for_cpu_in_interval(
  cpu LONG,
  ts TIMESTAMP,
  dur LONG
)
RETURNS TABLE(
  end_state STRING,
  dur LONG
) AS
SELECT
  s.end_state,
  sum(_zt_clipped_dur!(s.ts, s.dur, $ts, $dur)) AS dur
FROM sched AS s
WHERE
  s.cpu = $cpu
  AND s.dur != -1
  AND s.ts < $ts + $dur
  AND s.ts + s.dur > $ts
GROUP BY s.end_state;

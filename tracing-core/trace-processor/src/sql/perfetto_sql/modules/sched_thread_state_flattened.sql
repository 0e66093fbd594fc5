-- Written for zerotrace: the `sched.thread_state_flattened` module. It
-- joins each thread's flattened slices (`_slice_flattened`, where only
-- the innermost slice open at a time counts) with the thread's
-- scheduling states (`__span_joined_thread`, a SPAN_JOIN by utid), and
-- provides `_get_flattened_thread_state(slice_id, utid)`: the states over
-- the flattened pieces on the track of the slice chosen (by id and/or
-- thread; a NULL argument does not filter, and the first slice that
-- matches is taken) that start inside it; and
-- `_get_flattened_thread_state_aggregated(slice_id, utid)`: the same
-- summed per flattened slice, one column per state (D split by io_wait).

INCLUDE PERFETTO MODULE slices.flat_slices;

CREATE VIRTUAL TABLE __span_joined_thread
USING SPAN_JOIN(_slice_flattened PARTITIONED utid, thread_state PARTITIONED utid);

CREATE PERFETTO FUNCTION _get_flattened_thread_state(
  slice_id JOINID(slice.id),
  utid JOINID(thread.id)
)
RETURNS TABLE(
  ts TIMESTAMP,
  dur DURATION,
  utid JOINID(thread.id),
  depth LONG,
  name STRING,
  slice_id JOINID(slice.id),
  track_id JOINID(track.id),
  cpu LONG,
  state STRING,
  io_wait LONG,
  blocked_function STRING,
  waker_utid JOINID(thread.id),
  irq_context LONG
) AS
WITH
  chosen AS (
    SELECT s.ts, s.dur, s.track_id
    FROM slice AS s
    JOIN thread_track AS tt ON tt.id = s.track_id
    WHERE
      ($slice_id IS NULL OR s.id = $slice_id)
      AND ($utid IS NULL OR tt.utid = $utid)
    LIMIT 1
  )
SELECT
  j.ts,
  j.dur,
  j.utid,
  j.depth,
  j.name,
  j.slice_id,
  j.track_id,
  j.cpu,
  j.state,
  j.io_wait,
  j.blocked_function,
  j.waker_utid,
  j.irq_context
FROM __span_joined_thread AS j, chosen
WHERE
  j.track_id = chosen.track_id
  AND j.ts >= chosen.ts
  AND j.ts < chosen.ts + chosen.dur;

CREATE PERFETTO MACRO _zt_time_in(state_name Expr)
RETURNS Expr
AS sum(CASE WHEN fs.state = $state_name THEN fs.dur END);

CREATE PERFETTO FUNCTION _get_flattened_thread_state_aggregated(
  slice_id JOINID(slice.id),
  utid JOINID(thread.id)
)
RETURNS TABLE(
  slice_id JOINID(slice.id),
  slice_name STRING,
  uninterruptible_sleep_nonio LONG,
  uninterruptible_sleep_io LONG,
  runnable LONG,
  sleeping LONG,
  stopped LONG,
  traced LONG,
  exit_dead LONG,
  exit_zombie LONG,
  task_dead LONG,
  wake_kill LONG,
  waking LONG,
  parked LONG,
  no_load LONG,
  runnable_preempted LONG,
  running LONG,
  idle LONG,
  dur DURATION,
  depth LONG
) AS
SELECT
  fs.slice_id,
  fs.name AS slice_name,
  sum(CASE WHEN fs.state = 'D' AND fs.io_wait = 0 THEN fs.dur END) AS uninterruptible_sleep_nonio,
  sum(CASE WHEN fs.state = 'D' AND fs.io_wait = 1 THEN fs.dur END) AS uninterruptible_sleep_io,
  _zt_time_in!('R') AS runnable,
  _zt_time_in!('S') AS sleeping,
  _zt_time_in!('T') AS stopped,
  _zt_time_in!('t') AS traced,
  _zt_time_in!('X') AS exit_dead,
  _zt_time_in!('Z') AS exit_zombie,
  _zt_time_in!('x') AS task_dead,
  _zt_time_in!('K') AS wake_kill,
  _zt_time_in!('W') AS waking,
  _zt_time_in!('P') AS parked,
  _zt_time_in!('N') AS no_load,
  _zt_time_in!('R+') AS runnable_preempted,
  _zt_time_in!('Running') AS running,
  _zt_time_in!('I') AS idle,
  sum(fs.dur) AS dur,
  fs.depth
FROM _get_flattened_thread_state($slice_id, $utid) AS fs
GROUP BY fs.slice_id;

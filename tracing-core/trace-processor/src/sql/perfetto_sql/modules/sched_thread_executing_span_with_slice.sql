-- Written for zerotrace: the `sched.thread_executing_span_with_slice`
-- module, the critical path of sched.thread_executing_span joined with
-- what each thread was doing: its thread states and its innermost slices.
-- `_thread_executing_span_critical_path_stack(utid, ts, dur)` lays the
-- window out as stacks the UI draws: the thread's own state, blocked
-- function, io_wait, process, thread and slices, then the blocking
-- thread's, then the CPU a running thread ran on. (Upstream's pprof
-- graphs of these stacks are not provided: the engine has no
-- experimental_profile.) As in sched.thread_executing_span, every object
-- is a view computed when read: the critical path of every span of a
-- large trace takes tens of seconds.

INCLUDE PERFETTO MODULE slices.flat_slices;
INCLUDE PERFETTO MODULE sched.thread_executing_span;
INCLUDE PERFETTO MODULE intervals.intersect;

-- The critical path of every span of the wakeup graph, flattened: which
-- thread (utid) each root thread (root_utid) waited on over [ts, ts_end),
-- numbered by time then root span (an order without ties, so that every
-- reading of the view numbers alike).
CREATE PERFETTO VIEW _critical_path_all AS
WITH
  per_root AS (
    SELECT *
    FROM _critical_path_by_roots!((SELECT id AS root_node_id FROM _wakeup_graph), _wakeup_graph)
  )
SELECT
  row_number() OVER (ORDER BY p.ts, p.root_id) AS id,
  p.ts,
  p.dur,
  p.ts + p.dur AS ts_end,
  blocker.utid,
  root.utid AS root_utid
FROM per_root AS p
JOIN _wakeup_graph AS blocker ON blocker.id = p.id
JOIN _wakeup_graph AS root ON root.id = p.root_id
ORDER BY p.ts;

-- Thread states under the names the span join below keeps.
CREATE PERFETTO VIEW _span_thread_state_view AS
SELECT
  id AS thread_state_id,
  ts,
  dur,
  utid,
  state,
  blocked_function AS function,
  io_wait,
  cpu
FROM thread_state;

-- The innermost slice of each thread at each time.
CREATE PERFETTO VIEW _span_slice_view AS
SELECT
  slice_id,
  depth AS slice_depth,
  cast_int!(ts) AS ts,
  cast_int!(dur) AS dur,
  utid
FROM _slice_flattened;

CREATE VIRTUAL TABLE _span_thread_state_slice_sp USING SPAN_LEFT_JOIN(
  _span_thread_state_view PARTITIONED utid,
  _span_slice_view PARTITIONED utid);

-- Each thread's states cut at its innermost slices' bounds, numbered by
-- time then thread (without ties: a thread's pieces do not overlap).
CREATE PERFETTO VIEW _span_thread_state_slice AS
SELECT
  row_number() OVER (ORDER BY ts, utid) AS id,
  ts,
  dur,
  ts + dur AS ts_end,
  utid,
  thread_state_id,
  state,
  function,
  cpu,
  io_wait,
  slice_id,
  slice_depth
FROM _span_thread_state_slice_sp
WHERE dur > 0
ORDER BY ts;

-- The critical path's stretches intersected with the blocking thread's
-- states and slices (ids of both rows).
CREATE PERFETTO VIEW _critical_path_thread_state_slice_raw AS
SELECT id_0 AS cr_id, id_1 AS th_id, ts, dur
FROM _interval_intersect!((_critical_path_all, _span_thread_state_slice), (utid));

-- What the blocking thread was doing over each stretch of a root
-- thread's critical path.
CREATE PERFETTO VIEW _critical_path_thread_state_slice AS
SELECT
  raw.ts,
  raw.dur,
  cr.utid,
  th.thread_state_id,
  th.state,
  th.function,
  th.cpu,
  th.io_wait,
  th.slice_id,
  th.slice_depth,
  cr.root_utid
FROM _critical_path_thread_state_slice_raw AS raw
JOIN _critical_path_all AS cr ON cr.id = raw.cr_id
JOIN _span_thread_state_slice AS th ON th.id = raw.th_id;

CREATE VIRTUAL TABLE _self_sp USING SPAN_LEFT_JOIN(
  thread_state PARTITIONED utid,
  _slice_flattened PARTITIONED utid);

-- What each root thread itself was doing: its states and innermost slices.
CREATE PERFETTO VIEW _self_view AS
SELECT
  id AS self_thread_state_id,
  slice_id AS self_slice_id,
  ts,
  dur,
  utid AS root_utid,
  state AS self_state,
  blocked_function AS self_function,
  cpu AS self_cpu,
  io_wait AS self_io_wait,
  depth AS self_slice_depth
FROM _self_sp;

CREATE VIRTUAL TABLE _self_and_critical_path_sp USING SPAN_JOIN(
  _self_view PARTITIONED root_utid,
  _critical_path_thread_state_slice PARTITIONED root_utid);

-- The stacks of thread `root_utid` over [ts, ts + dur): for each stretch,
-- the thread's own frames (depth 0 its state, 1 its blocked function, 2
-- io_wait, 3 its process, 4 the thread, 5 on its slice and the slice's
-- ancestors), then, when another thread blocked it, that thread's frames
-- above them (its state, process, thread, blocked function, io_wait and
-- slices), then the CPU of a running thread on top. The enable_* flags
-- keep or blank the names of the process, thread and slice frames. A
-- frame without an id is left out.
CREATE PERFETTO FUNCTION _critical_path_stack(
  -- The thread.
  root_utid JOINID(thread.id),
  -- The window's start.
  ts TIMESTAMP,
  -- The window's length.
  dur DURATION,
  -- Whether the process frame is named.
  enable_process_name LONG,
  -- Whether the thread frame is named.
  enable_thread_name LONG,
  -- Whether the thread's own slices are named.
  enable_self_slice LONG,
  -- Whether the blocking thread's slices are named.
  enable_critical_path_slice LONG
)
RETURNS TABLE(
  -- The row the frame stands for (a thread state or a slice).
  id LONG,
  -- When the frame begins.
  ts TIMESTAMP,
  -- How long it lasts.
  dur DURATION,
  -- Its thread.
  utid JOINID(thread.id),
  -- Its depth in the stack.
  stack_depth LONG,
  -- Its name.
  name STRING,
  -- The table of `id`: 'thread_state' or 'slice'.
  table_name STRING,
  -- The thread whose stack it is.
  root_utid JOINID(thread.id)
)
AS
WITH
  clipped AS (
    SELECT
      self_thread_state_id, self_state, self_slice_id, self_slice_depth,
      self_function, self_io_wait, thread_state_id, state, function, io_wait,
      slice_id, slice_depth, cpu, utid,
      max(ts, $ts) AS ts,
      min(ts + dur, $ts + $dur) AS end_ts,
      root_utid
    FROM _self_and_critical_path_sp
    WHERE dur > 0 AND root_utid = $root_utid
  ),
  spans AS MATERIALIZED (
    SELECT
      self_thread_state_id, self_state, self_slice_id, self_slice_depth,
      self_function, self_io_wait, thread_state_id, state, function, io_wait,
      slice_id, slice_depth, cpu, utid, ts, end_ts - ts AS dur, root_utid
    FROM clipped
    WHERE end_ts - ts > 0
  ),
  own AS MATERIALIZED (
    SELECT
      self_thread_state_id AS id, ts, dur, root_utid AS utid, 0 AS stack_depth,
      'thread_state: ' || self_state AS name, 'thread_state' AS table_name, root_utid
    FROM spans
    UNION ALL
    SELECT
      self_thread_state_id, ts, dur, root_utid, 1,
      iif(self_state GLOB 'R*', NULL, 'kernel function: ' || self_function),
      'thread_state', root_utid
    FROM spans
    UNION ALL
    SELECT
      self_thread_state_id, ts, dur, root_utid, 2,
      iif(self_state GLOB 'R*', NULL, 'io_wait: ' || self_io_wait),
      'thread_state', root_utid
    FROM spans
    UNION ALL
    SELECT
      s.self_thread_state_id, s.ts, s.dur, th.utid, 3,
      iif($enable_process_name, 'process_name: ' || p.name, NULL),
      'thread_state', s.root_utid
    FROM spans AS s
    LEFT JOIN thread AS th ON th.utid = s.root_utid
    LEFT JOIN process AS p USING (upid)
    UNION ALL
    SELECT
      s.self_thread_state_id, s.ts, s.dur, th.utid, 4,
      iif($enable_thread_name, 'thread_name: ' || th.name, NULL),
      'thread_state', s.root_utid
    FROM spans AS s
    LEFT JOIN thread AS th ON th.utid = s.root_utid
    JOIN process AS p USING (upid)
    UNION ALL
    SELECT
      anc.id, s.ts, s.dur, s.root_utid, anc.depth + 5,
      iif($enable_self_slice, anc.name, NULL),
      'slice', s.root_utid
    FROM spans AS s, ancestor_slice(s.self_slice_id) AS anc
    WHERE anc.dur != -1
    UNION ALL
    SELECT
      s.self_slice_id, s.ts, s.dur, s.root_utid, s.self_slice_depth + 5,
      iif($enable_self_slice, sl.name, NULL),
      'slice', s.root_utid
    FROM spans AS s
    LEFT JOIN slice AS sl ON sl.id = s.self_slice_id
  ),
  blocking_base AS MATERIALIZED (
    SELECT root_utid, ts, max(stack_depth) + 1 AS start_depth
    FROM own
    GROUP BY root_utid, ts
  ),
  blocking_spans AS MATERIALIZED (
    SELECT
      s.thread_state_id, s.state, s.function, s.io_wait, s.slice_id,
      s.slice_depth, s.ts, s.dur, s.root_utid, s.utid, b.start_depth
    FROM spans AS s
    JOIN blocking_base AS b ON b.root_utid = s.root_utid AND b.ts = s.ts
    WHERE b.root_utid = $root_utid AND s.root_utid != s.utid
  ),
  blocking AS MATERIALIZED (
    SELECT
      thread_state_id AS id, ts, dur, utid, start_depth AS stack_depth,
      'blocking thread_state: ' || state AS name, 'thread_state' AS table_name,
      root_utid
    FROM blocking_spans
    UNION ALL
    SELECT
      b.thread_state_id, b.ts, b.dur, th.utid, b.start_depth + 1,
      'blocking process_name: ' || p.name, 'thread_state', b.root_utid
    FROM blocking_spans AS b
    JOIN thread AS th USING (utid)
    LEFT JOIN process AS p USING (upid)
    UNION ALL
    SELECT
      b.thread_state_id, b.ts, b.dur, th.utid, b.start_depth + 2,
      'blocking thread_name: ' || th.name, 'thread_state', b.root_utid
    FROM blocking_spans AS b
    JOIN thread AS th USING (utid)
    UNION ALL
    SELECT
      b.thread_state_id, b.ts, b.dur, th.utid, b.start_depth + 3,
      'blocking kernel_function: ' || b.function, 'thread_state', b.root_utid
    FROM blocking_spans AS b
    JOIN thread AS th USING (utid)
    UNION ALL
    SELECT
      b.thread_state_id, b.ts, b.dur, th.utid, b.start_depth + 4,
      'blocking io_wait: ' || b.io_wait, 'thread_state', b.root_utid
    FROM blocking_spans AS b
    JOIN thread AS th USING (utid)
    UNION ALL
    SELECT
      anc.id, b.ts, b.dur, b.utid, anc.depth + b.start_depth + 5,
      iif($enable_critical_path_slice, anc.name, NULL),
      'slice', b.root_utid
    FROM blocking_spans AS b, ancestor_slice(b.slice_id) AS anc
    WHERE anc.dur != -1
    UNION ALL
    SELECT
      b.slice_id, b.ts, b.dur, b.utid, b.slice_depth + b.start_depth + 5,
      iif($enable_critical_path_slice, sl.name, NULL),
      'slice', b.root_utid
    FROM blocking_spans AS b
    LEFT JOIN slice AS sl ON sl.id = b.slice_id
  ),
  cpu_base AS (
    SELECT root_utid, ts, max(start_depth) AS start_depth
    FROM (
      SELECT root_utid, ts, max(stack_depth) + 1 AS start_depth
      FROM blocking
      GROUP BY root_utid, ts
      UNION ALL
      SELECT root_utid, ts, start_depth FROM blocking_base
    )
    GROUP BY root_utid, ts
  ),
  on_cpu AS (
    SELECT
      s.thread_state_id AS id, s.ts, s.dur, s.utid, c.start_depth AS stack_depth,
      'cpu: ' || s.cpu AS name, 'thread_state' AS table_name, s.root_utid
    FROM spans AS s
    JOIN cpu_base AS c ON c.root_utid = s.root_utid AND c.ts = s.ts
    WHERE (c.root_utid = $root_utid AND s.state = 'Running') OR s.self_state = 'Running'
  ),
  merged AS (
    SELECT * FROM own
    UNION ALL
    SELECT * FROM blocking
    UNION ALL
    SELECT * FROM on_cpu
  )
SELECT * FROM merged WHERE id IS NOT NULL;

-- The stacks of thread `root_utid` over [ts, ts + dur), every frame named
-- (_critical_path_stack with every flag set).
CREATE PERFETTO FUNCTION _thread_executing_span_critical_path_stack(
  -- The thread.
  root_utid JOINID(thread.id),
  -- The window's start.
  ts TIMESTAMP,
  -- The window's length.
  dur DURATION
)
RETURNS TABLE(
  -- The row the frame stands for (a thread state or a slice).
  id LONG,
  -- When the frame begins.
  ts TIMESTAMP,
  -- How long it lasts.
  dur DURATION,
  -- Its thread.
  utid JOINID(thread.id),
  -- Its depth in the stack.
  stack_depth LONG,
  -- Its name.
  name STRING,
  -- The table of `id`: 'thread_state' or 'slice'.
  table_name STRING,
  -- The thread whose stack it is.
  root_utid JOINID(thread.id)
)
AS
SELECT * FROM _critical_path_stack($root_utid, $ts, $dur, 1, 1, 1, 1);

-- Written for zerotrace: the `sched.thread_executing_span` module, the
-- wakeup graph of the scheduler's thread states and the critical path
-- through it. A thread's executing span starts at a Runnable state that a
-- thread (not an interrupt) woke and lasts until the next such state; it
-- is named by the id of its first thread state. Each span knows the span
-- of its waker's thread that was running when it was woken and the
-- previous span of its own thread; the critical path of a thread over a
-- window says which threads' spans its time waited on
-- (`_thread_executing_span_critical_path`). The walk is native
-- (src/sql/graphs/critical_path.rs). Every object is a view, computed
-- when a query reads it rather than at the include: the graph of a trace
-- with millions of thread states takes seconds to build, which a trace's
-- load should not pay unless the critical path is asked for.

INCLUDE PERFETTO MODULE intervals.overlap;
INCLUDE PERFETTO MODULE intervals.intersect;

-- Whether a woken state came from an interrupt: its irq_context is set
-- (1), or, without one, the thread waited on IO.
CREATE PERFETTO MACRO _zt_tes_is_irq(irq_context Expr, io_wait Expr)
RETURNS Expr
AS iif($irq_context = 0 OR $irq_context IS NULL, coalesce($io_wait, 0), 1);

-- Every ended thread state that records its waker.
CREATE PERFETTO VIEW _runnable_state AS
SELECT
  id, ts, dur, state, utid, waker_id, waker_utid,
  _zt_tes_is_irq!(irq_context, io_wait) AS is_irq
FROM thread_state
WHERE dur != -1 AND waker_id IS NOT NULL;

-- Whether the trace is Fuchsia's (its metadata says so).
CREATE PERFETTO VIEW _is_fuchsia AS
SELECT EXISTS (
  SELECT 1 FROM metadata WHERE name = 'trace_type' AND str_value = 'fuchsia'
) AS is_fuchsia;

-- Whether `state` is a thread becoming runnable: 'R', or on Fuchsia also
-- 'W' (which precedes only a thread's first run there).
CREATE PERFETTO MACRO _is_runnable_state(state Expr)
RETURNS Expr
AS $state = 'R' OR ($state = 'W' AND (SELECT is_fuchsia FROM _is_fuchsia));

-- Each thread's first thread state, when it has ended and is runnable.
CREATE PERFETTO VIEW _first_runnable_state AS
SELECT
  st.id, st.ts, st.dur, st.state, st.utid, st.waker_id, st.waker_utid,
  _zt_tes_is_irq!(st.irq_context, st.io_wait) AS is_irq
FROM thread_state AS st
JOIN (SELECT min(id) AS id FROM thread_state GROUP BY utid) AS first USING (id)
WHERE st.dur != -1 AND _is_runnable_state!(st.state);

-- Every ended sleep: interruptible (S), uninterruptible (D) or idle (I).
CREATE PERFETTO VIEW _sleep_state AS
SELECT id, ts, dur, state, blocked_function, utid
FROM thread_state
WHERE dur != -1 AND state IN ('S', 'D', 'I');

-- When each thread's last ended state ends.
CREATE PERFETTO VIEW _thread_end_ts AS
SELECT max(ts) + dur AS end_ts, utid
FROM thread_state
WHERE dur != -1
GROUP BY utid;

-- Each thread's first sleep that ends where a woken state begins.
CREATE PERFETTO VIEW _first_sleep_state AS
SELECT min(s.id) AS id, s.ts, s.dur, s.state, s.blocked_function, s.utid
FROM _sleep_state AS s
JOIN _runnable_state AS r ON r.utid = s.utid AND r.ts = s.ts + s.dur
GROUP BY s.utid;

-- The starts of executing spans: each woken state right after a sleep
-- of its thread (with the sleep's state, blocked function and start),
-- and each thread's first state when runnable (without a sleep); with
-- the end of the thread's last state.
CREATE PERFETTO VIEW _wakeup AS
WITH
  starts AS (
    SELECT
      s.state,
      s.blocked_function,
      r.id,
      r.ts,
      r.utid,
      r.waker_id,
      r.waker_utid,
      s.ts AS prev_end_ts,
      r.is_irq
    FROM _runnable_state AS r
    JOIN _sleep_state AS s ON s.utid = r.utid AND s.ts + s.dur = r.ts
    UNION ALL
    SELECT
      NULL AS state,
      NULL AS blocked_function,
      r.id,
      r.ts,
      r.utid,
      r.waker_id,
      r.waker_utid,
      NULL AS prev_end_ts,
      r.is_irq
    FROM _first_runnable_state AS r
  )
SELECT starts.*, e.end_ts AS thread_end_ts
FROM starts
LEFT JOIN _thread_end_ts AS e USING (utid);

-- For each Running state (as a waker, `waker_id`), the span it belongs
-- to: the latest runnable state of its thread at or before it (`id`).
CREATE PERFETTO VIEW _wakeup_map AS
WITH
  states AS (
    SELECT id, waker_id, utid, state
    FROM thread_state
    WHERE state = 'Running' AND dur != -1
    UNION ALL
    SELECT id, waker_id, utid, state FROM _first_runnable_state
    UNION ALL
    SELECT id, waker_id, utid, state FROM _runnable_state
  ),
  spans AS (
    SELECT
      id AS waker_id,
      state,
      max(id) FILTER (WHERE _is_runnable_state!(state))
        OVER (PARTITION BY utid ORDER BY id) AS id
    FROM states
  )
SELECT id, waker_id FROM spans WHERE state = 'Running' ORDER BY waker_id;

-- The executing spans: each with its thread, the span that woke it (NULL
-- when an interrupt did), its start, how it was idle before ('IRQ' when
-- an interrupt woke it, else the sleep's state) and why (the blocked
-- function), how long it was idle, the thread's previous span and its
-- duration (until the thread's next sleep, or the end of its last state).
CREATE PERFETTO VIEW _wakeup_graph AS
WITH
  events AS (
    SELECT
      w.utid,
      w.thread_end_ts,
      iif(w.is_irq, 'IRQ', w.state) AS idle_state,
      w.blocked_function AS idle_reason,
      w.id,
      iif(w.is_irq, NULL, m.id) AS waker_id,
      w.ts,
      w.prev_end_ts AS idle_ts
    FROM _wakeup AS w
    LEFT JOIN _wakeup_map AS m USING (waker_id)
  )
SELECT
  utid,
  id,
  waker_id,
  ts,
  idle_state,
  idle_reason,
  ts - idle_ts AS idle_dur,
  lag(id) OVER (PARTITION BY utid ORDER BY ts) AS prev_id,
  coalesce(lead(idle_ts) OVER (PARTITION BY utid ORDER BY ts), thread_end_ts) - ts AS dur
FROM events
ORDER BY id;

-- The spans of `node_table` (a wakeup graph) that lie within each
-- interval of `source_table` (utid, ts, dur) on its thread: from the
-- last span starting at or before the interval's start (or the thread's
-- first span) to the first span starting at or after its end (or the
-- thread's last). Columns root_node_id and capacity (the span's id less
-- its thread's previous span's id, 0 for a thread's first).
CREATE PERFETTO MACRO _intervals_to_roots(
  _source_table TableOrSubQuery,
  _node_table TableOrSubQuery
)
RETURNS TableOrSubQuery
AS (
  WITH
    _zt_nodes AS (SELECT * FROM $_node_table),
    _zt_source AS (SELECT * FROM $_source_table),
    _zt_bounds AS (
      SELECT utid, min(ts) AS min_start, max(ts) AS max_start
      FROM _zt_nodes
      GROUP BY utid
    ),
    _zt_first AS (
      SELECT n.utid, max(n.id) AS start_id, src.ts, src.dur
      FROM _zt_nodes AS n
      JOIN _zt_bounds AS b USING (utid)
      JOIN _zt_source AS src
        ON src.utid = n.utid AND max(src.ts, b.min_start) >= n.ts
      GROUP BY src.ts, src.utid
    ),
    _zt_last AS (
      SELECT n.utid, min(n.id) AS end_id, src.ts, src.dur
      FROM _zt_nodes AS n
      JOIN _zt_bounds AS b USING (utid)
      JOIN _zt_source AS src
        ON src.utid = n.utid AND min(src.ts + src.dur, b.max_start) <= n.ts
      GROUP BY src.ts, src.utid
    ),
    _zt_ranges AS (
      SELECT f.utid, f.start_id, l.end_id
      FROM _zt_first AS f
      JOIN _zt_last AS l ON l.ts = f.ts AND l.dur = f.dur AND l.utid = f.utid
    )
  SELECT DISTINCT n.id AS root_node_id, n.id - coalesce(n.prev_id, n.id) AS capacity
  FROM _zt_ranges AS r
  JOIN _zt_nodes AS n ON n.id BETWEEN r.start_id AND r.end_id AND n.utid = r.utid
);

-- The critical path of each root span of `_roots_table` (root_node_id)
-- through the wakeup graph `_node_table`, with depths: columns root_id,
-- depth, ts, dur, id (the blocking span) and parent_id (the root).
CREATE PERFETTO MACRO _critical_path_with_depth_by_roots(
  _roots_table TableOrSubQuery,
  _node_table TableOrSubQuery
)
RETURNS TableOrSubQuery
AS (
  SELECT root_id, depth, ts, dur, blocker_id AS id, parent_id
  FROM __intrinsic_critical_path_walk(
    (
      SELECT __intrinsic_graph_rows_agg(id, utid, ts, dur, idle_dur, waker_id, prev_id)
      FROM $_node_table
    ),
    (SELECT __intrinsic_graph_rows_agg(root_node_id) FROM $_roots_table)
  )
);

-- The critical path of each root span flattened to the deepest blocker at
-- each time: columns root_id, id (the blocking span), ts, dur.
CREATE PERFETTO MACRO _critical_path_by_roots(
  _roots_table TableOrSubQuery,
  _node_table TableOrSubQuery
)
RETURNS TableOrSubQuery
AS (
  WITH
    _zt_frames AS (
      SELECT * FROM _critical_path_with_depth_by_roots!($_roots_table, $_node_table)
    ),
    _zt_root_spans AS (
      SELECT root_id, min(ts) AS root_ts, max(ts + dur) - min(ts) AS root_dur
      FROM _zt_frames
      GROUP BY root_id
    ),
    _zt_flatten_input AS (
      SELECT f.root_id, rs.root_ts, rs.root_dur, f.parent_id, f.id, f.ts, f.dur
      FROM _zt_frames AS f
      JOIN _zt_root_spans AS rs USING (root_id)
    )
  SELECT flat.root_id, flat.id, flat.ts, flat.dur
  FROM _intervals_flatten!(_zt_flatten_input) AS flat
  WHERE flat.dur > 0
  GROUP BY flat.root_id, flat.ts
);

-- The critical path of the threads of `_intervals_table` (utid, ts, dur)
-- within those intervals: columns root_utid, utid (the blocking thread),
-- root_id, id (the blocking span), ts, dur (cut to the interval),
-- interval_ts and interval_dur.
CREATE PERFETTO MACRO _critical_path_by_intervals(
  _intervals_table TableOrSubQuery,
  _node_table TableOrSubQuery
)
RETURNS TableOrSubQuery
AS (
  WITH
    _zt_nodes AS (SELECT * FROM $_node_table),
    _zt_intervals AS (
      SELECT row_number() OVER (ORDER BY ts) AS id, ts, dur, utid AS root_utid
      FROM $_intervals_table
    ),
    _zt_path AS (
      SELECT row_number() OVER (ORDER BY ts) AS id, root_id, id AS cr_id, ts, dur
      FROM _critical_path_by_roots!(
        _intervals_to_roots!($_intervals_table, $_node_table),
        _zt_nodes
      )
    ),
    _zt_span AS (
      SELECT
        roots.utid AS root_utid,
        blockers.utid,
        p.root_id,
        p.cr_id,
        p.id,
        p.ts,
        p.dur
      FROM _zt_path AS p
      JOIN _zt_nodes AS roots ON roots.id = p.root_id
      JOIN _zt_nodes AS blockers ON blockers.id = p.cr_id
    )
  SELECT DISTINCT
    s.root_utid,
    s.utid,
    s.root_id,
    s.cr_id AS id,
    ii.ts,
    ii.dur,
    i.ts AS interval_ts,
    i.dur AS interval_dur
  FROM _interval_intersect!((_zt_span, _zt_intervals), (root_utid)) AS ii
  JOIN _zt_span AS s ON s.id = ii.id_0
  JOIN _zt_intervals AS i ON i.id = ii.id_1
);

-- The critical path of thread `root_utid` over [ts, ts + dur): which
-- threads' spans its time waited on, each cut to the window.
CREATE PERFETTO FUNCTION _thread_executing_span_critical_path(
  -- The thread.
  root_utid JOINID(thread.id),
  -- The window's start.
  ts TIMESTAMP,
  -- The window's length.
  dur DURATION
)
RETURNS TABLE(
  -- The thread.
  root_utid JOINID(thread.id),
  -- Its span the row belongs to.
  root_id LONG,
  -- The blocking span.
  id LONG,
  -- When the stretch begins.
  ts TIMESTAMP,
  -- How long it lasts.
  dur DURATION,
  -- The blocking thread.
  utid JOINID(thread.id)
)
AS
SELECT root_utid, root_id, id, ts, dur, utid
FROM _critical_path_by_intervals!(
  (SELECT $root_utid AS utid, $ts AS ts, $dur AS dur),
  _wakeup_graph
);

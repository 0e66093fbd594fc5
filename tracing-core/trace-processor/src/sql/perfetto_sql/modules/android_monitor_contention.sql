-- Written for zerotrace: the `android.monitor_contention` module, over
-- ART's Java monitor contention slices, named
-- `monitor contention with owner <thread> (<tid>) at <method>(<file:line>)
-- waiters=<n> blocking from <method>(<file:line>)`.
-- The `android_extract_android_monitor_contention_*` functions read the
-- parts of such a name: the owner thread and tid, the blocking and blocked
-- methods (whole, and short: without types and arguments), their source
-- locations and the waiter count.
-- `android_monitor_contention`: the contentions (slices with no child but
-- a childless `Lock contention…` one), each with the blocked thread and
-- process, the blocking thread (by tid within the process), the wall and
-- monotonic (without suspend) duration, the `binder reply` it happened in,
-- and the lock's name when `<lock>_lock_acquire` and `<lock>_lock_held`
-- slices surround it on its track.
-- `android_monitor_contention_chain`: each contention once per contention
-- whose blocked thread holds its lock meanwhile (`parent_id`, NULL when
-- none), with the earliest contention it blocks in turn (`child_id`).
-- `android_monitor_contention_chain_thread_state`: while the first waiter
-- on a lock waits (until the first waiter acquires it), the thread states
-- of the thread holding it; `…_thread_state_by_txn` and
-- `…_blocked_functions_by_txn` those summed per contention.

INCLUDE PERFETTO MODULE android.suspend;

CREATE PERFETTO FUNCTION android_extract_android_monitor_contention_blocking_thread(
  slice_name STRING
)
RETURNS STRING
AS
SELECT str_split(str_split($slice_name, 'with owner ', 1), ' (', 0);

CREATE PERFETTO FUNCTION android_extract_android_monitor_contention_blocking_tid(
  slice_name STRING
)
RETURNS LONG
AS
SELECT cast_int!(str_split(str_split($slice_name, ' (', 1), ')', 0));

CREATE PERFETTO FUNCTION android_extract_android_monitor_contention_blocking_method(
  slice_name STRING
)
RETURNS STRING
AS
SELECT str_split(rest, '(', 0) || '(' || str_split(rest, '(', 1)
FROM (SELECT str_split($slice_name, ') at ', 1) AS rest);

CREATE PERFETTO FUNCTION android_extract_android_monitor_contention_short_blocking_method(
  slice_name STRING
)
RETURNS STRING
AS
SELECT str_split(
  str_split(android_extract_android_monitor_contention_blocking_method($slice_name), ' ', 1),
  '(',
  0
);

CREATE PERFETTO FUNCTION android_extract_android_monitor_contention_blocked_method(
  slice_name STRING
)
RETURNS STRING
AS
SELECT str_split(rest, '(', 0) || '(' || str_split(rest, '(', 1)
FROM (SELECT str_split($slice_name, 'blocking from ', 1) AS rest);

CREATE PERFETTO FUNCTION android_extract_android_monitor_contention_short_blocked_method(
  slice_name STRING
)
RETURNS STRING
AS
SELECT str_split(
  str_split(android_extract_android_monitor_contention_blocked_method($slice_name), ' ', 1),
  '(',
  0
);

CREATE PERFETTO FUNCTION android_extract_android_monitor_contention_waiter_count(
  slice_name STRING
)
RETURNS LONG
AS
SELECT cast_int!(str_split(str_split($slice_name, 'waiters=', 1), ' ', 0));

CREATE PERFETTO FUNCTION android_extract_android_monitor_contention_blocking_src(
  slice_name STRING
)
RETURNS STRING
AS
SELECT str_split(str_split($slice_name, ')(', 1), ')', 0);

CREATE PERFETTO FUNCTION android_extract_android_monitor_contention_blocked_src(
  slice_name STRING
)
RETURNS STRING
AS
SELECT str_split(str_split($slice_name, ')(', 2), ')', 0);

-- The contention slices: no child, or a `Lock contention…` child (or one
-- without a name) that has no child of its own.
CREATE PERFETTO TABLE _valid_android_monitor_contention AS
SELECT s.id
FROM slice AS s
WHERE s.name GLOB 'monitor contention*'
  AND (
    NOT EXISTS (SELECT 1 FROM slice AS c WHERE c.parent_id = s.id)
    OR EXISTS (
      SELECT 1
      FROM slice AS c
      WHERE c.parent_id = s.id
        AND (c.name GLOB 'Lock contention*' OR c.name IS NULL)
        AND NOT EXISTS (SELECT 1 FROM slice AS g WHERE g.parent_id = c.id)
    )
  )
ORDER BY s.id;

-- Each contention's lock, when `<lock>_lock_acquire` comes right before it
-- on its track and `<lock>_lock_held` right after it (or right after its
-- `Lock contention` child).
CREATE PERFETTO TABLE _zt_contention_lock_names AS
WITH
  neighbours AS (
    SELECT
      s.id,
      lag(s.name) OVER w AS prev_name,
      lead(s.name, 1) OVER w AS next_1,
      lead(s.name, 2) OVER w AS next_2
    FROM slice AS s
    WHERE s.track_id IN (
      SELECT DISTINCT x.track_id
      FROM slice AS x
      JOIN _valid_android_monitor_contention AS v USING (id)
    )
    WINDOW w AS (PARTITION BY s.track_id ORDER BY s.ts)
  ),
  candidates AS (
    SELECT
      n.id,
      replace(n.prev_name, '_lock_acquire', '') AS acquired,
      iif(substr(n.next_1, 1, 15) = 'Lock contention', n.next_2, n.next_1) AS held,
      n.prev_name,
      n.next_1
    FROM neighbours AS n
    JOIN _valid_android_monitor_contention AS v USING (id)
  )
SELECT
  id,
  iif(
    substr(prev_name, -13) = '_lock_acquire'
      AND substr(held, -10) = '_lock_held'
      AND acquired = replace(held, '_lock_held', ''),
    acquired,
    NULL
  ) AS lock_name
FROM candidates;

CREATE PERFETTO TABLE android_monitor_contention(
  blocking_method STRING,
  blocked_method STRING,
  short_blocking_method STRING,
  short_blocked_method STRING,
  blocking_src STRING,
  blocked_src STRING,
  waiter_count LONG,
  blocked_utid JOINID(thread.id),
  blocked_thread_name STRING,
  blocking_utid JOINID(thread.id),
  blocking_thread_name STRING,
  blocking_tid LONG,
  upid JOINID(process.id),
  process_name STRING,
  id LONG,
  ts TIMESTAMP,
  dur DURATION,
  monotonic_dur DURATION,
  track_id JOINID(track.id),
  is_blocked_thread_main LONG,
  blocked_thread_tid LONG,
  is_blocking_thread_main LONG,
  blocking_thread_tid LONG,
  binder_reply_id LONG,
  binder_reply_ts TIMESTAMP,
  binder_reply_tid LONG,
  pid LONG,
  lock_name STRING
)
AS
WITH parsed AS (
  SELECT
    s.id,
    s.ts,
    s.dur,
    s.track_id,
    android_extract_android_monitor_contention_blocking_method(s.name) AS blocking_method,
    android_extract_android_monitor_contention_blocked_method(s.name) AS blocked_method,
    android_extract_android_monitor_contention_short_blocking_method(s.name)
      AS short_blocking_method,
    android_extract_android_monitor_contention_short_blocked_method(s.name)
      AS short_blocked_method,
    android_extract_android_monitor_contention_blocking_src(s.name) AS blocking_src,
    android_extract_android_monitor_contention_blocked_src(s.name) AS blocked_src,
    android_extract_android_monitor_contention_waiter_count(s.name) AS waiter_count,
    android_extract_android_monitor_contention_blocking_thread(s.name) AS blocking_thread_name,
    android_extract_android_monitor_contention_blocking_tid(s.name) AS blocking_tid
  FROM slice AS s
  JOIN _valid_android_monitor_contention AS v USING (id)
  WHERE s.dur != -1
)
SELECT
  c.blocking_method,
  c.blocked_method,
  c.short_blocking_method,
  c.short_blocked_method,
  c.blocking_src,
  c.blocked_src,
  c.waiter_count,
  t.utid AS blocked_utid,
  t.name AS blocked_thread_name,
  bt.utid AS blocking_utid,
  c.blocking_thread_name,
  c.blocking_tid,
  t.upid,
  p.name AS process_name,
  c.id,
  c.ts,
  c.dur,
  _extract_duration_without_suspend(c.ts, c.dur) AS monotonic_dur,
  c.track_id,
  t.is_main_thread AS is_blocked_thread_main,
  t.tid AS blocked_thread_tid,
  bt.is_main_thread AS is_blocking_thread_main,
  bt.tid AS blocking_thread_tid,
  br.id AS binder_reply_id,
  br.ts AS binder_reply_ts,
  brt.tid AS binder_reply_tid,
  p.pid,
  ln.lock_name
FROM parsed AS c
JOIN thread_track AS tt ON tt.id = c.track_id
LEFT JOIN thread AS t ON t.utid = tt.utid
LEFT JOIN process AS p ON p.upid = t.upid
LEFT JOIN ancestor_slice(c.id) AS br ON br.name = 'binder reply'
LEFT JOIN thread_track AS brtt ON brtt.id = br.track_id
LEFT JOIN thread AS brt ON brt.utid = brtt.utid
LEFT JOIN thread AS bt ON bt.tid = c.blocking_tid AND bt.upid = t.upid
LEFT JOIN _zt_contention_lock_names AS ln ON ln.id = c.id
WHERE c.short_blocking_method IS NOT NULL AND c.short_blocked_method IS NOT NULL
GROUP BY c.id;

CREATE PERFETTO INDEX _android_monitor_contention_blocking_utid_idx
ON android_monitor_contention(blocking_utid, ts);

CREATE PERFETTO INDEX _android_monitor_contention_id_idx ON android_monitor_contention(id);

-- Each contention (all its columns) with, as `parent_id`, each contention
-- whose blocked thread holds its lock when it begins.
CREATE PERFETTO TABLE _children AS
SELECT parent.id AS parent_id, child.*
FROM android_monitor_contention AS child
JOIN android_monitor_contention AS parent
  ON parent.blocked_utid = child.blocking_utid
  AND child.ts >= parent.ts
  AND child.ts <= parent.ts + parent.dur
ORDER BY child.id;

-- For each contention blocking others, the first (least id) it blocks.
CREATE PERFETTO TABLE _child_of AS
SELECT parent.id, min(child.id) AS child_id
FROM android_monitor_contention AS parent
JOIN android_monitor_contention AS child
  ON parent.blocked_utid = child.blocking_utid
  AND child.ts >= parent.ts
  AND child.ts <= parent.ts + parent.dur
GROUP BY parent.id
ORDER BY parent.id;

CREATE PERFETTO TABLE android_monitor_contention_chain(
  parent_id LONG,
  blocking_method STRING,
  blocked_method STRING,
  short_blocking_method STRING,
  short_blocked_method STRING,
  blocking_src STRING,
  blocked_src STRING,
  waiter_count LONG,
  blocked_utid JOINID(thread.id),
  blocked_thread_name STRING,
  blocking_utid JOINID(thread.id),
  blocking_thread_name STRING,
  blocking_tid LONG,
  upid JOINID(process.id),
  process_name STRING,
  id LONG,
  ts TIMESTAMP,
  dur DURATION,
  monotonic_dur DURATION,
  track_id JOINID(track.id),
  is_blocked_thread_main LONG,
  blocked_thread_tid LONG,
  is_blocking_thread_main LONG,
  blocking_thread_tid LONG,
  binder_reply_id LONG,
  binder_reply_ts TIMESTAMP,
  binder_reply_tid LONG,
  pid LONG,
  child_id LONG,
  lock_name STRING
)
AS
SELECT
  pc.parent_id,
  m.blocking_method,
  m.blocked_method,
  m.short_blocking_method,
  m.short_blocked_method,
  m.blocking_src,
  m.blocked_src,
  m.waiter_count,
  m.blocked_utid,
  m.blocked_thread_name,
  m.blocking_utid,
  m.blocking_thread_name,
  m.blocking_tid,
  m.upid,
  m.process_name,
  m.id,
  m.ts,
  m.dur,
  m.monotonic_dur,
  m.track_id,
  m.is_blocked_thread_main,
  m.blocked_thread_tid,
  m.is_blocking_thread_main,
  m.blocking_thread_tid,
  m.binder_reply_id,
  m.binder_reply_ts,
  m.binder_reply_tid,
  m.pid,
  co.child_id,
  m.lock_name
FROM android_monitor_contention AS m
LEFT JOIN _children AS pc ON pc.id = m.id
LEFT JOIN _child_of AS co ON co.id = m.id;

CREATE PERFETTO INDEX _android_monitor_contention_chain_idx
ON android_monitor_contention_chain(blocking_method, blocking_utid, ts);

-- Each first waiter on a lock (waiter count 0), until the first of the
-- waiters on the same thread and method that began meanwhile got the lock.
CREATE PERFETTO VIEW _first_blocked_contention AS
SELECT
  first.id,
  first.blocking_utid,
  first.ts,
  min(other.ts + other.dur) - first.ts AS dur
FROM android_monitor_contention_chain AS first
JOIN android_monitor_contention_chain AS other
  ON other.blocking_utid = first.blocking_utid
  AND other.blocking_method = first.blocking_method
  AND other.ts >= first.ts
  AND other.ts <= first.ts + first.dur
WHERE first.waiter_count = 0
GROUP BY first.id;

-- The thread states, keyed by the thread as the blocking one.
CREATE PERFETTO VIEW _blocking_thread_state AS
SELECT utid AS blocking_utid, ts, dur, state, blocked_function
FROM thread_state;

CREATE VIRTUAL TABLE _android_monitor_contention_chain_thread_state
USING SPAN_JOIN(
  _first_blocked_contention PARTITIONED blocking_utid,
  _blocking_thread_state PARTITIONED blocking_utid
);

CREATE PERFETTO TABLE android_monitor_contention_chain_thread_state(
  id LONG,
  ts TIMESTAMP,
  dur DURATION,
  blocking_utid JOINID(thread.id),
  blocked_function STRING,
  state STRING
)
AS
SELECT id, ts, dur, blocking_utid, blocked_function, state
FROM _android_monitor_contention_chain_thread_state;

CREATE PERFETTO VIEW android_monitor_contention_chain_thread_state_by_txn(
  id LONG,
  thread_state STRING,
  thread_state_dur DURATION,
  thread_state_count LONG
)
AS
SELECT id, state AS thread_state, sum(dur) AS thread_state_dur, count(dur) AS thread_state_count
FROM android_monitor_contention_chain_thread_state
GROUP BY id, state;

CREATE PERFETTO VIEW android_monitor_contention_chain_blocked_functions_by_txn(
  id LONG,
  blocked_function STRING,
  blocked_function_dur DURATION,
  blocked_function_count LONG
)
AS
SELECT
  id,
  blocked_function,
  sum(dur) AS blocked_function_dur,
  count(dur) AS blocked_function_count
FROM android_monitor_contention_chain_thread_state
WHERE blocked_function IS NOT NULL
GROUP BY id, blocked_function;

-- Written for zerotrace: the `android.critical_blocking_calls` module,
-- the slices of every process that stand for a call that blocks its
-- thread (layout, inflation, lock contention, binder calls, GC waits,
-- handler messages and the like), with standardized names.

INCLUDE PERFETTO MODULE android.slices;
INCLUDE PERFETTO MODULE android.binder;
INCLUDE PERFETTO MODULE slices.with_context;

-- True when `slice_name` names a blocking call worth reporting: one of a
-- fixed set of names, a name of one of the known prefixes and patterns,
-- or a handler message (a name with a class and a '$' in it) that is
-- neither Choreographer's nor input's. A macro so that it costs no call
-- per slice.
CREATE PERFETTO MACRO _is_relevant_blocking_call_expr(slice_name Expr)
RETURNS Expr
AS (
  $slice_name IN (
    'measure', 'layout', 'configChanged', 'animation', 'input', 'traversal',
    'Contending for pthread mutex', 'postAndWait', 'CreateGraphicsPipeline',
    'flush layers', 'flush commands', 'queueBuffer'
  )
  OR $slice_name GLOB 'monitor contention with*'
  OR $slice_name GLOB 'SuspendThreadByThreadId*'
  OR $slice_name GLOB 'LoadApkAssetsFd*'
  OR $slice_name GLOB '*binder transaction*'
  OR $slice_name GLOB 'inflate*'
  OR $slice_name GLOB 'Lock contention on*'
  OR $slice_name GLOB 'android.os.Handler: kotlinx.coroutines*'
  OR $slice_name GLOB 'relayoutWindow*'
  OR $slice_name GLOB 'ImageDecoder#decode*'
  OR $slice_name GLOB 'NotificationStackScrollLayout#onMeasure'
  OR $slice_name GLOB 'ExpNotRow#*'
  OR $slice_name GLOB 'GC: Wait For*'
  OR $slice_name GLOB 'Recomposer:*'
  OR $slice_name GLOB 'Compose:*'
  OR $slice_name GLOB 'draw-VRI*'
  OR $slice_name GLOB 'drawLayer *'
  OR $slice_name GLOB 'DrawFrames*'
  OR $slice_name GLOB 'Texture upload*'
  OR (
    NOT $slice_name GLOB '*Choreographer*'
    AND NOT $slice_name GLOB '*Input*'
    AND NOT $slice_name GLOB '*input*'
    AND NOT $slice_name GLOB 'android.os.Handler: #*'
    AND (
      $slice_name GLOB '*Handler: *$*'
      OR $slice_name GLOB '*.*.*: *$*'
      OR $slice_name GLOB '*.*$*: #*'
    )
  )
);

-- _is_relevant_blocking_call_expr! as a function (`depth` is not used).
CREATE PERFETTO FUNCTION _is_relevant_blocking_call(name STRING, depth LONG)
RETURNS BOOL
AS SELECT _is_relevant_blocking_call_expr!($name);

-- The DrawFrames slices of every thread.
CREATE PERFETTO TABLE _android_critical_blocking_calls_draw_frames AS
SELECT utid, id, ts, dur
FROM thread_slice
WHERE name GLOB 'DrawFrames*'
ORDER BY ts;

-- The waitForBufferRelease slices of every thread.
CREATE PERFETTO TABLE _android_critical_blocking_calls_wait_for_buffer_release AS
SELECT utid, ts, dur
FROM thread_slice
WHERE name = 'waitForBufferRelease'
ORDER BY ts;

-- Each slice name that names a blocking call, with its standardized name.
-- The test and the standardization run once per distinct name rather
-- than once per slice: a trace of millions of slices holds few names, and
-- evaluated per slice the GLOBs and the standardizing function took
-- seconds. (The names are gathered first, into a table of their own, so
-- that SQLite cannot move the test back into the scan of every slice.)
CREATE PERFETTO TABLE _android_critical_blocking_calls_names AS
SELECT DISTINCT name
FROM slice
WHERE name IS NOT NULL;

CREATE PERFETTO TABLE _android_critical_blocking_calls_relevant_names AS
SELECT name, android_standardize_slice_name(name) AS standard_name
FROM _android_critical_blocking_calls_names
WHERE _is_relevant_blocking_call_expr!(name);

-- Every blocking call of every process: the relevant thread slices under
-- their standardized names (a DrawFrames slice less the time its thread
-- waited for buffer releases that began inside it), every 'drawLayer ...'
-- slice once more as 'drawLayer', and each synchronous binder transaction
-- whose server named its endpoint, under that name. Columns name, ts,
-- dur, id, process_name, utid, upid, ts_end.
CREATE PERFETTO TABLE _android_critical_blocking_calls AS
WITH
  waited AS (
    SELECT d.id, sum(w.dur) AS dur
    FROM _android_critical_blocking_calls_wait_for_buffer_release AS w
    JOIN _android_critical_blocking_calls_draw_frames AS d
      ON d.utid = w.utid AND w.ts >= d.ts AND w.ts < d.ts + d.dur
    GROUP BY d.id
  ),
  relevant AS (
    SELECT
      n.standard_name AS name,
      s.ts,
      iif(waited.dur IS NULL OR s.dur = -1, s.dur, max(s.dur - waited.dur, 0)) AS dur,
      s.id,
      s.process_name,
      th.utid,
      s.upid
    FROM _android_critical_blocking_calls_relevant_names AS n
    JOIN thread_slice AS s ON s.name = n.name
    JOIN thread AS th USING (utid)
    LEFT JOIN waited USING (id)
    ORDER BY s.id
  )
SELECT name, ts, dur, id, process_name, utid, upid, ts + dur AS ts_end
FROM relevant
UNION ALL
SELECT
  'drawLayer' AS name,
  s.ts,
  s.dur,
  s.id,
  s.process_name,
  th.utid,
  s.upid,
  s.ts + s.dur AS ts_end
FROM thread_slice AS s
JOIN thread AS th USING (utid)
WHERE s.name GLOB 'drawLayer *'
UNION ALL
SELECT
  b.aidl_name AS name,
  b.client_ts AS ts,
  b.client_dur AS dur,
  b.binder_txn_id AS id,
  b.client_process AS process_name,
  b.client_utid AS utid,
  b.client_upid AS upid,
  b.client_ts + b.client_dur AS ts_end
FROM android_binder_txns AS b
WHERE b.aidl_name IS NOT NULL AND b.is_sync = 1;

-- True for a notification shade measure slice that took time.
CREATE PERFETTO FUNCTION _is_relevant_notifications_blocking_call(name STRING, dur LONG)
RETURNS BOOL
AS SELECT $name = 'NotificationStackScrollLayout#onMeasure' AND $dur > 0;

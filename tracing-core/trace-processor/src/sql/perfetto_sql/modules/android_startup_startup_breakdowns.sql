-- Written for zerotrace: the `android.startup.startup_breakdowns` module.
-- `android_startup_opinionated_breakdown`: each app startup's time on its
-- process's main thread cut into exclusive intervals, each blamed on one
-- reason: `io` when the thread waited on IO; else the innermost known
-- slice running then (`_normalize_android_string`'s names: binder, lock
-- and monitor contention, dlopen, class verification, inflate,
-- bindApplication and the activity lifecycle, …); else `irq` in IRQ
-- context; else the thread's state. The time from the startup's start to
-- the first thread state inside it is `launch_delay`. Concurrent startups
-- on one main thread are left out (each startup gets an id beyond the
-- slice table's, `_startup_root_slices`).

INCLUDE PERFETTO MODULE android.startup.startups;
INCLUDE PERFETTO MODULE intervals.overlap;
INCLUDE PERFETTO MODULE slices.hierarchy;
INCLUDE PERFETTO MODULE slices.with_context;
INCLUDE PERFETTO MODULE intervals.intersect;

-- The breakdown's name for a slice name, NULL for slices it ignores.
CREATE PERFETTO FUNCTION _normalize_android_string(name STRING)
RETURNS STRING
AS
SELECT CASE
  WHEN $name = 'mm_vmscan_direct_reclaim' THEN 'kernel_memory_reclaim'
  WHEN $name GLOB 'GC: Wait For*' THEN 'userspace_memory_reclaim'
  WHEN $name GLOB 'monitor contention*' OR $name GLOB 'Lock contention on a monitor lock*'
    THEN 'monitor_contention'
  WHEN $name GLOB 'Lock contention*' THEN 'art_lock_contention'
  WHEN $name IN ('binder transaction', 'binder reply') THEN 'binder'
  WHEN $name = 'Contending for pthread mutex' THEN 'mutex_contention'
  WHEN $name GLOB 'dlopen*' THEN 'dlopen'
  WHEN $name GLOB 'VerifyClass*' THEN 'verify_class'
  WHEN $name = 'inflate' THEN 'inflate'
  WHEN $name GLOB 'Choreographer#doFrame*' THEN 'choreographer_do_frame'
  WHEN $name GLOB 'OpenDexFilesFromOat*' THEN 'open_dex_files_from_oat'
  WHEN $name = 'ResourcesManager#getResources' THEN 'resources_manager_get_resources'
  WHEN $name = 'bindApplication' THEN 'bind_application'
  WHEN $name = 'activityStart' THEN 'activity_start'
  WHEN $name = 'activityResume' THEN 'activity_resume'
  WHEN $name = 'activityRestart' THEN 'activity_restart'
  WHEN $name = 'clientTransactionExecuted' THEN 'client_transaction_executed'
END;

-- The reason an interval is blamed on.
CREATE PERFETTO FUNCTION _startup_breakdown_reason(
  name STRING,
  state STRING,
  io_wait LONG,
  irq_context LONG
)
RETURNS STRING
AS
SELECT CASE
  WHEN $io_wait = 1 THEN 'io'
  WHEN $name IS NOT NULL THEN $name
  WHEN $irq_context = 1 THEN 'irq'
  ELSE $state
END;

-- Each startup on its main thread with an id of its own; of startups that
-- overlap on one thread, none.
CREATE PERFETTO TABLE _startup_root_slices AS
WITH
  candidates AS (
    SELECT
      (SELECT max(id) FROM slice) + row_number() OVER () AS id,
      s.dur,
      s.ts,
      s.startup_id,
      s.startup_type,
      p.name AS process_name,
      t.utid
    FROM android_startup_processes AS sp
    JOIN android_startups AS s USING (startup_id)
    JOIN process AS p ON p.upid = sp.upid
    JOIN thread AS t ON t.upid = p.upid AND t.is_main_thread
    WHERE s.dur > 0
    ORDER BY s.ts
  ),
  alone AS (
    SELECT id_0 AS id, count() AS n
    FROM _interval_intersect!((candidates, candidates), (utid))
    GROUP BY utid, ts
    HAVING n = 1
  )
SELECT c.*
FROM candidates AS c
JOIN alone USING (id);

-- The main thread's slices overlapping its startup, under their
-- breakdown names.
CREATE PERFETTO TABLE _startup_relevant_slices AS
SELECT
  s.id,
  s.parent_id,
  s.depth,
  _normalize_android_string(s.name) AS name,
  s.ts,
  s.dur,
  s.utid
FROM thread_slice AS s
JOIN _startup_root_slices AS r
  ON s.utid = r.utid AND max(s.ts, r.ts) < min(s.ts + s.dur, r.ts + r.dur)
WHERE s.dur > 0;

-- Those with a breakdown name, reparented past the ones without.
CREATE PERFETTO TABLE _startup_normalized_slices AS
SELECT p.id, p.parent_id, p.depth, p.name, s.ts, s.dur, s.utid
FROM _slice_remove_nulls_and_reparent!(
  (SELECT id, parent_id, depth, name FROM _startup_relevant_slices),
  name
) AS p
JOIN _startup_relevant_slices AS s USING (id)
ORDER BY p.id;

-- Those slices cut to their startups.
CREATE PERFETTO TABLE _startup_slices_breakdown AS
SELECT *
FROM _intervals_merge_root_and_children_by_intersection!(
  _startup_root_slices,
  _startup_normalized_slices,
  utid
);

-- The innermost slice at each moment of each startup.
CREATE PERFETTO TABLE _startup_flat_slices_breakdown AS
SELECT f.ts, f.dur, f.root_id, s.id AS slice_id, s.name
FROM _intervals_flatten!(_startup_slices_breakdown) AS f
JOIN _startup_normalized_slices AS s USING (id);

-- The main thread's states cut to its startups.
CREATE PERFETTO TABLE _startup_thread_states_breakdown AS
SELECT
  m.ts,
  m.dur,
  m.root_id,
  t.id AS thread_state_id,
  t.state,
  t.io_wait,
  t.irq_context
FROM _intervals_merge_root_and_children_by_intersection!(
  _startup_root_slices,
  (SELECT *, NULL AS parent_id FROM thread_state),
  utid
) AS m
JOIN thread_state AS t USING (id);

CREATE VIRTUAL TABLE _startup_thread_states_and_slices_breakdown_sp
USING SPAN_LEFT_JOIN(
  _startup_thread_states_breakdown PARTITIONED root_id,
  _startup_flat_slices_breakdown PARTITIONED root_id
);

CREATE PERFETTO TABLE android_startup_opinionated_breakdown(
  startup_id JOINID(android_startups.startup_id),
  slice_id JOINID(slice.id),
  thread_state_id JOINID(thread_state.id),
  ts TIMESTAMP,
  dur DURATION,
  reason STRING
)
AS
SELECT
  b.ts,
  b.dur,
  r.startup_id,
  b.slice_id,
  b.thread_state_id,
  _startup_breakdown_reason(b.name, b.state, b.io_wait, b.irq_context) AS reason
FROM _startup_thread_states_and_slices_breakdown_sp AS b
JOIN _startup_root_slices AS r ON r.id = b.root_id
UNION ALL
SELECT
  r.ts,
  min(t.ts) - r.ts AS dur,
  r.startup_id,
  NULL AS slice_id,
  NULL AS thread_state_id,
  'launch_delay' AS reason
FROM _startup_thread_states_breakdown AS t
JOIN _startup_root_slices AS r ON r.id = t.root_id
GROUP BY t.root_id
HAVING min(t.ts) - r.ts > 0;

-- android.startup.startups, written for zerotrace: app startups on any
-- Android version, their processes, threads and slices. The SDK level
-- in the metadata picks the detector (33 and later: launchingActivity#
-- slices; 29 to 32: MetricsLogger markers; older: `launching:` slices);
-- without it, the markers present in the trace decide.
--   _android_startups_raw            every detected startup
--   _startup_indicator_slices        bindApplication/activityStart/
--                                    activityResume slices
--   _startup_indicator_slice_count(start_ts, end_ts, utid, name)
--   android_startup_processes        each startup's process(es) and type
--   android_startups                 the startups
--   android_startup_threads          every thread of a startup's process
--   android_thread_slices_for_all_startups  those threads' slices inside
--                                    the startup
--   android_slices_for_startup_and_slice_name(startup_id, glob)
--   android_class_loading_for_startup  class-loading slices (`L...;`)
--   android_binder_transaction_slices_for_startup(startup_id, threshold)
--   android_sum_dur_for_startup_and_slice(startup_id, glob)
--   android_sum_dur_on_main_thread_for_startup_and_slice(startup_id, glob)

INCLUDE PERFETTO MODULE android.process_metadata;
INCLUDE PERFETTO MODULE android.startup.startups_maxsdk28;
INCLUDE PERFETTO MODULE android.startup.startups_minsdk29;
INCLUDE PERFETTO MODULE android.startup.startups_minsdk33;
INCLUDE PERFETTO MODULE android.startup.startup_events;
INCLUDE PERFETTO MODULE android.version;

-- The startups of the detector that fits the trace. Below SDK 33 the ids
-- count from 0 in start order.
CREATE PERFETTO TABLE _android_startups_raw AS
WITH detector AS (
  SELECT CASE
    WHEN _android_sdk_version() >= 33 THEN 33
    WHEN _android_sdk_version() >= 29 THEN 29
    WHEN _android_sdk_version() IS NOT NULL THEN 28
    WHEN EXISTS (SELECT 1 FROM slice WHERE name GLOB 'launchingActivity#*:*')
      THEN 33
    WHEN EXISTS (SELECT 1 FROM slice WHERE name GLOB 'MetricsLogger:*') THEN 29
    ELSE 28
  END AS sdk
)
SELECT
  row_number() OVER (ORDER BY ts) - 1 AS startup_id,
  ts, ts_end, dur, package, startup_type
FROM _startups_maxsdk28
WHERE (SELECT sdk FROM detector) = 28
UNION ALL
SELECT
  row_number() OVER (ORDER BY ts) - 1 AS startup_id,
  ts, ts_end, dur, package, startup_type
FROM _startups_minsdk29
WHERE (SELECT sdk FROM detector) = 29
UNION ALL
SELECT startup_id, ts, ts_end, dur, package, startup_type
FROM _startups_minsdk33
WHERE (SELECT sdk FROM detector) = 33;

-- The slices whose presence tells a startup's temperature.
CREATE PERFETTO TABLE _startup_indicator_slices AS
SELECT ts, name, track_id
FROM slice
WHERE name IN ('bindApplication', 'activityStart', 'activityResume');

-- How many slices called `name` start on thread `utid` in
-- [start_ts, end_ts).
CREATE PERFETTO FUNCTION _startup_indicator_slice_count(
  start_ts TIMESTAMP,
  end_ts TIMESTAMP,
  utid JOINID(thread.id),
  name STRING
)
RETURNS LONG
AS
SELECT count(*)
FROM thread_track AS t
JOIN _startup_indicator_slices AS s ON s.track_id = t.id
WHERE t.utid = $utid
  AND s.ts >= $start_ts AND s.ts < $end_ts
  AND s.name = $name;

-- The process(es) each startup launched: those of its package (by
-- process name prefix when the trace has no package list) whose main
-- thread resumed an activity during it, with the startup's type, or,
-- when the detector gave none, 'cold' (bindApplication, activityStart and
-- activityResume seen), 'warm' (activityStart and activityResume) or
-- 'hot' (activityResume only).
CREATE PERFETTO TABLE android_startup_processes(
  startup_id JOINID(android_startups.startup_id),
  upid JOINID(process.id),
  pid LONG,
  startup_type STRING
) AS
WITH counted AS (
  SELECT
    r.startup_id,
    r.startup_type,
    p.upid,
    p.pid,
    _startup_indicator_slice_count(r.ts, r.ts_end, t.utid, 'bindApplication')
      AS bind_app,
    _startup_indicator_slice_count(r.ts, r.ts_end, t.utid, 'activityStart')
      AS a_start,
    _startup_indicator_slice_count(r.ts, r.ts_end, t.utid, 'activityResume')
      AS a_resume
  FROM _android_startups_raw AS r
  JOIN android_process_metadata AS p
    ON p.package_name = r.package
    OR (NOT EXISTS (SELECT 1 FROM package_list)
      AND p.process_name GLOB r.package || '*')
  JOIN thread AS t ON t.upid = p.upid AND t.is_main_thread
),
typed AS (
  SELECT
    startup_id,
    upid,
    pid,
    CASE
      WHEN startup_type IS NOT NULL THEN startup_type
      WHEN bind_app > 0 AND a_start > 0 AND a_resume > 0 THEN 'cold'
      WHEN a_start > 0 AND a_resume > 0 THEN 'warm'
      WHEN a_resume > 0 THEN 'hot'
      ELSE NULL
    END AS startup_type
  FROM counted
  WHERE a_resume > 0
)
SELECT * FROM typed WHERE startup_type IS NOT NULL;

-- The startups: when each began and ended, its duration, its duration
-- without a trampoline activity (from the last `launching:` slice inside
-- it that follows another one there), its package and its type.
CREATE PERFETTO VIEW android_startups(
  startup_id ID,
  ts TIMESTAMP,
  ts_end TIMESTAMP,
  dur DURATION,
  dur_without_trampoline DURATION,
  package STRING,
  startup_type STRING
) AS
SELECT
  r.startup_id,
  r.ts,
  r.ts_end,
  r.dur,
  coalesce(
    (
      SELECT last.dur
      FROM _startup_events AS last
      WHERE last.package_name = r.package
        AND last.ts >= r.ts AND last.ts < r.ts_end
        AND EXISTS (
          SELECT 1 FROM _startup_events AS earlier
          WHERE earlier.ts >= r.ts AND earlier.ts < r.ts_end
            AND earlier.ts < last.ts
        )
      ORDER BY last.ts DESC
      LIMIT 1
    ),
    r.dur
  ) AS dur_without_trampoline,
  r.package,
  coalesce(r.startup_type, max(p.startup_type)) AS startup_type
FROM _android_startups_raw AS r
LEFT JOIN android_startup_processes AS p USING (startup_id)
GROUP BY r.startup_id;

-- Every thread of every process a startup launched.
CREATE PERFETTO VIEW android_startup_threads(
  startup_id JOINID(android_startups.startup_id),
  ts TIMESTAMP,
  dur DURATION,
  upid JOINID(process.id),
  pid LONG,
  utid JOINID(thread.id),
  tid LONG,
  thread_name STRING,
  is_main_thread BOOL
) AS
SELECT
  s.startup_id,
  s.ts,
  s.dur,
  p.upid,
  p.pid,
  t.utid,
  t.tid,
  t.name AS thread_name,
  t.is_main_thread
FROM android_startups AS s
JOIN android_startup_processes AS p USING (startup_id)
JOIN thread AS t USING (upid);

-- The slices of those threads that start inside the startup (ends
-- included).
CREATE PERFETTO VIEW android_thread_slices_for_all_startups(
  startup_ts TIMESTAMP,
  startup_ts_end TIMESTAMP,
  startup_id JOINID(android_startups.startup_id),
  utid JOINID(thread.id),
  tid LONG,
  thread_name STRING,
  is_main_thread BOOL,
  arg_set_id ARGSETID,
  slice_id JOINID(slice.id),
  slice_name STRING,
  slice_ts TIMESTAMP,
  slice_dur DURATION
) AS
SELECT
  st.ts AS startup_ts,
  st.ts + st.dur AS startup_ts_end,
  st.startup_id,
  st.utid,
  st.tid,
  st.thread_name,
  st.is_main_thread,
  s.arg_set_id,
  s.id AS slice_id,
  s.name AS slice_name,
  s.ts AS slice_ts,
  s.dur AS slice_dur
FROM android_startup_threads AS st
JOIN thread_track AS tt USING (utid)
JOIN slice AS s ON s.track_id = tt.id
WHERE s.ts BETWEEN st.ts AND st.ts + st.dur;

-- A startup's slices whose name matches `slice_name` (a glob).
CREATE PERFETTO FUNCTION android_slices_for_startup_and_slice_name(
  startup_id JOINID(android_startups.startup_id),
  slice_name STRING
)
RETURNS TABLE(
  slice_id JOINID(slice.id),
  slice_name STRING,
  slice_ts TIMESTAMP,
  slice_dur DURATION,
  thread_name STRING,
  tid LONG,
  arg_set_id ARGSETID
)
AS
SELECT slice_id, slice_name, slice_ts, slice_dur, thread_name, tid, arg_set_id
FROM android_thread_slices_for_all_startups
WHERE startup_id = $startup_id AND slice_name GLOB $slice_name;

-- The class-loading slices (named like a JVM class descriptor `L...;`)
-- of every startup.
CREATE PERFETTO VIEW android_class_loading_for_startup(
  slice_id JOINID(slice.id),
  startup_id JOINID(android_startups.startup_id),
  slice_name STRING,
  slice_ts TIMESTAMP,
  slice_dur DURATION,
  thread_name STRING,
  tid LONG,
  arg_set_id ARGSETID
) AS
SELECT
  slice_id, startup_id, slice_name, slice_ts, slice_dur, thread_name, tid,
  arg_set_id
FROM android_thread_slices_for_all_startups
WHERE slice_name GLOB 'L*;';

-- A startup's `binder transaction` slices longer than `threshold`, with
-- the process the transaction went to.
CREATE PERFETTO FUNCTION android_binder_transaction_slices_for_startup(
  startup_id JOINID(android_startups.startup_id),
  threshold DOUBLE
)
RETURNS TABLE(
  id LONG,
  slice_dur DURATION,
  thread_name STRING,
  process STRING,
  arg_set_id ARGSETID,
  is_main_thread BOOL
)
AS
SELECT
  s.slice_id AS id,
  s.slice_dur,
  s.thread_name,
  p.name AS process,
  s.arg_set_id,
  s.is_main_thread
FROM android_thread_slices_for_all_startups AS s
JOIN process AS p
  ON p.pid = extract_arg(s.arg_set_id, 'destination process')
WHERE s.startup_id = $startup_id
  AND s.slice_name GLOB 'binder transaction'
  AND s.slice_dur > $threshold;

-- The total duration of a startup's slices matching `slice_name`.
CREATE PERFETTO FUNCTION android_sum_dur_for_startup_and_slice(
  startup_id JOINID(android_startups.startup_id),
  slice_name STRING
)
RETURNS LONG
AS
SELECT sum(slice_dur)
FROM android_thread_slices_for_all_startups
WHERE startup_id = $startup_id AND slice_name GLOB $slice_name;

-- The same, on the main thread only.
CREATE PERFETTO FUNCTION android_sum_dur_on_main_thread_for_startup_and_slice(
  startup_id JOINID(android_startups.startup_id),
  slice_name STRING
)
RETURNS LONG
AS
SELECT sum(slice_dur)
FROM android_thread_slices_for_all_startups
WHERE startup_id = $startup_id AND slice_name GLOB $slice_name
  AND is_main_thread;

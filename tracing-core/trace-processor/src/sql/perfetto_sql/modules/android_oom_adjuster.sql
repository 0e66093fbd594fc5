-- Written for zerotrace: the `android.oom_adjuster` module. Android's
-- activity manager rates each process's importance with an OOM adjustment
-- score (the `oom_score_adj` process counters); lower is more important.
-- It provides the score's coarse and detailed bucket names
-- (`android_oom_adj_score_to_bucket_name`,
-- `android_oom_adj_score_to_detailed_bucket_name`) and
-- `android_oom_adj_intervals`: each process's score as intervals, with
-- the system_server `updateOomAdj_<reason>` slice in force when it changed
-- (the last one begun before the change) and the slice that called it.

INCLUDE PERFETTO MODULE slices.with_context;

INCLUDE PERFETTO MODULE counters.intervals;

CREATE PERFETTO FUNCTION android_oom_adj_score_to_bucket_name(oom_score LONG)
RETURNS STRING AS
SELECT
  CASE
    WHEN $oom_score >= 900 THEN 'cached'
    WHEN $oom_score >= 250 THEN 'background'
    WHEN $oom_score >= 201 THEN 'job'
    WHEN $oom_score = 200 THEN 'foreground_service'
    WHEN $oom_score >= 100 THEN 'bfgs'
    WHEN $oom_score >= 0 THEN 'foreground'
    WHEN $oom_score < 0 THEN 'system'
  END;

CREATE PERFETTO FUNCTION android_oom_adj_score_to_detailed_bucket_name(
  value LONG,
  android_appid LONG
)
RETURNS STRING AS
SELECT
  CASE
    WHEN $value = -1000 THEN 'native'
    WHEN $value = -900 THEN 'system'
    WHEN $value = -800 THEN 'persistent_proc'
    WHEN $value = -700 THEN 'persistent_service'
    WHEN $value = -600 THEN 'logcat'
    WHEN $value = 0 THEN 'foreground_app'
    WHEN $value = 50 THEN 'perceptible_foreground_app'
    WHEN $value >= 950 THEN 'cached_app_lmk_first'
    WHEN $value >= 900 THEN 'cached_app'
    WHEN $value >= 800 THEN 'service_b'
    WHEN $value >= 700 THEN 'previous_app'
    WHEN $value >= 600 THEN 'home_app'
    WHEN $value >= 500 THEN 'service'
    WHEN $value >= 400 THEN 'heavy_weight_app'
    WHEN $value >= 300 THEN 'backup'
    WHEN $value >= 250 THEN 'perceptible_low_app'
    WHEN $value >= 225 THEN 'perceptible_medium_app'
    WHEN $value >= 200 THEN 'perceptible_app'
    WHEN $value >= 100 THEN 'visible_app'
    WHEN $android_appid IS NULL THEN 'unknown'
    WHEN $android_appid < 10000 THEN 'unknown_native'
    ELSE 'unknown_app'
  END;

CREATE PERFETTO TABLE _oom_adjuster_intervals AS
WITH
  updates AS (
    SELECT
      ts.id AS oom_adj_id,
      ts.ts AS oom_adj_ts,
      ts.dur AS oom_adj_dur,
      ts.track_id AS oom_adj_track_id,
      ts.utid AS oom_adj_utid,
      ts.thread_name AS oom_adj_thread_name,
      str_split(ts.name, '_', 1) AS oom_adj_reason,
      caller.name AS oom_adj_trigger,
      lead(ts.ts) OVER (ORDER BY ts.ts) AS oom_adj_next_ts
    FROM thread_slice AS ts
    LEFT JOIN slice AS caller ON caller.id = ts.parent_id AND caller.dur != -1
    WHERE ts.name GLOB 'updateOomAdj_*' AND ts.process_name = 'system_server'
  ),
  scores AS (
    SELECT *
    FROM counter_leading_intervals!((
      SELECT c.id, c.ts, c.track_id, c.value
      FROM counter AS c
      JOIN counter_track AS t ON t.id = c.track_id
      WHERE t.name = 'oom_score_adj'
    ))
  )
SELECT
  s.ts,
  s.dur,
  cast_int!(s.value) AS score,
  p.upid,
  p.name AS process_name,
  u.oom_adj_id,
  u.oom_adj_ts,
  u.oom_adj_dur,
  u.oom_adj_track_id,
  u.oom_adj_thread_name,
  u.oom_adj_utid,
  u.oom_adj_reason,
  u.oom_adj_trigger,
  p.android_appid
FROM scores AS s
JOIN process_counter_track AS t ON t.id = s.track_id
JOIN process AS p USING (upid)
LEFT JOIN updates AS u
  ON s.ts > u.oom_adj_ts AND s.ts <= coalesce(u.oom_adj_next_ts, trace_end())
WHERE t.name = 'oom_score_adj';

CREATE PERFETTO VIEW android_oom_adj_intervals(
  ts TIMESTAMP,
  dur DURATION,
  score LONG,
  bucket STRING,
  upid JOINID(process.id),
  process_name STRING,
  oom_adj_id LONG,
  oom_adj_ts TIMESTAMP,
  oom_adj_dur DURATION,
  oom_adj_track_id JOINID(track.id),
  oom_adj_thread_name STRING,
  oom_adj_reason STRING,
  oom_adj_trigger STRING
) AS
SELECT
  ts,
  dur,
  score,
  android_oom_adj_score_to_bucket_name(score) AS bucket,
  upid,
  process_name,
  oom_adj_id,
  oom_adj_ts,
  oom_adj_dur,
  oom_adj_track_id,
  oom_adj_thread_name,
  oom_adj_reason,
  oom_adj_trigger
FROM _oom_adjuster_intervals;

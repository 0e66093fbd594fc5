-- android.cujs.cuj_frame_counters, written for zerotrace: the frame
-- counts Android's jank tracker itself reports at the end of each jank
-- CUJ, as process counters on tracks named `J<NAME>#<counter>`
-- (totalFrames, missedFrames, missedAppFrames, missedSfFrames,
-- maxSuccessiveMissedFrames, totalAnimTime, weightedJank,
-- weightedAppJank, weightedSfJank, maxFrameTimeMillis), and the missed
-- callback markers (`...FT#Missed...`) on the CUJ's track.
--   _marker_missed_callback                the missed-callback markers
--   _android_cuj_missed_vsyncs_for_callback(cuj_slice_name, ts_min,
--       ts_max, callback_missed)           how many match a glob
--   _android_jank_cuj_counter              the CUJ counters' samples
--   _android_jank_cuj_counter_value(cuj_name, counter_name, ts_min, ts_max)
--                                          the first sample in a window
--   _android_jank_cuj_counter_metrics      the reported counts per CUJ

INCLUDE PERFETTO MODULE android.cujs.base;

-- The `*FT#Missed*` markers with the name of the track they are on (the
-- CUJ's slice name).
CREATE PERFETTO VIEW _marker_missed_callback AS
SELECT t.name AS cuj_slice_name, m.ts, m.name AS marker_name
FROM slice AS m
JOIN track AS t ON t.id = m.track_id
WHERE m.name GLOB '*FT#Missed*';

-- How many missed-callback markers of CUJ `cuj_slice_name` in
-- [ts_min, ts_max] (no upper bound when NULL) match `callback_missed`.
CREATE PERFETTO FUNCTION _android_cuj_missed_vsyncs_for_callback(
  cuj_slice_name STRING,
  ts_min TIMESTAMP,
  ts_max TIMESTAMP,
  callback_missed STRING
)
RETURNS LONG
AS
SELECT coalesce(sum(marker_name GLOB $callback_missed), 0)
FROM _marker_missed_callback
WHERE cuj_slice_name = $cuj_slice_name
  AND ts >= $ts_min
  AND ($ts_max IS NULL OR ts <= $ts_max);

-- The samples of the `J<NAME>#<counter>` process counters of processes
-- with jank CUJs, with the CUJ and counter names, as integers.
CREATE PERFETTO VIEW _android_jank_cuj_counter AS
WITH tracks AS (
  SELECT DISTINCT
    t.upid,
    t.id AS track_id,
    str_split(str_split(t.name, '>#', 0), '<', 1) AS cuj_name,
    str_split(t.name, '#', 1) AS counter_name
  FROM process_counter_track AS t
  JOIN android_jank_cuj AS c USING (upid)
  WHERE t.name GLOB 'J<*>#*'
)
SELECT c.ts, t.upid, t.cuj_name, t.counter_name, CAST(c.value AS INTEGER) AS value
FROM counter AS c
JOIN tracks AS t ON t.track_id = c.track_id;

-- The first sample of counter `counter_name` of CUJ `cuj_name` in
-- [ts_min, ts_max] (no upper bound when NULL).
CREATE PERFETTO FUNCTION _android_jank_cuj_counter_value(
  cuj_name STRING,
  counter_name STRING,
  ts_min TIMESTAMP,
  ts_max TIMESTAMP
)
RETURNS LONG
AS
SELECT value
FROM _android_jank_cuj_counter
WHERE cuj_name = $cuj_name
  AND counter_name = $counter_name
  AND ts >= $ts_min
  AND ($ts_max IS NULL OR ts <= $ts_max)
ORDER BY ts
LIMIT 1;

-- Per jank CUJ, the counts the tracker reported for it: the first
-- sample of each counter from the CUJ's end (SystemUI, other
-- `com.android.*` apps and the launcher) or from 4 ms before it (other
-- apps, whose counters may come early), up to the end of the next CUJ of
-- the same name. Weighted counts are per mille, frame_dur_max in ns.
CREATE PERFETTO TABLE _android_jank_cuj_counter_metrics(
  cuj_id LONG,
  cuj_name STRING,
  upid JOINID(process.id),
  state STRING,
  total_frames LONG,
  missed_frames LONG,
  missed_app_frames LONG,
  missed_sf_frames LONG,
  missed_frames_max_successive LONG,
  anim_duration_ms LONG,
  weighted_missed_frames DOUBLE,
  weighted_missed_app_frames DOUBLE,
  weighted_missed_sf_frames DOUBLE,
  frame_dur_max LONG,
  sf_callback_missed_frames LONG,
  hwui_callback_missed_frames LONG
) AS
WITH windows AS (
  SELECT
    cuj_id,
    cuj_name,
    cuj_slice_name,
    upid,
    state,
    iif(
      process_name GLOB 'com.android.*'
        OR process_name = 'com.google.android.apps.nexuslauncher',
      ts_end,
      max(ts, ts_end - 4000000)
    ) AS ts_from,
    lead(ts_end) OVER (PARTITION BY cuj_name ORDER BY ts_end) AS ts_to
  FROM android_jank_cuj
)
SELECT
  cuj_id,
  cuj_name,
  upid,
  state,
  _android_jank_cuj_counter_value(cuj_name, 'totalFrames', ts_from, ts_to)
    AS total_frames,
  _android_jank_cuj_counter_value(cuj_name, 'missedFrames', ts_from, ts_to)
    AS missed_frames,
  _android_jank_cuj_counter_value(cuj_name, 'missedAppFrames', ts_from, ts_to)
    AS missed_app_frames,
  _android_jank_cuj_counter_value(cuj_name, 'missedSfFrames', ts_from, ts_to)
    AS missed_sf_frames,
  _android_jank_cuj_counter_value(
    cuj_name, 'maxSuccessiveMissedFrames', ts_from, ts_to)
    AS missed_frames_max_successive,
  _android_jank_cuj_counter_value(cuj_name, 'totalAnimTime', ts_from, ts_to)
    AS anim_duration_ms,
  _android_jank_cuj_counter_value(cuj_name, 'weightedJank', ts_from, ts_to)
    / 1000.0 AS weighted_missed_frames,
  _android_jank_cuj_counter_value(cuj_name, 'weightedAppJank', ts_from, ts_to)
    / 1000.0 AS weighted_missed_app_frames,
  _android_jank_cuj_counter_value(cuj_name, 'weightedSfJank', ts_from, ts_to)
    / 1000.0 AS weighted_missed_sf_frames,
  _android_jank_cuj_counter_value(cuj_name, 'maxFrameTimeMillis', ts_from, ts_to)
    * 1000000 AS frame_dur_max,
  _android_cuj_missed_vsyncs_for_callback(cuj_slice_name, ts_from, ts_to, '*SF*')
    AS sf_callback_missed_frames,
  _android_cuj_missed_vsyncs_for_callback(cuj_slice_name, ts_from, ts_to, '*HWUI*')
    AS hwui_callback_missed_frames
FROM windows;

-- android.cujs.base, written for zerotrace: Android's jank CUJs
-- ("critical user journeys"). SystemUI and launcher processes mark each
-- CUJ with a process-track slice named `J<NAME>`; instant markers named
-- after it (`J<NAME>#FT#begin|end|cancel|layerId#<id>|beginVsync#<id>|
-- endVsync#<id>`, `FT#...` on a track named after the CUJ, and
-- `J<NAME>#UIThread` on the CUJ's UI thread) say how it ended, which
-- layer it drew and which vsyncs it spans.
--   _is_jank_slice!(slice, process)   a J<...> slice of an Android app
--   _jank_cujs_slices                 the CUJ slices, numbered by start
--   _cuj_state_markers                each CUJ's markers, classified
--   _cuj_instant_events               layer, vsync range and UI thread
--   _extract_cuj_name_from_slice(s)   `NAME` out of `J<NAME>`
--   _all_frames_in_cuj                the app frames inside each CUJ
--   _android_distinct_frames_in_cuj   one row per CUJ and frame id
--   _android_distinct_frames_layers_cuj  one row per CUJ, frame and layer
--   _android_jank_cuj_do_frames       the doFrame slices of each CUJ
--   android_jank_cuj_layer_name       the layer each CUJ drew
--   android_jank_cuj                  the CUJs that were not canceled

INCLUDE PERFETTO MODULE android.frames.timeline;

-- True for a slice named `J<...>` in a process whose name starts with
-- `com.google.android` or `com.android.`.
CREATE PERFETTO MACRO _is_jank_slice(
  slice TableOrSubquery,
  process TableOrSubquery
)
RETURNS Expr
AS ($slice.name GLOB 'J<*>'
  AND ($process.name GLOB 'com.google.android*'
    OR $process.name GLOB 'com.android.*'));

-- The CUJ slices (positive duration, on a process track), numbered from 1
-- by start time then slice id.
CREATE PERFETTO TABLE _jank_cujs_slices(
  cuj_id LONG,
  upid JOINID(process.id),
  process_name STRING,
  slice_id JOINID(slice.id),
  cuj_slice_name STRING,
  ts TIMESTAMP,
  dur DURATION,
  ts_end TIMESTAMP
) AS
WITH cuj AS (
  SELECT s.id, s.ts, s.dur, s.name, p.upid, p.name AS pname
  FROM slice AS s
  JOIN process_track AS pt ON pt.id = s.track_id
  JOIN process AS p ON p.upid = pt.upid
  WHERE _is_jank_slice!(s, p) AND s.dur > 0
)
SELECT
  row_number() OVER (ORDER BY ts, id) AS cuj_id,
  upid,
  pname AS process_name,
  id AS slice_id,
  name AS cuj_slice_name,
  ts,
  dur,
  ts + dur AS ts_end
FROM cuj
ORDER BY cuj_id;

-- Every marker slice of a CUJ that starts inside it: `<cuj>#FT#...`,
-- `FT#...` on a track named after the CUJ, or `<cuj>#UIThread`; with its
-- kind (begin, deferMonitoring, end, cancel, layerId, UIThread, other)
-- and the thread it is on.
CREATE PERFETTO TABLE _cuj_state_markers(
  cuj_id LONG,
  upid JOINID(process.id),
  marker_type STRING,
  marker_name STRING,
  utid JOINID(thread.id)
) AS
SELECT
  c.cuj_id,
  c.upid,
  CASE
    WHEN m.name GLOB '*FT#begin*' THEN 'begin'
    WHEN m.name GLOB '*FT#deferMonitoring*' THEN 'deferMonitoring'
    WHEN m.name GLOB '*FT#end*' THEN 'end'
    WHEN m.name GLOB '*FT#cancel*' THEN 'cancel'
    WHEN m.name GLOB '*FT#layerId*' THEN 'layerId'
    WHEN m.name GLOB '*#UIThread' THEN 'UIThread'
    ELSE 'other'
  END AS marker_type,
  m.name AS marker_name,
  tt.utid
FROM _jank_cujs_slices AS c
JOIN slice AS m ON m.ts >= c.ts AND m.ts < c.ts_end
LEFT JOIN track AS t ON t.id = m.track_id
LEFT JOIN thread_track AS tt ON tt.id = m.track_id
WHERE m.name GLOB c.cuj_slice_name || '#FT#*'
  OR (t.name = c.cuj_slice_name AND m.name GLOB 'FT#*')
  OR m.name = c.cuj_slice_name || '#UIThread';

-- The integer after `key` in a marker's name, NULL when the name has no
-- `key`.
CREATE PERFETTO FUNCTION _cuj_marker_value(name STRING, key STRING)
RETURNS LONG
AS
SELECT iif(
  $name GLOB '*' || $key || '*',
  CAST(str_split($name, $key, 1) AS INTEGER),
  NULL
);

-- Per CUJ (every CUJ, markers or not): the layer id, the first and last
-- vsync ids its markers name, and the thread of its UIThread marker.
CREATE PERFETTO TABLE _cuj_instant_events(
  cuj_id LONG,
  upid JOINID(process.id),
  layer_id LONG,
  begin_vsync LONG,
  end_vsync LONG,
  ui_thread JOINID(thread.id)
) AS
SELECT
  c.cuj_id,
  c.upid,
  max(_cuj_marker_value(m.marker_name, 'layerId#')) AS layer_id,
  max(_cuj_marker_value(m.marker_name, 'beginVsync#')) AS begin_vsync,
  max(_cuj_marker_value(m.marker_name, 'endVsync#')) AS end_vsync,
  max(iif(m.marker_type = 'UIThread', m.utid, NULL)) AS ui_thread
FROM _jank_cujs_slices AS c
LEFT JOIN _cuj_state_markers AS m USING (cuj_id)
GROUP BY c.cuj_id
ORDER BY c.cuj_id;

-- `NAME` out of a CUJ slice name `J<NAME>` (or `L<NAME>`): the text
-- between the first two characters and the last one.
CREATE PERFETTO FUNCTION _extract_cuj_name_from_slice(cuj_slice_name STRING)
RETURNS STRING
AS
SELECT substr($cuj_slice_name, 3, length($cuj_slice_name) - 3);

-- The frames (one row per frame and layer) drawn on a CUJ's UI thread,
-- with a layer, a vsync id inside the CUJ's vsync range, and a start or
-- an end inside the CUJ.
CREATE PERFETTO VIEW _all_frames_in_cuj AS
SELECT
  _extract_cuj_name_from_slice(c.cuj_slice_name) AS cuj_name,
  c.upid,
  c.process_name,
  e.layer_id AS cuj_layer_id,
  f.layer_id,
  f.layer_name,
  f.frame_id,
  f.do_frame_id,
  f.expected_frame_timeline_id,
  c.cuj_id,
  f.ts AS frame_ts,
  f.dur AS dur,
  f.ts + f.dur AS ts_end,
  f.ui_thread_utid,
  f.render_thread_utid
FROM android_frames_layers AS f
JOIN _cuj_instant_events AS e
  ON e.ui_thread = f.ui_thread_utid AND f.layer_id IS NOT NULL
JOIN _jank_cujs_slices AS c ON c.cuj_id = e.cuj_id
WHERE f.frame_id BETWEEN e.begin_vsync AND e.end_vsync
  AND (f.ts BETWEEN c.ts AND c.ts_end
    OR f.ts + f.dur BETWEEN c.ts AND c.ts_end);

-- One row per CUJ and frame id (the layers of a frame merged: earliest
-- start, latest end), numbered within the CUJ by start (frame_idx) with
-- the CUJ's frame count.
CREATE PERFETTO TABLE _android_distinct_frames_in_cuj AS
SELECT
  row_number() OVER (PARTITION BY cuj_id ORDER BY min(frame_ts)) AS frame_idx,
  count(*) OVER (PARTITION BY cuj_id) AS frame_cnt,
  cuj_name,
  upid,
  cuj_layer_id,
  layer_id,
  layer_name,
  process_name,
  frame_id,
  do_frame_id,
  expected_frame_timeline_id,
  cuj_id,
  ui_thread_utid,
  render_thread_utid,
  min(frame_ts) AS frame_ts,
  max(ts_end) AS ts_end,
  max(ts_end) - min(frame_ts) AS dur
FROM _all_frames_in_cuj
GROUP BY frame_id, cuj_id;

-- One row per CUJ, frame id and layer.
CREATE PERFETTO VIEW _android_distinct_frames_layers_cuj AS
SELECT
  cuj_name,
  upid,
  cuj_layer_id,
  layer_id,
  layer_name,
  process_name,
  frame_id,
  do_frame_id,
  expected_frame_timeline_id,
  cuj_id,
  ui_thread_utid,
  render_thread_utid,
  frame_ts,
  ts_end,
  dur
FROM _all_frames_in_cuj
GROUP BY frame_id, cuj_id, layer_id;

-- The doFrame slices overlapping each CUJ on its UI thread (the
-- UIThread marker's thread, else the process's main thread), vsync id
-- positive and inside the CUJ's vsync range where the markers give one.
CREATE PERFETTO TABLE _android_jank_cuj_do_frames AS
WITH do_frame AS (
  SELECT
    d.id,
    d.frame_id AS vsync,
    d.ts,
    d.upid,
    s.ts + s.dur AS ts_end,
    s.track_id
  FROM android_frames_choreographer_do_frame AS d
  JOIN slice AS s USING (id)
)
SELECT c.cuj_id, e.ui_thread, th.utid, df.*
FROM thread AS th
JOIN _jank_cujs_slices AS c USING (upid)
LEFT JOIN _cuj_instant_events AS e USING (cuj_id, upid)
JOIN thread_track AS tt USING (utid)
JOIN do_frame AS df
  ON df.track_id = tt.id AND df.ts_end >= c.ts AND df.ts <= c.ts_end
WHERE (e.ui_thread = th.utid OR (e.ui_thread IS NULL AND th.is_main_thread))
  AND df.vsync > 0
  AND (e.begin_vsync IS NULL OR df.vsync >= e.begin_vsync)
  AND (e.end_vsync IS NULL OR df.vsync <= e.end_vsync);

-- The layer each CUJ drew: the name of the layer its layerId marker
-- names, or, without that marker, the single layer of its frames when
-- every frame drew exactly one layer.
CREATE PERFETTO TABLE android_jank_cuj_layer_name(
  cuj_id LONG,
  layer_name STRING
) AS
WITH by_marker AS (
  SELECT cuj_id, max(layer_name) AS layer_name
  FROM _all_frames_in_cuj
  WHERE cuj_layer_id IS NOT NULL AND layer_id = cuj_layer_id
  GROUP BY cuj_id
),
unmarked AS (
  SELECT DISTINCT cuj_id, frame_id, layer_name
  FROM _all_frames_in_cuj
  WHERE cuj_layer_id IS NULL
),
per_frame AS (
  SELECT cuj_id, layer_name,
    count(*) OVER (PARTITION BY cuj_id, frame_id) AS layers_in_frame
  FROM unmarked
),
inferred AS (
  SELECT cuj_id, max(layer_name) AS layer_name
  FROM per_frame
  GROUP BY cuj_id
  HAVING max(layers_in_frame) = 1
)
SELECT cuj_id, layer_name FROM by_marker
UNION ALL
SELECT cuj_id, layer_name FROM inferred;

-- A CUJ's end state from its markers: 'canceled' with a cancel marker,
-- else 'completed' with an end marker, else NULL.
CREATE PERFETTO FUNCTION _cuj_state(cuj_id LONG)
RETURNS STRING
AS
SELECT CASE
  WHEN EXISTS (SELECT 1 FROM _cuj_state_markers AS m
    WHERE m.cuj_id = $cuj_id AND m.marker_type = 'cancel') THEN 'canceled'
  WHEN EXISTS (SELECT 1 FROM _cuj_state_markers AS m
    WHERE m.cuj_id = $cuj_id AND m.marker_type = 'end') THEN 'completed'
  ELSE NULL
END;

-- The jank CUJs that were not canceled: completed ones, and, for builds
-- without state markers, those longer than 4 ms.
CREATE PERFETTO TABLE android_jank_cuj(
  cuj_id LONG,
  upid JOINID(process.id),
  process_name STRING,
  slice_id JOINID(slice.id),
  cuj_slice_name STRING,
  ts TIMESTAMP,
  dur DURATION,
  ts_end TIMESTAMP,
  cuj_name STRING,
  state STRING,
  ui_thread JOINID(thread.id),
  layer_id LONG,
  begin_vsync LONG,
  end_vsync LONG
) AS
WITH cuj AS (
  SELECT c.*, _cuj_state(c.cuj_id) AS state
  FROM _jank_cujs_slices AS c
)
SELECT
  c.cuj_id,
  c.upid,
  c.process_name,
  c.slice_id,
  c.cuj_slice_name,
  c.ts,
  c.dur,
  c.ts_end,
  _extract_cuj_name_from_slice(c.cuj_slice_name) AS cuj_name,
  c.state,
  e.ui_thread,
  e.layer_id,
  e.begin_vsync,
  e.end_vsync
FROM cuj AS c
JOIN _cuj_instant_events AS e USING (cuj_id)
WHERE c.state != 'canceled' OR (c.state IS NULL AND c.dur > 4e6)
ORDER BY c.ts;

-- android.cujs.sysui_cujs, written for zerotrace: SystemUI's CUJs with
-- the bounds its jank tracking uses. A jank CUJ (`J<NAME>`) runs from the
-- start of the expected timeline of its first frame to the end of the
-- doFrame of its last; a latency CUJ (`L<NAME>`) is its slice as is,
-- canceled or timed out when a `cancel` or `timeout` instant lies inside
-- it on a track named after it.
--   android_sysui_jank_cujs     the jank CUJs that drew frames
--   _latency_cuj_tracks         tracks named `L<...>`
--   _latency_cuj_markers        cancel/timeout markers of latency CUJs
--   android_sysui_latency_cujs  the latency CUJs
--   android_jank_latency_cujs   both kinds, renumbered, with cuj_type
--   android_cuj_blocking_calls  the blocking calls of a CUJ's UI and
--                               render threads, cut to the CUJ

INCLUDE PERFETTO MODULE android.frames.timeline;
INCLUDE PERFETTO MODULE android.cujs.base;
INCLUDE PERFETTO MODULE android.render_thread;
INCLUDE PERFETTO MODULE android.critical_blocking_calls;

-- The jank CUJs with at least one frame, bounded by their first and last
-- frames; canceled ones left out, and, without state markers, those of
-- 4 ms or less.
CREATE PERFETTO TABLE android_sysui_jank_cujs(
  cuj_id LONG,
  upid JOINID(process.id),
  process_name STRING,
  cuj_slice_name STRING,
  cuj_name STRING,
  slice_id JOINID(slice.id),
  ts TIMESTAMP,
  ts_end TIMESTAMP,
  dur DURATION,
  state STRING,
  ui_thread JOINID(thread.id),
  layer_id LONG,
  begin_vsync LONG,
  end_vsync LONG
) AS
WITH edge_frames AS (
  SELECT
    f.cuj_id,
    f.do_frame_id,
    (SELECT e.ts FROM expected_frame_timeline_slice AS e
      WHERE e.id = f.expected_frame_timeline_id) AS first_ts,
    (SELECT s.ts + s.dur FROM slice AS s WHERE s.id = f.do_frame_id) AS last_end
  FROM _android_distinct_frames_in_cuj AS f
  WHERE f.frame_idx = 1 OR f.frame_idx = f.frame_cnt
),
cuj AS (
  SELECT c.*, _cuj_state(c.cuj_id) AS state
  FROM _jank_cujs_slices AS c
  WHERE c.cuj_slice_name GLOB 'J<*>'
)
SELECT
  c.cuj_id,
  c.upid,
  c.process_name,
  c.cuj_slice_name,
  _extract_cuj_name_from_slice(c.cuj_slice_name) AS cuj_name,
  c.slice_id,
  min(b.first_ts) AS ts,
  max(b.last_end) AS ts_end,
  max(b.last_end) - min(b.first_ts) AS dur,
  c.state,
  e.ui_thread,
  e.layer_id,
  e.begin_vsync,
  e.end_vsync
FROM cuj AS c
JOIN _cuj_instant_events AS e USING (cuj_id)
JOIN edge_frames AS b USING (cuj_id)
JOIN android_frames_choreographer_do_frame AS d ON d.id = b.do_frame_id
WHERE c.state != 'canceled' OR (c.state IS NULL AND c.dur > 4e6)
GROUP BY c.cuj_id
ORDER BY ts;

-- The tracks named like a latency CUJ, `L<...>`.
CREATE PERFETTO TABLE _latency_cuj_tracks(
  id JOINID(track.id),
  name STRING
) AS
SELECT id, name FROM track WHERE name GLOB 'L<*>';

-- For each `L<...>` slice, the `cancel` and `timeout` instants inside it
-- (ends included) on a track of the same name.
CREATE PERFETTO TABLE _latency_cuj_markers(
  cuj_slice_id JOINID(slice.id),
  marker_type STRING
) AS
SELECT
  c.id AS cuj_slice_id,
  iif(m.name = 'cancel', 'cancel', 'timeout') AS marker_type
FROM slice AS c
JOIN _latency_cuj_tracks AS t ON t.name = c.name
JOIN slice AS m ON m.track_id = t.id
WHERE c.name GLOB 'L<*>'
  AND m.dur = 0
  AND m.name IN ('cancel', 'timeout')
  AND m.ts BETWEEN c.ts AND c.ts + c.dur;

-- The latency CUJs: process-track `L<...>` slices of positive duration,
-- numbered by start then slice id; 'canceled' with a cancel marker, else
-- 'timeout' with a timeout marker, else 'completed'.
CREATE PERFETTO TABLE android_sysui_latency_cujs(
  cuj_id LONG,
  upid JOINID(process.id),
  process_name STRING,
  cuj_slice_name STRING,
  cuj_name STRING,
  slice_id JOINID(slice.id),
  ts TIMESTAMP,
  ts_end TIMESTAMP,
  dur DURATION,
  state STRING
) AS
SELECT
  row_number() OVER (ORDER BY s.ts, s.id) AS cuj_id,
  p.upid,
  p.name AS process_name,
  s.name AS cuj_slice_name,
  _extract_cuj_name_from_slice(s.name) AS cuj_name,
  s.id AS slice_id,
  s.ts,
  s.ts + s.dur AS ts_end,
  s.dur,
  CASE
    WHEN EXISTS (SELECT 1 FROM _latency_cuj_markers AS m
      WHERE m.cuj_slice_id = s.id AND m.marker_type = 'cancel') THEN 'canceled'
    WHEN EXISTS (SELECT 1 FROM _latency_cuj_markers AS m
      WHERE m.cuj_slice_id = s.id AND m.marker_type = 'timeout') THEN 'timeout'
    ELSE 'completed'
  END AS state
FROM slice AS s
JOIN process_track AS pt ON pt.id = s.track_id
JOIN process AS p ON p.upid = pt.upid
WHERE s.name GLOB 'L<*>' AND s.dur > 0
ORDER BY cuj_id;

-- Jank and latency CUJs together (cuj_type 'jank' or 'latency'),
-- renumbered by type then their own number; a latency CUJ's ui_thread is
-- its upid (the main thread's tid), and it has no layer or vsyncs.
CREATE PERFETTO TABLE android_jank_latency_cujs(
  cuj_id LONG,
  id LONG,
  upid JOINID(process.id),
  process_name STRING,
  cuj_slice_name STRING,
  cuj_name STRING,
  slice_id JOINID(slice.id),
  ts TIMESTAMP,
  ts_end TIMESTAMP,
  dur DURATION,
  state STRING,
  ui_thread JOINID(thread.id),
  layer_id LONG,
  begin_vsync LONG,
  end_vsync LONG,
  cuj_type STRING
) AS
WITH both_kinds AS (
  SELECT
    cuj_id AS own_id, upid, process_name, cuj_slice_name, cuj_name,
    slice_id, ts, ts_end, dur, state, ui_thread, layer_id, begin_vsync,
    end_vsync, 'jank' AS cuj_type
  FROM android_sysui_jank_cujs
  UNION ALL
  SELECT
    cuj_id, upid, process_name, cuj_slice_name, cuj_name, slice_id, ts,
    ts_end, dur, state, upid, NULL, NULL, NULL, 'latency'
  FROM android_sysui_latency_cujs
)
SELECT
  row_number() OVER (ORDER BY cuj_type, own_id) AS cuj_id,
  row_number() OVER (ORDER BY cuj_type, own_id) AS id,
  upid,
  process_name,
  cuj_slice_name,
  cuj_name,
  slice_id,
  ts,
  ts_end,
  dur,
  state,
  ui_thread,
  layer_id,
  begin_vsync,
  end_vsync,
  cuj_type
FROM both_kinds
ORDER BY cuj_id;

-- The blocking calls (android.critical_blocking_calls) made during a CUJ
-- on its process's UI thread or render thread, each cut to the CUJ's
-- bounds.
CREATE PERFETTO TABLE android_cuj_blocking_calls(
  -- The call's slice id.
  slice_id JOINID(slice.id),
  -- The call's standardized name.
  name STRING,
  -- When the call began, or the CUJ if later.
  ts TIMESTAMP,
  -- The call's time within the CUJ.
  dur DURATION,
  -- When the call ended, or the CUJ if earlier.
  ts_end TIMESTAMP,
  -- The CUJ's id.
  cuj_id LONG,
  -- The CUJ's name.
  cuj_name STRING,
  -- The process's name.
  process_name STRING,
  -- The process.
  upid JOINID(process.id),
  -- The thread.
  utid JOINID(thread.id)
) AS
SELECT
  c.id AS slice_id,
  c.name,
  max(c.ts, cuj.ts) AS ts,
  min(c.ts + c.dur, cuj.ts_end) - max(c.ts, cuj.ts) AS dur,
  min(c.ts + c.dur, cuj.ts_end) AS ts_end,
  cuj.cuj_id,
  cuj.cuj_name,
  c.process_name,
  c.upid,
  c.utid
FROM _android_critical_blocking_calls AS c
JOIN android_jank_latency_cujs AS cuj
  ON c.upid = cuj.upid AND c.ts + c.dur > cuj.ts AND c.ts < cuj.ts_end
LEFT JOIN _render_thread_per_process AS rt ON rt.upid = cuj.upid
WHERE c.utid = cuj.ui_thread OR c.utid = rt.render_thread_utid;

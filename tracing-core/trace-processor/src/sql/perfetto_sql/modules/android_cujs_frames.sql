-- android.cujs.frames, written for zerotrace: the frames of each jank CUJ
-- in the app and in SurfaceFlinger, whether each missed its deadline and
-- by whose fault, and a summary per CUJ slice.
--   _android_jank_cuj_frame_timeline  per CUJ and app vsync: the frame
--                                     timeline's verdicts (on the CUJ's
--                                     layer when it has one)
--   _android_jank_cuj_frame           per CUJ frame that drew: its span
--                                     and verdicts
--   _android_jank_cuj_sf_frame        per CUJ SurfaceFlinger frame
--   android_jank_cuj_slice_summary    per CUJ slice: state, frame counts,
--                                     layer and span

INCLUDE PERFETTO MODULE android.frames.jank_type;
INCLUDE PERFETTO MODULE android.frames.timeline;
INCLUDE PERFETTO MODULE android.cujs.base;
INCLUDE PERFETTO MODULE android.cujs.boundaries;
INCLUDE PERFETTO MODULE android.cujs.relevant_slices;
INCLUDE PERFETTO MODULE android.cujs.threads;
INCLUDE PERFETTO MODULE android.surfaceflinger;

-- Per CUJ and vsync in its range, over the app's actual timeline slices
-- of positive duration (all layers, or only the CUJ's layer when known):
-- whether the app or SurfaceFlinger missed the frame, the worst jank
-- score, whether a callback was missed, whether it finished on time, its
-- end, its actual and expected (default 16.6 ms) durations, and its
-- layers.
CREATE PERFETTO TABLE _android_jank_cuj_frame_timeline(
  cuj_id LONG,
  vsync LONG,
  app_missed LONG,
  sf_missed LONG,
  jank_score LONG,
  sf_callback_missed LONG,
  hwui_callback_missed LONG,
  on_time_finish LONG,
  ts_end_actual TIMESTAMP,
  dur DURATION,
  dur_expected DURATION,
  number_of_layers_for_frame LONG,
  frame_layer_name STRING
) AS
WITH actual AS (
  SELECT *, CAST(name AS INTEGER) AS vsync
  FROM actual_frame_timeline_slice
  WHERE dur > 0
)
SELECT
  b.cuj_id,
  a.vsync,
  max(android_is_app_jank_type(a.jank_type)) AS app_missed,
  max(android_is_sf_jank_type(a.jank_type)) AS sf_missed,
  ifnull(max(abs(a.jank_score)), 0) AS jank_score,
  ifnull(max(m.sf_callback_missed), 0) AS sf_callback_missed,
  ifnull(max(m.hwui_callback_missed), 0) AS hwui_callback_missed,
  min(a.on_time_finish) AS on_time_finish,
  max(a.ts + a.dur) AS ts_end_actual,
  max(a.dur) AS dur,
  coalesce(max(e.dur), 16600000) AS dur_expected,
  count(DISTINCT a.layer_name) AS number_of_layers_for_frame,
  max(a.layer_name) AS frame_layer_name
FROM _android_jank_cuj_vsync_boundary AS b
JOIN actual AS a ON a.vsync BETWEEN b.vsync_min AND b.vsync_max
LEFT JOIN expected_frame_timeline_slice AS e
  ON e.upid = a.upid AND e.name = a.name
LEFT JOIN _vsync_missed_callback AS m ON m.vsync = a.vsync
LEFT JOIN android_jank_cuj_layer_name AS l ON l.cuj_id = b.cuj_id
WHERE l.layer_name IS NULL OR a.layer_name = l.layer_name
GROUP BY b.cuj_id, a.vsync;

-- Per CUJ frame whose DrawFrame waited on a GPU fence, numbered by
-- vsync: its UI-thread span, fence count, the timeline's verdicts, and
-- its duration to the actual timeline's end (from the frame start, and
-- unadjusted from the doFrame's start).
CREATE PERFETTO TABLE _android_jank_cuj_frame(
  cuj_id LONG,
  frame_number LONG,
  vsync LONG,
  ts TIMESTAMP,
  ts_expected TIMESTAMP,
  ts_do_frame_start TIMESTAMP,
  gpu_fence_count LONG,
  drew_anything LONG,
  app_missed LONG,
  sf_missed LONG,
  jank_score LONG,
  sf_callback_missed LONG,
  hwui_callback_missed LONG,
  on_time_finish LONG,
  dur DURATION,
  dur_unadjusted DURATION,
  dur_expected DURATION,
  ts_end TIMESTAMP
) AS
WITH drawn AS (
  SELECT
    d.cuj_id,
    row_number() OVER (PARTITION BY d.cuj_id ORDER BY d.vsync) AS frame_number,
    d.vsync,
    b.ts,
    b.ts_expected,
    b.ts_do_frame_start,
    count(f.fence_idx) AS gpu_fence_count,
    count(f.fence_idx) > 0 AS drew_anything
  FROM _android_jank_cuj_do_frames AS d
  JOIN _android_jank_cuj_main_thread_frame_boundary AS b USING (cuj_id, vsync)
  JOIN _android_jank_cuj_draw_frame_slice AS df USING (cuj_id, vsync)
  LEFT JOIN _android_jank_cuj_gpu_completion_fence AS f USING (cuj_id, vsync)
  WHERE df.id = f.draw_frame_slice_id
  GROUP BY d.cuj_id, d.vsync, b.ts, b.ts_do_frame_start
)
SELECT
  d.*,
  t.app_missed,
  t.sf_missed,
  t.jank_score,
  t.sf_callback_missed,
  t.hwui_callback_missed,
  t.on_time_finish,
  t.ts_end_actual - d.ts AS dur,
  t.ts_end_actual - d.ts_do_frame_start AS dur_unadjusted,
  t.dur_expected,
  t.ts_end_actual AS ts_end
FROM drawn AS d
JOIN _android_jank_cuj_frame_timeline AS t USING (cuj_id, vsync);

-- Per CUJ SurfaceFlinger frame that showed one of the CUJ's app frames
-- (on its layer when known), numbered by vsync: its span, whether
-- SurfaceFlinger itself janked, and its timeline verdicts.
CREATE PERFETTO TABLE _android_jank_cuj_sf_frame(
  cuj_id LONG,
  vsync LONG,
  ts TIMESTAMP,
  ts_main_thread_start TIMESTAMP,
  ts_end TIMESTAMP,
  dur DURATION,
  sf_missed LONG,
  app_missed LONG,
  jank_score LONG,
  jank_tag STRING,
  jank_type STRING,
  prediction_type STRING,
  present_type STRING,
  gpu_composition LONG,
  dur_expected DURATION,
  frame_number LONG
) AS
WITH shown AS (
  SELECT DISTINCT
    b.cuj_id,
    CAST(a.name AS INTEGER) AS vsync,
    a.display_frame_token
  FROM _android_jank_cuj_vsync_boundary AS b
  JOIN actual_frame_timeline_slice AS a
    ON a.upid = b.upid
    AND CAST(a.name AS INTEGER) BETWEEN b.vsync_min AND b.vsync_max
  LEFT JOIN android_jank_cuj_layer_name AS l ON l.cuj_id = b.cuj_id
  WHERE l.layer_name IS NULL OR a.layer_name = l.layer_name
),
frames AS (
  SELECT DISTINCT
    b.cuj_id,
    b.vsync,
    b.ts,
    b.ts_main_thread_start,
    b.ts_end,
    b.dur,
    a.jank_tag = 'Self Jank' AS sf_missed,
    NULL AS app_missed,
    a.jank_score,
    a.jank_tag,
    a.jank_type,
    a.prediction_type,
    a.present_type,
    a.gpu_composition,
    coalesce(e.dur, 16600000) AS dur_expected
  FROM _android_jank_cuj_sf_main_thread_frame_boundary AS b
  JOIN _android_jank_cuj_sf_process AS p
  JOIN actual_frame_timeline_slice AS a
    ON a.upid = p.upid AND CAST(a.name AS INTEGER) = b.vsync
  JOIN shown AS s
    ON s.display_frame_token = CAST(a.name AS INTEGER) AND s.cuj_id = b.cuj_id
  LEFT JOIN expected_frame_timeline_slice AS e
    ON e.upid = a.upid AND e.name = a.name
)
SELECT *, row_number() OVER (PARTITION BY cuj_id ORDER BY vsync) AS frame_number
FROM frames;

-- One row per CUJ slice (canceled ones included): its state, how many
-- frames it had and how many the app and SurfaceFlinger missed (for the
-- CUJs that were not canceled), its layer, and its span (the UI-thread
-- span when known, else the slice's).
CREATE PERFETTO TABLE android_jank_cuj_slice_summary(
  cuj_id LONG,
  name STRING,
  process_name STRING,
  state STRING,
  total_frames LONG,
  missed_app_frames LONG,
  missed_sf_frames LONG,
  layer_name STRING,
  ts TIMESTAMP,
  dur DURATION,
  track_id JOINID(track.id),
  slice_id JOINID(slice.id)
) AS
WITH counts AS (
  SELECT
    cuj_id,
    count(*) AS total_frames,
    sum(app_missed) AS missed_app_frames,
    sum(sf_missed) AS missed_sf_frames
  FROM _android_jank_cuj_frame_timeline
  GROUP BY cuj_id
)
SELECT
  c.cuj_id,
  c.cuj_slice_name AS name,
  c.process_name,
  _cuj_state(c.cuj_id) AS state,
  n.total_frames,
  n.missed_app_frames,
  n.missed_sf_frames,
  l.layer_name,
  coalesce(b.ts, c.ts) AS ts,
  coalesce(b.dur, c.dur) AS dur,
  s.track_id,
  c.slice_id
FROM _jank_cujs_slices AS c
JOIN slice AS s ON s.id = c.slice_id
LEFT JOIN android_jank_cuj AS j USING (cuj_id)
LEFT JOIN counts AS n ON n.cuj_id = j.cuj_id
LEFT JOIN android_jank_cuj_layer_name AS l ON l.cuj_id = c.cuj_id
LEFT JOIN _android_jank_cuj_main_thread_cuj_boundary AS b
  ON b.cuj_id = j.cuj_id;

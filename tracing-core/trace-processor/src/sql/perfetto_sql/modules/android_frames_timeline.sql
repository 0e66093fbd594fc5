-- android.frames.timeline, written for zerotrace: an app's frames as the
-- UI thread's `Choreographer#doFrame <vsync>` and the render thread's
-- `DrawFrame <vsync>` slices tell them, matched by vsync id (the frame id)
-- and process, joined to SurfaceFlinger's frame timeline when the trace
-- has one (Android 10 and later; older traces take the frames of
-- android.frames.timeline_maxsdk28).
--   _get_frame_table_with_id(glob)        slices whose name matches, with
--                                         the frame id their second word
--   android_frames_choreographer_do_frame the doFrame slices
--   android_frames_draw_frame             the DrawFrame slices
--   android_frames_layers                 one row per frame and layer
--   android_frames                        one row per frame and process
--   android_first_frame_after(ts)         the first frame starting after ts

INCLUDE PERFETTO MODULE slices.with_context;
INCLUDE PERFETTO MODULE android.frames.timeline_maxsdk28;

-- Thread slices whose name matches `glob_str`, with the number after the
-- first space as frame id (0 and -1, no frame, left out).
CREATE PERFETTO FUNCTION _get_frame_table_with_id(
  glob_str STRING
)
RETURNS TABLE(
  id ID(slice.id),
  frame_id LONG,
  utid JOINID(thread.id),
  upid JOINID(process.id),
  ts TIMESTAMP
)
AS
SELECT id, frame_id, utid, upid, ts
FROM (
  SELECT id, cast_int!(str_split(name, ' ', 1)) AS frame_id, utid, upid, ts
  FROM thread_slice
  WHERE name GLOB $glob_str
)
WHERE frame_id NOT IN (0, -1)
ORDER BY id;

-- The UI thread's doFrame slices, one per frame id.
CREATE PERFETTO TABLE android_frames_choreographer_do_frame(
  -- The doFrame slice.
  id ID(slice.id),
  -- The frame id (vsync id).
  frame_id LONG,
  -- The UI thread.
  ui_thread_utid JOINID(thread.id),
  -- The app's process.
  upid JOINID(process.id),
  -- Start of the slice.
  ts TIMESTAMP
)
AS
SELECT id, frame_id, utid AS ui_thread_utid, upid, ts
FROM _get_frame_table_with_id('Choreographer#doFrame*');

-- The render thread's DrawFrame slices.
CREATE PERFETTO TABLE android_frames_draw_frame(
  -- The DrawFrame slice.
  id ID(slice.id),
  -- The frame id (vsync id).
  frame_id LONG,
  -- The render thread.
  render_thread_utid JOINID(thread.id),
  -- The app's process.
  upid JOINID(process.id)
)
AS
SELECT id, frame_id, utid AS render_thread_utid, upid
FROM _get_frame_table_with_id('DrawFrame*');

-- Each actual timeline slice with its frame id and its layer's id (the
-- number after '#' in the layer name).
CREATE PERFETTO TABLE _distinct_layer_actual_timeline_slice_per_process AS
SELECT
  cast_int!(name) AS frame_id,
  CAST(str_split(layer_name, '#', 1) AS INTEGER) AS layer_id,
  layer_name,
  id AS slice_id,
  ts,
  dur,
  upid
FROM actual_frame_timeline_slice;

-- Each expected timeline slice with its frame id.
CREATE PERFETTO TABLE _distinct_from_expected_timeline_slice_per_process AS
SELECT cast_int!(name) AS frame_id, upid, id
FROM expected_frame_timeline_slice;

-- Vsyncs whose SurfaceFlinger or HWUI callback the frame timeline missed
-- (`FT#Missed...Callback#<vsync>` slices).
CREATE PERFETTO TABLE _vsync_missed_callback AS
SELECT
  CAST(str_split(name, 'Callback#', 1) AS INTEGER) AS vsync,
  max(name GLOB '*SF*') AS sf_callback_missed,
  max(name GLOB '*HWUI*') AS hwui_callback_missed
FROM slice
WHERE name GLOB '*FT#Missed*Callback*'
GROUP BY vsync;

-- One row per frame and layer: the frame's doFrame and DrawFrame slices,
-- its timeline slices, and its span (the actual timeline's, or from the
-- doFrame's start to the DrawFrame's end).
CREATE PERFETTO TABLE android_frames_layers(
  -- The frame id (vsync id).
  frame_id LONG,
  -- Start.
  ts TIMESTAMP,
  -- Duration.
  dur DURATION,
  -- End.
  ts_end TIMESTAMP,
  -- The doFrame slice.
  do_frame_id JOINID(slice.id),
  -- The DrawFrame slice.
  draw_frame_id JOINID(slice.id),
  -- The actual timeline slice.
  actual_frame_timeline_id JOINID(slice.id),
  -- The expected timeline slice.
  expected_frame_timeline_id JOINID(slice.id),
  -- The render thread.
  render_thread_utid JOINID(thread.id),
  -- The UI thread.
  ui_thread_utid JOINID(thread.id),
  -- The layer's id.
  layer_id LONG,
  -- The layer's name.
  layer_name STRING,
  -- The app's process.
  upid JOINID(process.id),
  -- The process's name.
  process_name STRING
)
AS
WITH
  span AS MATERIALIZED (
    SELECT
      d.frame_id,
      ds.ts AS ts,
      rs.ts + rs.dur - ds.ts AS dur
    FROM android_frames_choreographer_do_frame AS d
    JOIN android_frames_draw_frame AS r ON r.frame_id = d.frame_id AND r.upid = d.upid
    JOIN slice AS ds ON ds.id = d.id
    JOIN slice AS rs ON rs.id = r.id
  ),
  with_timeline AS (
    SELECT
      d.frame_id,
      coalesce(act.ts, span.ts) AS ts,
      coalesce(act.dur, span.dur) AS dur,
      d.id AS do_frame_id,
      r.id AS draw_frame_id,
      r.render_thread_utid,
      d.ui_thread_utid,
      ex.upid AS upid,
      p.name AS process_name,
      'after_28' AS sdk,
      act.slice_id AS actual_frame_timeline_id,
      ex.id AS expected_frame_timeline_id,
      act.layer_id,
      act.layer_name
    FROM android_frames_choreographer_do_frame AS d
    JOIN android_frames_draw_frame AS r ON r.frame_id = d.frame_id AND r.upid = d.upid
    JOIN span ON span.frame_id = d.frame_id
    JOIN process AS p ON p.upid = d.upid
    LEFT JOIN _distinct_layer_actual_timeline_slice_per_process AS act
      ON act.frame_id = d.frame_id AND act.upid = d.upid
    LEFT JOIN _distinct_from_expected_timeline_slice_per_process AS ex
      ON ex.frame_id = d.frame_id AND ex.upid = d.upid
    ORDER BY d.frame_id
  ),
  every_frame AS (
    SELECT * FROM with_timeline
    UNION
    SELECT
      frame_id, ts, dur, do_frame_id, draw_frame_id, render_thread_utid,
      ui_thread_utid, upid, process_name, sdk,
      NULL AS actual_frame_timeline_id,
      NULL AS expected_frame_timeline_id,
      NULL AS layer_id,
      NULL AS layer_name
    FROM _frames_maxsdk_28
  )
SELECT
  frame_id,
  ts,
  dur,
  ts + dur AS ts_end,
  do_frame_id,
  draw_frame_id,
  actual_frame_timeline_id,
  expected_frame_timeline_id,
  render_thread_utid,
  ui_thread_utid,
  layer_id,
  layer_name,
  upid,
  process_name
FROM every_frame
WHERE sdk = iif(
  (SELECT count(1) FROM actual_frame_timeline_slice) > 0, 'after_28', 'maxsdk28');

-- One row per frame and process: the layers' rows of android_frames_layers
-- folded, with how many actual timeline and DrawFrame slices it had.
CREATE PERFETTO TABLE android_frames(
  -- The frame id (vsync id).
  frame_id LONG,
  -- Start.
  ts TIMESTAMP,
  -- Duration.
  dur DURATION,
  -- The doFrame slice.
  do_frame_id JOINID(slice.id),
  -- The DrawFrame slice.
  draw_frame_id JOINID(slice.id),
  -- The actual timeline slice.
  actual_frame_timeline_id JOINID(slice.id),
  -- The expected timeline slice.
  expected_frame_timeline_id JOINID(slice.id),
  -- The render thread.
  render_thread_utid JOINID(thread.id),
  -- The UI thread.
  ui_thread_utid JOINID(thread.id),
  -- Actual timeline slices of the frame.
  actual_frame_timeline_count LONG,
  -- Expected timeline slices of the frame (one).
  expected_frame_timeline_count LONG,
  -- DrawFrame slices of the frame.
  draw_frame_count LONG,
  -- The app's process.
  upid JOINID(process.id),
  -- The process's name.
  process_name STRING
)
AS
SELECT
  frame_id,
  min(l.ts) AS ts,
  max(l.dur) AS dur,
  min(do_frame_id) AS do_frame_id,
  min(draw_frame_id) AS draw_frame_id,
  min(actual_frame_timeline_id) AS actual_frame_timeline_id,
  expected_frame_timeline_id,
  render_thread_utid,
  ui_thread_utid,
  count(DISTINCT actual_frame_timeline_id) AS actual_frame_timeline_count,
  1 AS expected_frame_timeline_count,
  count(DISTINCT draw_frame_id) AS draw_frame_count,
  upid,
  process_name
FROM android_frames_layers AS l
GROUP BY frame_id, upid;

-- The first frame that starts after `ts`.
CREATE PERFETTO FUNCTION android_first_frame_after(
  -- The time after which to look.
  ts TIMESTAMP
)
RETURNS TABLE(
  frame_id LONG,
  ts TIMESTAMP,
  dur DURATION,
  do_frame_id JOINID(slice.id),
  draw_frame_id JOINID(slice.id),
  actual_frame_timeline_id JOINID(slice.id),
  expected_frame_timeline_id JOINID(slice.id),
  render_thread_utid JOINID(thread.id),
  ui_thread_utid JOINID(thread.id)
)
AS
SELECT
  frame_id, ts, dur, do_frame_id, draw_frame_id, actual_frame_timeline_id,
  expected_frame_timeline_id, render_thread_utid, ui_thread_utid
FROM android_frames
WHERE ts > $ts
ORDER BY ts
LIMIT 1;

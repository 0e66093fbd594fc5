-- android.surfaceflinger, written for zerotrace: SurfaceFlinger's process
-- and threads, how app frames map to SurfaceFlinger frames (the frame
-- timeline's flows), SurfaceFlinger's main-thread work for the frames of
-- each jank CUJ, and the per-frame workload summaries it emits.
--   _android_sf_process          the `/system/bin/surfaceflinger` process
--   _android_sf_main_thread      its main thread and track
--   _android_sf_thread(name)     its threads called `name`
--   android_app_to_sf_frame_timeline_match  app vsync -> SF vsync
--   _android_jank_cuj_app_sf_frame_timeline_match  the same per CUJ frame
--   _find_android_jank_cuj_sf_main_thread_slice(glob)  SF main-thread
--                                slices `<glob>` of a CUJ's SF vsyncs
--   _android_jank_cuj_sf_commit_slice / _composite_slice /
--   _on_message_invalidate_slice  those for `commit`, `composite` and
--                                `onMessageInvalidate`
--   _android_jank_cuj_sf_main_thread_frame_boundary  each SF frame's span
--   android_surfaceflinger_workloads  the `WorkloadSummary` slices' args

INCLUDE PERFETTO MODULE android.cujs.base;

-- SurfaceFlinger's process (the first one, if several).
CREATE PERFETTO TABLE _android_sf_process AS
SELECT * FROM process WHERE name = '/system/bin/surfaceflinger' LIMIT 1;

-- SurfaceFlinger's main thread with its thread track(s).
CREATE PERFETTO TABLE _android_sf_main_thread AS
SELECT t.upid, t.utid, t.name, tt.id AS track_id
FROM thread AS t
JOIN _android_sf_process AS p USING (upid)
JOIN thread_track AS tt USING (utid)
WHERE t.is_main_thread;

-- SurfaceFlinger's threads called `thread_name`, with their tracks.
CREATE PERFETTO FUNCTION _android_sf_thread(thread_name STRING)
RETURNS TABLE(
  upid JOINID(process.id),
  utid JOINID(thread.id),
  name STRING,
  track_id JOINID(track.id)
)
AS
SELECT t.upid, t.utid, t.name, tt.id AS track_id
FROM thread AS t
JOIN _android_sf_process AS p USING (upid)
JOIN thread_track AS tt USING (utid)
WHERE t.name = $thread_name;

-- Which SurfaceFlinger frame (vsync) shows each app frame: the actual
-- timeline slices joined by the flows from the app's to SurfaceFlinger's.
CREATE PERFETTO TABLE android_app_to_sf_frame_timeline_match(
  app_upid JOINID(process.upid),
  app_vsync LONG,
  sf_upid JOINID(process.upid),
  sf_vsync LONG
) AS
SELECT DISTINCT
  app.upid AS app_upid,
  CAST(app.name AS INTEGER) AS app_vsync,
  sf.upid AS sf_upid,
  CAST(sf.name AS INTEGER) AS sf_vsync
FROM actual_frame_timeline_slice AS app
JOIN flow AS f ON f.slice_out = app.id
JOIN actual_frame_timeline_slice AS sf ON sf.id = f.slice_in
JOIN _android_sf_process AS p ON p.upid = sf.upid
ORDER BY app_upid, app_vsync, sf_upid, sf_vsync;

-- The SurfaceFlinger frames of each CUJ's doFrames.
CREATE PERFETTO TABLE _android_jank_cuj_app_sf_frame_timeline_match AS
SELECT
  d.cuj_id,
  d.upid AS app_upid,
  m.app_vsync,
  m.sf_upid,
  m.sf_vsync
FROM _android_jank_cuj_do_frames AS d
JOIN android_app_to_sf_frame_timeline_match AS m
  ON m.app_vsync = d.vsync AND m.app_upid = d.upid;

-- SurfaceFlinger main-thread slices matching `slice_name_glob` (positive
-- duration) whose second word is the vsync of one of a CUJ's
-- SurfaceFlinger frames, by CUJ and vsync.
CREATE PERFETTO FUNCTION _find_android_jank_cuj_sf_main_thread_slice(
  slice_name_glob STRING
)
RETURNS TABLE(
  cuj_id LONG,
  utid JOINID(thread.id),
  vsync LONG,
  id ID(slice.id),
  name STRING,
  ts TIMESTAMP,
  dur LONG,
  ts_end TIMESTAMP
)
AS
WITH sf_vsync AS (
  SELECT DISTINCT cuj_id, sf_vsync AS vsync
  FROM _android_jank_cuj_app_sf_frame_timeline_match
)
SELECT
  v.cuj_id,
  mt.utid,
  v.vsync,
  s.id,
  s.name,
  s.ts,
  s.dur,
  s.ts + s.dur AS ts_end
FROM slice AS s
JOIN _android_sf_main_thread AS mt USING (track_id)
JOIN sf_vsync AS v ON CAST(str_split(s.name, ' ', 1) AS INTEGER) = v.vsync
WHERE s.name GLOB $slice_name_glob AND s.dur > 0
ORDER BY v.cuj_id, v.vsync;

-- SurfaceFlinger's `commit <vsync>` slices for the CUJs' frames.
CREATE PERFETTO TABLE _android_jank_cuj_sf_commit_slice AS
SELECT * FROM _find_android_jank_cuj_sf_main_thread_slice('commit *');

-- SurfaceFlinger's `composite <vsync>` slices for the CUJs' frames.
CREATE PERFETTO TABLE _android_jank_cuj_sf_composite_slice AS
SELECT * FROM _find_android_jank_cuj_sf_main_thread_slice('composite *');

-- SurfaceFlinger's `onMessageInvalidate <vsync>` slices (older releases)
-- for the CUJs' frames.
CREATE PERFETTO TABLE _android_jank_cuj_sf_on_message_invalidate_slice AS
SELECT *
FROM _find_android_jank_cuj_sf_main_thread_slice('onMessageInvalidate *');

-- Each SurfaceFlinger frame of a CUJ: from its expected start to the end
-- of its main-thread work (commit through composite, or
-- onMessageInvalidate), with when that work began.
CREATE PERFETTO TABLE _android_jank_cuj_sf_main_thread_frame_boundary AS
WITH work AS (
  SELECT
    c.utid, c.cuj_id, c.vsync, c.ts, x.ts_end - c.ts AS dur, x.ts_end
  FROM _android_jank_cuj_sf_commit_slice AS c
  JOIN _android_jank_cuj_sf_composite_slice AS x USING (cuj_id, vsync)
  UNION ALL
  SELECT utid, cuj_id, vsync, ts, dur, ts_end
  FROM _android_jank_cuj_sf_on_message_invalidate_slice
)
SELECT
  w.cuj_id,
  w.utid,
  w.vsync,
  e.ts,
  w.ts AS ts_main_thread_start,
  w.ts_end,
  w.ts_end - e.ts AS dur
FROM expected_frame_timeline_slice AS e
JOIN _android_sf_process AS p USING (upid)
JOIN work AS w ON w.vsync = CAST(e.name AS INTEGER);

-- One row per `WorkloadSummary` slice (category `rendering`): its
-- source, display, vsync, CPU/HWC/RenderEngine/Skia timings and how many
-- layers the GPU and the display processor composed.
CREATE PERFETTO TABLE android_surfaceflinger_workloads(
  ts TIMESTAMP,
  source STRING,
  output_name STRING,
  sf_vsync LONG,
  sf_cpu_frame_signal_nanos LONG,
  sf_cpu_commit_nanos LONG,
  sf_cpu_composite_nanos LONG,
  hwc_present_nanos LONG,
  hwc_validate_nanos LONG,
  hwc_present_or_validate_nanos LONG,
  re_draw_layers_nanos LONG,
  re_gpu_completion_nanos LONG,
  skia_flush_nanos LONG,
  skia_submit_nanos LONG,
  gpu_composited_layers LONG,
  dpu_composited_layers LONG
) AS
SELECT
  ts,
  extract_arg(arg_set_id, 'surfaceflinger_workload.source') AS source,
  extract_arg(arg_set_id, 'surfaceflinger_workload.output_name') AS output_name,
  extract_arg(arg_set_id, 'surfaceflinger_workload.vsync_id') AS sf_vsync,
  extract_arg(arg_set_id,
    'surfaceflinger_workload.summary.timings.sf_cpu.frame_signal_nanos')
    AS sf_cpu_frame_signal_nanos,
  extract_arg(arg_set_id,
    'surfaceflinger_workload.summary.timings.sf_cpu.commit_nanos')
    AS sf_cpu_commit_nanos,
  extract_arg(arg_set_id,
    'surfaceflinger_workload.summary.timings.sf_cpu.composite_nanos')
    AS sf_cpu_composite_nanos,
  extract_arg(arg_set_id,
    'surfaceflinger_workload.summary.timings.hwc.present_nanos')
    AS hwc_present_nanos,
  extract_arg(arg_set_id,
    'surfaceflinger_workload.summary.timings.hwc.validate_nanos')
    AS hwc_validate_nanos,
  extract_arg(arg_set_id,
    'surfaceflinger_workload.summary.timings.hwc.present_or_validate_nanos')
    AS hwc_present_or_validate_nanos,
  extract_arg(arg_set_id,
    'surfaceflinger_workload.summary.timings.re.draw_layers_nanos')
    AS re_draw_layers_nanos,
  extract_arg(arg_set_id,
    'surfaceflinger_workload.summary.timings.re.gpu_completion_nanos')
    AS re_gpu_completion_nanos,
  extract_arg(arg_set_id,
    'surfaceflinger_workload.summary.timings.skia.flush_nanos')
    AS skia_flush_nanos,
  extract_arg(arg_set_id,
    'surfaceflinger_workload.summary.timings.skia.submit_nanos')
    AS skia_submit_nanos,
  extract_arg(arg_set_id,
    'surfaceflinger_workload.summary.stats.gpu_composited_layers')
    AS gpu_composited_layers,
  extract_arg(arg_set_id,
    'surfaceflinger_workload.summary.stats.dpu_composited_layers')
    AS dpu_composited_layers
FROM slice
WHERE category = 'rendering' AND name = 'WorkloadSummary';

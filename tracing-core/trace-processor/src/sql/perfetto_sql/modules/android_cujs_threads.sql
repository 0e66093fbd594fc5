-- android.cujs.threads, written for zerotrace: the threads that do a jank
-- CUJ's work in the app (UI, render, GPU completion, HWC release) and in
-- SurfaceFlinger (GPU completion, RenderEngine), each with its thread
-- track(s), so that their slices can be found per CUJ.
--   android_jank_cuj_app_thread(thread_name)  a CUJ process's threads
--                                             called `thread_name`
--   android_jank_cuj_render_thread            RenderThread
--   _android_jank_cuj_main_thread             the UI thread
--   _android_jank_cuj_gpu_completion_thread   `GPU completion`
--   _android_jank_cuj_hwc_release_thread      `HWC release`
--   _android_jank_cuj_sf_process              SurfaceFlinger
--   _android_jank_cuj_sf_gpu_completion_thread  SF's `GPU completion`
--   _android_jank_cuj_sf_render_engine_thread   SF's `RenderEngine`

INCLUDE PERFETTO MODULE android.cujs.base;
INCLUDE PERFETTO MODULE android.surfaceflinger;

-- Per CUJ, the threads of its process called `thread_name`, one row per
-- thread track.
CREATE PERFETTO FUNCTION android_jank_cuj_app_thread(thread_name STRING)
RETURNS TABLE(
  cuj_id LONG,
  upid JOINID(process.id),
  utid LONG,
  name STRING,
  track_id LONG
)
AS
SELECT c.cuj_id, c.upid, t.utid, t.name, tt.id AS track_id
FROM thread AS t
JOIN android_jank_cuj AS c USING (upid)
JOIN thread_track AS tt USING (utid)
WHERE t.name = $thread_name;

-- Each CUJ's render thread.
CREATE PERFETTO TABLE android_jank_cuj_render_thread(
  cuj_id LONG,
  upid JOINID(process.id),
  utid JOINID(thread.id),
  name STRING,
  track_id JOINID(track.id)
) AS
SELECT * FROM android_jank_cuj_app_thread('RenderThread');

-- Each CUJ's UI thread: the one its UIThread marker names, else the
-- process's main thread.
CREATE PERFETTO TABLE _android_jank_cuj_main_thread(
  cuj_id LONG,
  upid JOINID(process.id),
  utid JOINID(thread.id),
  name STRING,
  track_id JOINID(track.id)
) AS
SELECT c.cuj_id, c.upid, t.utid, t.name, tt.id AS track_id
FROM thread AS t
JOIN android_jank_cuj AS c USING (upid)
JOIN thread_track AS tt USING (utid)
WHERE c.ui_thread = t.utid OR (c.ui_thread IS NULL AND t.is_main_thread);

-- Each CUJ's `GPU completion` thread.
CREATE PERFETTO TABLE _android_jank_cuj_gpu_completion_thread(
  cuj_id LONG,
  upid JOINID(process.id),
  utid JOINID(thread.id),
  name STRING,
  track_id JOINID(track.id)
) AS
SELECT * FROM android_jank_cuj_app_thread('GPU completion');

-- Each CUJ's `HWC release` thread.
CREATE PERFETTO TABLE _android_jank_cuj_hwc_release_thread(
  cuj_id LONG,
  upid JOINID(process.id),
  utid JOINID(thread.id),
  name STRING,
  track_id JOINID(track.id)
) AS
SELECT * FROM android_jank_cuj_app_thread('HWC release');

-- SurfaceFlinger's process.
CREATE PERFETTO TABLE _android_jank_cuj_sf_process(
  upid JOINID(process.id),
  name STRING
) AS
SELECT upid, name FROM _android_sf_process;

-- SurfaceFlinger's `GPU completion` thread.
CREATE PERFETTO TABLE _android_jank_cuj_sf_gpu_completion_thread(
  upid JOINID(process.id),
  utid JOINID(thread.id),
  name STRING,
  track_id JOINID(track.id)
) AS
SELECT * FROM _android_sf_thread('GPU completion');

-- SurfaceFlinger's `RenderEngine` thread.
CREATE PERFETTO TABLE _android_jank_cuj_sf_render_engine_thread(
  upid JOINID(process.id),
  utid JOINID(thread.id),
  name STRING,
  track_id JOINID(track.id)
) AS
SELECT * FROM _android_sf_thread('RenderEngine');

-- Written for zerotrace: the v1 metric file
-- android/jank/android_jank_cuj_init.sql. Builds what every jank-CUJ query
-- reads, from the standard library's android.cujs modules, under the
-- names the metric's callers use:
--   android_jank_cuj                 the CUJs (android.cujs.base)
--   android_jank_cuj_*_slice         the app's and SurfaceFlinger's frame
--                                    slices and every slice of their
--                                    relevant threads within each CUJ
--   android_jank_cuj_*_boundary      each frame's and each CUJ's span on
--                                    each thread
--   android_jank_cuj_frame, _sf_frame, _frame_timeline   the CUJ frames
-- and then the query helpers (android/jank/query_functions.sql).

SELECT RUN_METRIC('android/process_metadata.sql');

INCLUDE PERFETTO MODULE android.cujs.base;
INCLUDE PERFETTO MODULE android.cujs.threads;
INCLUDE PERFETTO MODULE android.cujs.relevant_slices;
INCLUDE PERFETTO MODULE android.cujs.boundaries;
INCLUDE PERFETTO MODULE android.cujs.frames;
INCLUDE PERFETTO MODULE android.cujs.slices;

-- Frame numbers and GPU fence ids as the slice names carry them.
CREATE OR REPLACE PERFETTO FUNCTION vsync_from_name(slice_name STRING)
RETURNS STRING AS
SELECT _vsync_from_name($slice_name);

CREATE OR REPLACE PERFETTO FUNCTION gpu_completion_fence_id_from_name(
  slice_name STRING)
RETURNS STRING AS
SELECT _gpu_completion_fence_id_from_name($slice_name);

-- The frame-producing slices of the app and of SurfaceFlinger.
CREATE OR REPLACE PERFETTO TABLE android_jank_cuj_do_frame_slice AS
SELECT * FROM _android_jank_cuj_do_frame_slice;

CREATE OR REPLACE PERFETTO TABLE android_jank_cuj_draw_frame_slice AS
SELECT * FROM _android_jank_cuj_draw_frame_slice;

CREATE OR REPLACE PERFETTO TABLE android_jank_cuj_gpu_completion_fence AS
SELECT * FROM _android_jank_cuj_gpu_completion_fence;

CREATE OR REPLACE PERFETTO TABLE android_jank_cuj_hwc_release_fence AS
SELECT * FROM _android_jank_cuj_hwc_release_fence;

CREATE OR REPLACE PERFETTO TABLE android_jank_cuj_hwc_release_slice AS
SELECT * FROM _android_jank_cuj_hwc_release_slice;

CREATE OR REPLACE PERFETTO TABLE android_jank_cuj_gpu_completion_slice AS
SELECT * FROM _android_jank_cuj_gpu_completion_slice;

CREATE OR REPLACE PERFETTO FUNCTION find_android_jank_cuj_sf_main_thread_slice(
  slice_name_glob STRING)
RETURNS TABLE(
  cuj_id LONG, utid LONG, vsync LONG, id LONG,
  name STRING, ts LONG, dur LONG, ts_end LONG)
AS
SELECT * FROM _find_android_jank_cuj_sf_main_thread_slice($slice_name_glob);

CREATE OR REPLACE PERFETTO TABLE android_jank_cuj_sf_commit_slice AS
SELECT * FROM _android_jank_cuj_sf_commit_slice;

CREATE OR REPLACE PERFETTO TABLE android_jank_cuj_sf_composite_slice AS
SELECT * FROM _android_jank_cuj_sf_composite_slice;

CREATE OR REPLACE PERFETTO TABLE android_jank_cuj_sf_on_message_invalidate_slice AS
SELECT * FROM _android_jank_cuj_sf_on_message_invalidate_slice;

CREATE OR REPLACE PERFETTO VIEW android_jank_cuj_sf_root_slice AS
SELECT * FROM _android_jank_cuj_sf_root_slice;

CREATE OR REPLACE PERFETTO TABLE android_jank_cuj_sf_gpu_completion_fence AS
SELECT * FROM _android_jank_cuj_sf_gpu_completion_fence;

CREATE OR REPLACE PERFETTO TABLE android_jank_cuj_sf_gpu_completion_slice AS
SELECT * FROM _android_jank_cuj_sf_gpu_completion_slice;

CREATE OR REPLACE PERFETTO TABLE android_jank_cuj_sf_draw_layers_slice AS
SELECT * FROM _android_jank_cuj_sf_draw_layers_slice;

-- Frame and CUJ spans, per thread.
CREATE OR REPLACE PERFETTO TABLE android_jank_cuj_vsync_boundary AS
SELECT * FROM _android_jank_cuj_vsync_boundary;

CREATE OR REPLACE PERFETTO TABLE android_jank_cuj_sf_vsync_boundary AS
SELECT * FROM _android_jank_cuj_sf_vsync_boundary;

CREATE OR REPLACE PERFETTO TABLE android_jank_cuj_main_thread_frame_boundary AS
SELECT * FROM _android_jank_cuj_main_thread_frame_boundary;

CREATE OR REPLACE PERFETTO TABLE android_jank_cuj_main_thread_cuj_boundary AS
SELECT * FROM _android_jank_cuj_main_thread_cuj_boundary;

CREATE OR REPLACE PERFETTO TABLE android_jank_cuj_render_thread_frame_boundary AS
SELECT * FROM _android_jank_cuj_render_thread_frame_boundary;

CREATE OR REPLACE PERFETTO TABLE android_jank_cuj_render_thread_cuj_boundary AS
SELECT * FROM _android_jank_cuj_render_thread_cuj_boundary;

CREATE OR REPLACE PERFETTO TABLE android_jank_cuj_boundary AS
SELECT * FROM _android_jank_cuj_boundary;

CREATE OR REPLACE PERFETTO TABLE android_jank_cuj_sf_main_thread_frame_boundary AS
SELECT * FROM _android_jank_cuj_sf_main_thread_frame_boundary;

CREATE OR REPLACE PERFETTO TABLE android_jank_cuj_sf_main_thread_cuj_boundary AS
SELECT * FROM _android_jank_cuj_sf_main_thread_cuj_boundary;

CREATE OR REPLACE PERFETTO TABLE android_jank_cuj_sf_render_engine_frame_boundary AS
SELECT * FROM _android_jank_cuj_sf_render_engine_frame_boundary;

CREATE OR REPLACE PERFETTO TABLE android_jank_cuj_sf_boundary AS
SELECT * FROM _android_jank_cuj_sf_boundary;

-- The CUJ frames: from the frame timeline, from the app's own slices, and
-- SurfaceFlinger's.
CREATE OR REPLACE PERFETTO TABLE android_jank_cuj_frame_timeline AS
SELECT * FROM _android_jank_cuj_frame_timeline;

CREATE OR REPLACE PERFETTO TABLE android_jank_cuj_frame AS
SELECT * FROM _android_jank_cuj_frame;

CREATE OR REPLACE PERFETTO TABLE android_jank_cuj_sf_frame AS
SELECT * FROM _android_jank_cuj_sf_frame;

-- Every slice of the app's relevant threads (and SurfaceFlinger's) within
-- each CUJ, and those of each single thread.
CREATE OR REPLACE PERFETTO VIEW android_jank_cuj_slice AS
SELECT * FROM _android_jank_cuj_slice;

CREATE OR REPLACE PERFETTO TABLE android_jank_cuj_main_thread_slice AS
SELECT * FROM _android_jank_cuj_main_thread_slice;

CREATE OR REPLACE PERFETTO TABLE android_jank_cuj_render_thread_slice AS
SELECT * FROM _android_jank_cuj_render_thread_slice;

CREATE OR REPLACE PERFETTO VIEW android_jank_cuj_sf_slice AS
SELECT * FROM _android_jank_cuj_sf_slice;

CREATE OR REPLACE PERFETTO TABLE android_jank_cuj_sf_main_thread_slice AS
SELECT * FROM _android_jank_cuj_sf_main_thread_slice;

CREATE OR REPLACE PERFETTO TABLE android_jank_cuj_sf_render_engine_slice AS
SELECT * FROM _android_jank_cuj_sf_render_engine_slice;

SELECT RUN_METRIC('android/jank/query_functions.sql');

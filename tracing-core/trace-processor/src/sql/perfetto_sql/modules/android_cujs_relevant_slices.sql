-- android.cujs.relevant_slices, written for zerotrace: the slices that
-- make up each frame of a jank CUJ. In the app: the UI thread's
-- `Choreographer#doFrame <vsync>` slices, the render thread's
-- `DrawFrame <vsync>` slices, the GPU-completion and HWC-release fences
-- those wait on (`... fence <n>`) and the matching `waiting for GPU
-- completion <n>` / `waiting for HWC release <n>` slices on the threads of
-- those names. In SurfaceFlinger: the main thread's commit/composite
-- slices of the CUJ's SF frames, their GPU fences, and RenderEngine's
-- `REThreaded::drawLayers` inside `composeSurfaces`.
-- The slice tables carry the slice's own columns (id ... slice_id) plus
-- ts_end and the vsync or fence they belong to.
--   _vsync_from_name(name)                 second word as integer
--   _gpu_completion_fence_id_from_name(name)  the fence number
--   _android_jank_cuj_do_frame_slice       the CUJ's innermost doFrames
--   _android_jank_cuj_draw_frame_slice     its DrawFrames
--   _android_jank_cuj_gpu_completion_fence / _hwc_release_fence
--   _android_jank_cuj_hwc_release_slice / _gpu_completion_slice
--   _android_jank_cuj_sf_root_slice        SF commit/composite/invalidate
--   _android_jank_cuj_sf_gpu_completion_fence / _slice
--   _android_jank_cuj_sf_draw_layers_slice

INCLUDE PERFETTO MODULE android.cujs.base;
INCLUDE PERFETTO MODULE android.cujs.threads;
INCLUDE PERFETTO MODULE android.surfaceflinger;

-- The second space-separated word of a slice name as an integer (the
-- vsync id of `Choreographer#doFrame 123` or `DrawFrame 123`).
CREATE PERFETTO FUNCTION _vsync_from_name(slice_name STRING)
RETURNS STRING
AS
SELECT CAST(str_split($slice_name, ' ', 1) AS INTEGER);

-- The fence number in a fence slice's name: the fourth word of `GPU
-- completion fence <n>`, the fifth of `Trace GPU completion fence <n>`,
-- `waiting for GPU completion <n>`, `Trace HWC release fence <n>` and
-- `waiting for HWC release <n>`; NULL for other names.
CREATE PERFETTO FUNCTION _gpu_completion_fence_id_from_name(slice_name STRING)
RETURNS STRING
AS
SELECT CASE
  WHEN $slice_name GLOB 'GPU completion fence *'
    THEN CAST(str_split($slice_name, ' ', 3) AS INTEGER)
  WHEN $slice_name GLOB 'Trace GPU completion fence *'
    OR $slice_name GLOB 'waiting for GPU completion *'
    OR $slice_name GLOB 'Trace HWC release fence *'
    OR $slice_name GLOB 'waiting for HWC release *'
    THEN CAST(str_split($slice_name, ' ', 4) AS INTEGER)
  ELSE NULL
END;

-- Each CUJ's doFrame slices on its UI thread overlapping it (positive
-- duration, not `resynced`, with no doFrame nested inside them), with a
-- positive vsync inside the CUJ's vsync range when it has one.
CREATE PERFETTO TABLE _android_jank_cuj_do_frame_slice(
  cuj_id LONG,
  upid JOINID(process.id),
  utid JOINID(thread.id),
  id ID(slice.id),
  ts TIMESTAMP,
  dur LONG,
  track_id JOINID(track.id),
  category STRING,
  name STRING,
  depth LONG,
  parent_id LONG,
  arg_set_id LONG,
  thread_ts TIMESTAMP,
  thread_dur LONG,
  thread_instruction_count LONG,
  thread_instruction_delta LONG,
  cat STRING,
  slice_id LONG,
  ts_end TIMESTAMP,
  vsync LONG
) AS
WITH candidates AS (
  SELECT
    c.cuj_id, mt.upid, mt.utid, s.id, s.ts, s.dur, s.track_id, s.category,
    s.name, s.depth, s.parent_id, s.arg_set_id, s.thread_ts, s.thread_dur,
    s.thread_instruction_count, s.thread_instruction_delta,
    s.category AS cat, s.id AS slice_id, s.ts + s.dur AS ts_end,
    _vsync_from_name(s.name) AS vsync, c.begin_vsync, c.end_vsync
  FROM android_jank_cuj AS c
  JOIN _android_jank_cuj_main_thread AS mt USING (cuj_id)
  JOIN slice AS s
    ON s.track_id = mt.track_id
    AND s.ts + s.dur >= c.ts AND s.ts <= c.ts_end
  WHERE s.name GLOB 'Choreographer#doFrame*'
    AND NOT s.name GLOB '*resynced*'
    AND s.dur > 0
)
SELECT
  cuj_id, upid, utid, id, ts, dur, track_id, category, name, depth,
  parent_id, arg_set_id, thread_ts, thread_dur, thread_instruction_count,
  thread_instruction_delta, cat, slice_id, ts_end, vsync
FROM candidates AS f
WHERE f.vsync > 0
  AND (f.begin_vsync IS NULL OR f.vsync >= f.begin_vsync)
  AND (f.end_vsync IS NULL OR f.vsync <= f.end_vsync)
  AND NOT EXISTS (
    SELECT 1 FROM descendant_slice(f.id) AS child
    WHERE child.name GLOB 'Choreographer#doFrame*'
      AND NOT child.name GLOB '*resynced*'
  );

-- The render thread's DrawFrame slices (positive duration) for each of
-- a CUJ's doFrame vsyncs.
CREATE PERFETTO TABLE _android_jank_cuj_draw_frame_slice(
  cuj_id LONG,
  upid JOINID(process.id),
  utid JOINID(thread.id),
  id ID(slice.id),
  ts TIMESTAMP,
  dur LONG,
  track_id JOINID(track.id),
  category STRING,
  name STRING,
  depth LONG,
  parent_id LONG,
  arg_set_id LONG,
  thread_ts TIMESTAMP,
  thread_dur LONG,
  thread_instruction_count LONG,
  thread_instruction_delta LONG,
  cat STRING,
  slice_id LONG,
  ts_end TIMESTAMP,
  vsync LONG
) AS
SELECT
  d.cuj_id, rt.upid, rt.utid, s.id, s.ts, s.dur, s.track_id, s.category,
  s.name, s.depth, s.parent_id, s.arg_set_id, s.thread_ts, s.thread_dur,
  s.thread_instruction_count, s.thread_instruction_delta,
  s.category AS cat, s.id AS slice_id, s.ts + s.dur AS ts_end,
  _vsync_from_name(s.name) AS vsync
FROM _android_jank_cuj_do_frames AS d
JOIN android_jank_cuj_render_thread AS rt USING (cuj_id)
JOIN slice AS s ON s.track_id = rt.track_id
WHERE s.name GLOB 'DrawFrame*'
  AND _vsync_from_name(s.name) = d.vsync
  AND s.dur > 0;

-- The GPU completion fences under each DrawFrame.
CREATE PERFETTO TABLE _android_jank_cuj_gpu_completion_fence(
  cuj_id LONG,
  vsync LONG,
  draw_frame_slice_id ID(slice.id),
  fence_idx LONG
) AS
SELECT
  d.cuj_id,
  d.vsync,
  d.id AS draw_frame_slice_id,
  _gpu_completion_fence_id_from_name(f.name) AS fence_idx
FROM _android_jank_cuj_draw_frame_slice AS d
JOIN descendant_slice(d.id) AS f ON f.name GLOB '*GPU completion fence*';

-- The HWC release fences under each DrawFrame.
CREATE PERFETTO TABLE _android_jank_cuj_hwc_release_fence(
  cuj_id LONG,
  vsync LONG,
  draw_frame_slice_id ID(slice.id),
  fence_idx LONG
) AS
SELECT
  d.cuj_id,
  d.vsync,
  d.id AS draw_frame_slice_id,
  _gpu_completion_fence_id_from_name(f.name) AS fence_idx
FROM _android_jank_cuj_draw_frame_slice AS d
JOIN descendant_slice(d.id) AS f ON f.name GLOB '*HWC release fence *';

-- The `waiting for HWC release <n>` slices of the CUJ's HWC release
-- thread for those fences.
CREATE PERFETTO TABLE _android_jank_cuj_hwc_release_slice(
  cuj_id LONG,
  vsync LONG,
  id ID(slice.id),
  ts TIMESTAMP,
  dur LONG,
  track_id JOINID(track.id),
  category STRING,
  name STRING,
  depth LONG,
  parent_id LONG,
  arg_set_id LONG,
  thread_ts TIMESTAMP,
  thread_dur LONG,
  thread_instruction_count LONG,
  thread_instruction_delta LONG,
  cat STRING,
  slice_id LONG,
  ts_end TIMESTAMP,
  fence_idx LONG,
  draw_frame_slice_id ID(slice.id)
) AS
SELECT
  f.cuj_id, f.vsync, s.id, s.ts, s.dur, s.track_id, s.category, s.name,
  s.depth, s.parent_id, s.arg_set_id, s.thread_ts, s.thread_dur,
  s.thread_instruction_count, s.thread_instruction_delta,
  s.category AS cat, s.id AS slice_id, s.ts + s.dur AS ts_end,
  f.fence_idx, f.draw_frame_slice_id
FROM _android_jank_cuj_hwc_release_thread AS th
JOIN slice AS s USING (track_id)
JOIN _android_jank_cuj_hwc_release_fence AS f
  ON f.cuj_id = th.cuj_id
  AND f.fence_idx = _gpu_completion_fence_id_from_name(s.name)
WHERE s.name GLOB 'waiting for HWC release *' AND s.dur > 0;

-- The `waiting for GPU completion <n>` slices of the CUJ's GPU completion
-- thread for the DrawFrames' fences, with the end of the matching HWC
-- release wait.
CREATE PERFETTO TABLE _android_jank_cuj_gpu_completion_slice(
  cuj_id LONG,
  vsync LONG,
  id ID(slice.id),
  ts TIMESTAMP,
  dur LONG,
  track_id JOINID(track.id),
  category STRING,
  name STRING,
  depth LONG,
  parent_id LONG,
  arg_set_id LONG,
  thread_ts TIMESTAMP,
  thread_dur LONG,
  thread_instruction_count LONG,
  thread_instruction_delta LONG,
  cat STRING,
  slice_id LONG,
  ts_end TIMESTAMP,
  hwc_release_ts_end TIMESTAMP,
  fence_idx LONG
) AS
SELECT
  f.cuj_id, f.vsync, s.id, s.ts, s.dur, s.track_id, s.category, s.name,
  s.depth, s.parent_id, s.arg_set_id, s.thread_ts, s.thread_dur,
  s.thread_instruction_count, s.thread_instruction_delta,
  s.category AS cat, s.id AS slice_id, s.ts + s.dur AS ts_end,
  h.ts_end AS hwc_release_ts_end,
  f.fence_idx
FROM _android_jank_cuj_gpu_completion_thread AS th
JOIN slice AS s USING (track_id)
JOIN _android_jank_cuj_gpu_completion_fence AS f
  ON f.cuj_id = th.cuj_id
  AND f.fence_idx = _gpu_completion_fence_id_from_name(s.name)
LEFT JOIN _android_jank_cuj_hwc_release_slice AS h
  ON h.cuj_id = f.cuj_id
  AND h.vsync = f.vsync
  AND h.draw_frame_slice_id = f.draw_frame_slice_id
WHERE s.name GLOB 'waiting for GPU completion *' AND s.dur > 0;

-- SurfaceFlinger's main-thread frame slices for the CUJs.
CREATE PERFETTO VIEW _android_jank_cuj_sf_root_slice AS
SELECT * FROM _android_jank_cuj_sf_commit_slice
UNION ALL
SELECT * FROM _android_jank_cuj_sf_composite_slice
UNION ALL
SELECT * FROM _android_jank_cuj_sf_on_message_invalidate_slice;

-- The GPU completion fences under SurfaceFlinger's frame slices.
CREATE PERFETTO TABLE _android_jank_cuj_sf_gpu_completion_fence(
  cuj_id LONG,
  vsync LONG,
  sf_root_slice_id ID(slice.id),
  fence_idx LONG
) AS
SELECT
  r.cuj_id,
  r.vsync,
  r.id AS sf_root_slice_id,
  _gpu_completion_fence_id_from_name(f.name) AS fence_idx
FROM _android_jank_cuj_sf_root_slice AS r
JOIN descendant_slice(r.id) AS f ON f.name GLOB '*GPU completion fence*';

-- SurfaceFlinger's `waiting for GPU completion <n>` slices for them.
CREATE PERFETTO TABLE _android_jank_cuj_sf_gpu_completion_slice(
  cuj_id LONG,
  vsync LONG,
  id ID(slice.id),
  ts TIMESTAMP,
  dur LONG,
  track_id JOINID(track.id),
  category STRING,
  name STRING,
  depth LONG,
  parent_id LONG,
  arg_set_id LONG,
  thread_ts TIMESTAMP,
  thread_dur LONG,
  thread_instruction_count LONG,
  thread_instruction_delta LONG,
  cat STRING,
  slice_id LONG,
  ts_end TIMESTAMP,
  fence_idx LONG
) AS
SELECT
  f.cuj_id, f.vsync, s.id, s.ts, s.dur, s.track_id, s.category, s.name,
  s.depth, s.parent_id, s.arg_set_id, s.thread_ts, s.thread_dur,
  s.thread_instruction_count, s.thread_instruction_delta,
  s.category AS cat, s.id AS slice_id, s.ts + s.dur AS ts_end,
  f.fence_idx
FROM _android_jank_cuj_sf_gpu_completion_fence AS f
JOIN _android_jank_cuj_sf_gpu_completion_thread AS th
JOIN slice AS s
  ON s.track_id = th.track_id
  AND f.fence_idx = _gpu_completion_fence_id_from_name(s.name)
WHERE s.name GLOB 'waiting for GPU completion *' AND s.dur > 0;

-- RenderEngine's `REThreaded::drawLayers` slices (positive duration)
-- wholly inside a `composeSurfaces` under a SurfaceFlinger frame slice,
-- with the composeSurfaces start.
CREATE PERFETTO TABLE _android_jank_cuj_sf_draw_layers_slice(
  cuj_id LONG,
  utid JOINID(thread.id),
  vsync LONG,
  id ID(slice.id),
  ts TIMESTAMP,
  dur LONG,
  track_id JOINID(track.id),
  category STRING,
  name STRING,
  depth LONG,
  parent_id LONG,
  arg_set_id LONG,
  thread_ts TIMESTAMP,
  thread_dur LONG,
  thread_instruction_count LONG,
  thread_instruction_delta LONG,
  cat STRING,
  slice_id LONG,
  ts_end TIMESTAMP,
  ts_compose_surfaces TIMESTAMP
) AS
WITH compose AS (
  SELECT r.cuj_id, r.vsync, c.ts, c.ts + c.dur AS ts_end
  FROM _android_jank_cuj_sf_root_slice AS r
  JOIN descendant_slice(r.id) AS c ON c.name = 'composeSurfaces'
)
SELECT
  c.cuj_id, re.utid, c.vsync, s.id, s.ts, s.dur, s.track_id, s.category,
  s.name, s.depth, s.parent_id, s.arg_set_id, s.thread_ts, s.thread_dur,
  s.thread_instruction_count, s.thread_instruction_delta,
  s.category AS cat, s.id AS slice_id, s.ts + s.dur AS ts_end,
  c.ts AS ts_compose_surfaces
FROM compose AS c
JOIN _android_jank_cuj_sf_render_engine_thread AS re
JOIN slice AS s
  ON s.track_id = re.track_id
  AND s.ts >= c.ts
  AND s.ts + s.dur <= c.ts_end
WHERE s.name = 'REThreaded::drawLayers' AND s.dur > 0;

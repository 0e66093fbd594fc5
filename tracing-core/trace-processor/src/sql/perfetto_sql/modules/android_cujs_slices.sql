-- Written for zerotrace: the `android.cujs.slices` module, the slices
-- that overlap each jank CUJ's boundaries (`android.cujs.boundaries`; a
-- slice of positive duration counts when it ends at or after a boundary's
-- start and starts at or before its end, so slices that delayed a frame's
-- start count too), with their thread, process and end:
-- `_android_jank_cuj_slice` on every thread of the CUJ's app,
-- `_android_jank_cuj_main_thread_slice` and
-- `_android_jank_cuj_render_thread_slice` on its main and render threads,
-- `_android_jank_cuj_sf_slice` on every thread of SurfaceFlinger,
-- `_android_jank_cuj_sf_main_thread_slice` and
-- `_android_jank_cuj_sf_render_engine_slice` on SurfaceFlinger's main and
-- RenderEngine threads.

INCLUDE PERFETTO MODULE android.cujs.boundaries;
INCLUDE PERFETTO MODULE android.cujs.threads;

-- The slices on thread `utid`'s tracks overlapping `[ts, ts_end]` of the
-- boundary rows of `boundaries` (columns cuj_id, utid, ts, ts_end), with
-- the slice table's columns and the thread's process.
CREATE PERFETTO MACRO _zt_cuj_thread_slices(boundaries TableOrSubquery)
RETURNS TableOrSubquery
AS (
  SELECT
    b.cuj_id,
    t.upid,
    t.utid,
    s.id,
    s.ts,
    s.dur,
    s.track_id,
    s.category,
    s.name,
    s.depth,
    s.parent_id,
    s.arg_set_id,
    s.thread_ts,
    s.thread_dur,
    s.thread_instruction_count,
    s.thread_instruction_delta,
    s.cat,
    s.slice_id,
    s.ts + s.dur AS ts_end
  FROM $boundaries AS b
  JOIN thread AS t ON t.utid = b.utid
  JOIN thread_track AS tt ON tt.utid = b.utid
  JOIN slice AS s
    ON s.track_id = tt.id AND s.ts + s.dur >= b.ts AND s.ts <= b.ts_end
  WHERE s.dur > 0
);

CREATE PERFETTO TABLE _android_jank_cuj_slice(
  cuj_id LONG,
  upid JOINID(process.id),
  process_name STRING,
  utid JOINID(thread.id),
  thread_name STRING,
  id ID(slice.id),
  ts TIMESTAMP,
  dur LONG,
  track_id JOINID(track.id),
  name STRING,
  depth LONG,
  parent_id LONG,
  arg_set_id LONG,
  thread_ts TIMESTAMP,
  thread_dur LONG,
  slice_id LONG,
  ts_end TIMESTAMP
)
AS
SELECT
  b.cuj_id,
  p.upid,
  p.name AS process_name,
  t.utid,
  t.name AS thread_name,
  s.id,
  s.ts,
  s.dur,
  s.track_id,
  s.name,
  s.depth,
  s.parent_id,
  s.arg_set_id,
  s.thread_ts,
  s.thread_dur,
  s.slice_id,
  s.ts + s.dur AS ts_end
FROM _android_jank_cuj_boundary AS b
JOIN process AS p ON p.upid = b.upid
JOIN thread AS t ON t.upid = b.upid
JOIN thread_track AS tt ON tt.utid = t.utid
JOIN slice AS s
  ON s.track_id = tt.id AND s.ts + s.dur >= b.ts AND s.ts <= b.ts_end
WHERE s.dur > 0;

CREATE PERFETTO TABLE _android_jank_cuj_main_thread_slice(
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
  ts_end TIMESTAMP
)
AS
SELECT * FROM _zt_cuj_thread_slices!(_android_jank_cuj_main_thread_cuj_boundary);

CREATE PERFETTO TABLE _android_jank_cuj_render_thread_slice(
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
  ts_end TIMESTAMP
)
AS
SELECT * FROM _zt_cuj_thread_slices!(_android_jank_cuj_render_thread_cuj_boundary);

CREATE PERFETTO TABLE _android_jank_cuj_sf_slice(
  cuj_id LONG,
  upid JOINID(process.id),
  process_name STRING,
  utid JOINID(thread.id),
  thread_name STRING,
  id ID(slice.id),
  ts TIMESTAMP,
  dur LONG,
  track_id JOINID(track.id),
  name STRING,
  depth LONG,
  parent_id LONG,
  arg_set_id LONG,
  thread_ts TIMESTAMP,
  thread_dur LONG,
  slice_id LONG,
  ts_end TIMESTAMP
)
AS
SELECT
  b.cuj_id,
  sf.upid,
  sf.name AS process_name,
  t.utid,
  t.name AS thread_name,
  s.id,
  s.ts,
  s.dur,
  s.track_id,
  s.name,
  s.depth,
  s.parent_id,
  s.arg_set_id,
  s.thread_ts,
  s.thread_dur,
  s.slice_id,
  s.ts + s.dur AS ts_end
FROM _android_jank_cuj_sf_boundary AS b
JOIN _android_jank_cuj_sf_process AS sf
JOIN thread AS t ON t.upid = sf.upid
JOIN thread_track AS tt ON tt.utid = t.utid
JOIN slice AS s
  ON s.track_id = tt.id AND s.ts + s.dur >= b.ts AND s.ts <= b.ts_end
WHERE s.dur > 0;

-- The columns of a SurfaceFlinger thread's slice rows.
CREATE PERFETTO MACRO _zt_cuj_sf_thread_slices(boundaries TableOrSubquery)
RETURNS TableOrSubquery
AS (
  SELECT
    cuj_id,
    upid,
    utid,
    id,
    ts,
    dur,
    track_id,
    name,
    depth,
    parent_id,
    arg_set_id,
    thread_ts,
    thread_dur,
    slice_id,
    ts_end
  FROM _zt_cuj_thread_slices!($boundaries)
);

CREATE PERFETTO TABLE _android_jank_cuj_sf_main_thread_slice(
  cuj_id LONG,
  upid JOINID(process.id),
  utid JOINID(thread.id),
  id ID(slice.id),
  ts TIMESTAMP,
  dur LONG,
  track_id JOINID(track.id),
  name STRING,
  depth LONG,
  parent_id LONG,
  arg_set_id LONG,
  thread_ts TIMESTAMP,
  thread_dur LONG,
  slice_id LONG,
  ts_end TIMESTAMP
)
AS
SELECT * FROM _zt_cuj_sf_thread_slices!(_android_jank_cuj_sf_main_thread_cuj_boundary);

CREATE PERFETTO TABLE _android_jank_cuj_sf_render_engine_slice(
  cuj_id LONG,
  upid JOINID(process.id),
  utid JOINID(thread.id),
  id ID(slice.id),
  ts TIMESTAMP,
  dur LONG,
  track_id JOINID(track.id),
  name STRING,
  depth LONG,
  parent_id LONG,
  arg_set_id LONG,
  thread_ts TIMESTAMP,
  thread_dur LONG,
  slice_id LONG,
  ts_end TIMESTAMP
)
AS
SELECT * FROM _zt_cuj_sf_thread_slices!(_android_jank_cuj_sf_render_engine_frame_boundary);

-- android.cujs.boundaries, written for zerotrace: where each frame of a
-- jank CUJ, and the CUJ itself, begins and ends on each thread that
-- works on it. A UI-thread frame runs from its expected start (or the
-- previous doFrame's end, whichever is later; the doFrame's start when
-- the frame has no timeline) to its doFrame's end; a render-thread frame
-- from the earlier of its first `postAndWait` (or the previous
-- DrawFrame's end, whichever is later) and its DrawFrame's start, to the
-- DrawFrame's end; a SurfaceFlinger frame as its main-thread work, and
-- RenderEngine's from composeSurfaces to drawLayers' end.
--   _android_jank_cuj_vsync_boundary               the CUJ's vsync range
--   _android_jank_cuj_main_thread_frame_boundary   UI-thread frames
--   _android_jank_cuj_main_thread_cuj_boundary     UI-thread CUJ span
--   _android_jank_cuj_boundary                     the CUJ's span
--   _android_jank_cuj_render_thread_frame_boundary render-thread frames
--   _android_jank_cuj_render_thread_cuj_boundary   render-thread CUJ span
--   _android_jank_cuj_sf_vsync_boundary            SF vsync range
--   _android_jank_cuj_sf_main_thread_cuj_boundary  SF main-thread span
--   _android_jank_cuj_sf_render_engine_frame_boundary  RenderEngine frames
--   _android_jank_cuj_sf_boundary                  SF span

INCLUDE PERFETTO MODULE android.cujs.base;
INCLUDE PERFETTO MODULE android.surfaceflinger;
INCLUDE PERFETTO MODULE android.cujs.relevant_slices;

-- Each CUJ's vsync range: its markers' when present, else its doFrames'.
CREATE PERFETTO TABLE _android_jank_cuj_vsync_boundary(
  cuj_id LONG,
  upid JOINID(process.id),
  layer_id LONG,
  vsync_min LONG,
  vsync_max LONG
) AS
SELECT
  c.cuj_id,
  c.upid,
  c.layer_id,
  ifnull(c.begin_vsync, min(d.vsync)) AS vsync_min,
  ifnull(c.end_vsync, max(d.vsync)) AS vsync_max
FROM android_jank_cuj AS c
JOIN _android_jank_cuj_do_frames AS d USING (cuj_id)
GROUP BY c.cuj_id, c.upid, c.layer_id;

-- Each doFrame of a CUJ with its frame's span on the UI thread.
CREATE PERFETTO TABLE _android_jank_cuj_main_thread_frame_boundary(
  cuj_id LONG,
  utid JOINID(thread.id),
  vsync LONG,
  ts_do_frame_start TIMESTAMP,
  ts_end TIMESTAMP,
  ts_prev_do_frame_end TIMESTAMP,
  ts_expected TIMESTAMP,
  ts TIMESTAMP,
  dur DURATION
) AS
WITH expected AS (
  SELECT *, CAST(name AS INTEGER) AS vsync
  FROM expected_frame_timeline_slice
  WHERE dur > 0
),
timeline AS (
  SELECT
    b.cuj_id,
    e.vsync,
    e.ts AS ts_expected,
    min(a.ts) AS ts_actual_min,
    max(a.ts + a.dur) AS ts_end_actual_max
  FROM _android_jank_cuj_vsync_boundary AS b
  JOIN expected AS e
    ON e.upid = b.upid AND e.vsync BETWEEN b.vsync_min AND b.vsync_max
  JOIN actual_frame_timeline_slice AS a
    ON a.upid = e.upid AND a.name = e.name
  GROUP BY b.cuj_id, e.vsync, e.ts
),
do_frames AS (
  SELECT
    *,
    coalesce(lag(ts_end) OVER (PARTITION BY cuj_id ORDER BY vsync), -1)
      AS ts_prev_do_frame_end
  FROM _android_jank_cuj_do_frames
),
frames AS (
  SELECT
    d.cuj_id,
    d.utid,
    d.vsync,
    d.ts AS ts_do_frame_start,
    d.ts_end,
    d.ts_prev_do_frame_end,
    t.ts_expected,
    iif(t.ts_expected IS NULL, d.ts,
      max(d.ts_prev_do_frame_end, t.ts_expected)) AS ts
  FROM do_frames AS d
  LEFT JOIN timeline AS t
    ON t.cuj_id = d.cuj_id
    AND t.vsync = d.vsync
    AND d.ts >= t.ts_actual_min - 1e6
    AND d.ts <= t.ts_end_actual_max
)
SELECT *, ts_end - ts AS dur FROM frames;

-- Each CUJ's span on its UI thread: its frames' earliest start to their
-- latest end.
CREATE PERFETTO TABLE _android_jank_cuj_main_thread_cuj_boundary(
  cuj_id LONG,
  utid JOINID(thread.id),
  ts TIMESTAMP,
  ts_end TIMESTAMP,
  dur DURATION
) AS
SELECT cuj_id, utid, min(ts) AS ts, max(ts_end) AS ts_end,
  max(ts_end) - min(ts) AS dur
FROM _android_jank_cuj_main_thread_frame_boundary
GROUP BY cuj_id, utid;

-- Each CUJ's span: from its UI-thread start to the end of the actual
-- timeline of its last vsync, or, without one, the later of its last
-- doFrame's end and its slice's end.
CREATE PERFETTO TABLE _android_jank_cuj_boundary(
  cuj_id LONG,
  upid JOINID(process.id),
  ts TIMESTAMP,
  ts_end TIMESTAMP,
  dur DURATION
) AS
WITH spans AS (
  SELECT
    mt.cuj_id,
    c.upid,
    mt.ts,
    CASE
      WHEN a.ts IS NOT NULL THEN max(a.ts + a.dur)
      ELSE (
        SELECT max(max(d.ts_end), c.ts_end)
        FROM _android_jank_cuj_do_frames AS d
        WHERE d.cuj_id = c.cuj_id
      )
    END AS ts_end
  FROM _android_jank_cuj_main_thread_cuj_boundary AS mt
  JOIN android_jank_cuj AS c USING (cuj_id)
  JOIN _android_jank_cuj_vsync_boundary AS v USING (cuj_id)
  LEFT JOIN actual_frame_timeline_slice AS a
    ON a.upid = c.upid AND CAST(a.name AS INTEGER) = v.vsync_max
  GROUP BY mt.cuj_id, c.upid, mt.ts
)
SELECT *, ts_end - ts AS dur FROM spans;

-- Each DrawFrame vsync of a CUJ with its frame's span on the render
-- thread.
CREATE PERFETTO TABLE _android_jank_cuj_render_thread_frame_boundary(
  cuj_id LONG,
  utid JOINID(thread.id),
  vsync LONG,
  ts_expected TIMESTAMP,
  ts_draw_frame_start TIMESTAMP,
  ts_prev_draw_frame_end TIMESTAMP,
  ts TIMESTAMP,
  ts_end TIMESTAMP,
  dur DURATION
) AS
WITH draw_frames AS (
  SELECT
    *,
    coalesce(lag(ts_end) OVER (PARTITION BY cuj_id ORDER BY vsync, ts), -1)
      AS ts_prev_draw_frame_end
  FROM _android_jank_cuj_draw_frame_slice
),
frames AS (
  SELECT
    df.cuj_id,
    df.utid,
    df.vsync,
    min(pw.ts) AS ts_expected,
    min(df.ts) AS ts_draw_frame_start,
    min(df.ts_prev_draw_frame_end) AS ts_prev_draw_frame_end,
    min(max(min(pw.ts), min(df.ts_prev_draw_frame_end)), min(df.ts)) AS ts,
    max(df.ts_end) AS ts_end
  FROM draw_frames AS df
  JOIN _android_jank_cuj_do_frames AS d USING (cuj_id, vsync)
  JOIN descendant_slice(d.id) AS pw
  WHERE pw.name = 'postAndWait'
  GROUP BY df.cuj_id, df.utid, df.vsync
)
SELECT *, ts_end - ts AS dur FROM frames;

-- Each CUJ's span on its render thread.
CREATE PERFETTO TABLE _android_jank_cuj_render_thread_cuj_boundary(
  cuj_id LONG,
  utid JOINID(thread.id),
  ts TIMESTAMP,
  ts_end TIMESTAMP,
  dur DURATION
) AS
SELECT cuj_id, utid, min(ts) AS ts, max(ts_end) AS ts_end,
  max(ts_end) - min(ts) AS dur
FROM _android_jank_cuj_render_thread_frame_boundary
GROUP BY cuj_id, utid;

-- Each CUJ's SurfaceFlinger vsync range.
CREATE PERFETTO TABLE _android_jank_cuj_sf_vsync_boundary(
  cuj_id LONG,
  vsync_min LONG,
  vsync_max LONG
) AS
SELECT cuj_id, min(vsync) AS vsync_min, max(vsync) AS vsync_max
FROM _android_jank_cuj_sf_root_slice
GROUP BY cuj_id;

-- Each CUJ's span on SurfaceFlinger's main thread.
CREATE PERFETTO TABLE _android_jank_cuj_sf_main_thread_cuj_boundary(
  cuj_id LONG,
  utid JOINID(thread.id),
  ts TIMESTAMP,
  ts_end TIMESTAMP,
  dur DURATION
) AS
SELECT cuj_id, utid, min(ts) AS ts, max(ts_end) AS ts_end,
  max(ts_end) - min(ts) AS dur
FROM _android_jank_cuj_sf_main_thread_frame_boundary
GROUP BY cuj_id, utid;

-- Each RenderEngine drawLayers of a CUJ, from its composeSurfaces' start.
CREATE PERFETTO TABLE _android_jank_cuj_sf_render_engine_frame_boundary(
  cuj_id LONG,
  utid JOINID(thread.id),
  vsync LONG,
  ts TIMESTAMP,
  ts_draw_layers_start TIMESTAMP,
  ts_end TIMESTAMP,
  dur DURATION
) AS
SELECT
  cuj_id,
  utid,
  vsync,
  ts_compose_surfaces AS ts,
  ts AS ts_draw_layers_start,
  ts_end,
  ts_end - ts_compose_surfaces AS dur
FROM _android_jank_cuj_sf_draw_layers_slice;

-- Each CUJ's SurfaceFlinger span (its main thread's).
CREATE PERFETTO TABLE _android_jank_cuj_sf_boundary(
  cuj_id LONG,
  ts TIMESTAMP,
  ts_end TIMESTAMP,
  dur DURATION
) AS
SELECT cuj_id, ts, ts_end, dur
FROM _android_jank_cuj_sf_main_thread_cuj_boundary;

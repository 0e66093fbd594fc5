-- android.frames.timeline_maxsdk28, written for zerotrace: the frames of
-- apps on Android 9 and older, which have no frame timeline. A frame is a
-- `Choreographer#doFrame` slice on a process's main thread together with
-- the `DrawFrame` slices of that process that begin before the process's
-- next doFrame (or the trace's end); frames are numbered in time order.

INCLUDE PERFETTO MODULE slices.with_context;

CREATE PERFETTO TABLE _frames_maxsdk_28(
  frame_id LONG,
  ts TIMESTAMP,
  dur DURATION,
  do_frame_id JOINID(slice.id),
  draw_frame_id JOINID(slice.id),
  render_thread_utid JOINID(thread.id),
  ui_thread_utid JOINID(thread.id),
  sdk STRING,
  upid JOINID(process.id),
  process_name STRING
)
AS
WITH
  ui AS (
    SELECT
      id,
      ts,
      utid,
      upid,
      lead(ts, 1, trace_end()) OVER (PARTITION BY upid ORDER BY ts) AS until_ts
    FROM thread_slice
    WHERE name = 'Choreographer#doFrame' AND is_main_thread = 1
  ),
  render AS (
    SELECT id, ts, ts + dur AS end_ts, utid, upid
    FROM thread_slice
    WHERE name = 'DrawFrame'
  )
SELECT
  row_number() OVER () AS frame_id,
  ui.ts,
  max(render.end_ts) OVER (PARTITION BY ui.id) - ui.ts AS dur,
  ui.id AS do_frame_id,
  render.id AS draw_frame_id,
  render.utid AS render_thread_utid,
  ui.utid AS ui_thread_utid,
  'maxsdk28' AS sdk,
  ui.upid AS upid,
  p.name AS process_name
FROM ui
JOIN render
  ON render.upid = ui.upid AND render.ts >= ui.ts AND render.ts < ui.until_ts
JOIN process AS p ON p.upid = ui.upid
ORDER BY ui.ts;

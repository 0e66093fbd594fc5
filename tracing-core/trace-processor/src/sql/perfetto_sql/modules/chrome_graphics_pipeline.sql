-- Written for zerotrace: the `chrome.graphics_pipeline` module, over
-- Chrome's `Graphics.Pipeline` thread slices (the typed
-- `chrome_graphics_pipeline` field: a step of producing a frame, and the
-- surface frame or display frame it was for).
-- `chrome_graphics_pipeline_surface_frame_steps`: the steps of surface
-- frames (a trace id of -1 becomes NULL), each with when its task began
-- (`current_task.event_offset_from_task_start_time_us` before it).
-- `chrome_graphics_pipeline_display_frame_steps`: the steps of display
-- frames, the latest one of each step, frame and thread only.
-- `chrome_surface_frame_id_to_first_display_id`: for each surface frame,
-- the first display frame whose aggregation step took it in.
-- `chrome_graphics_pipeline_inputs_to_surface_frames`: the input events
-- (latency ids) each submitted compositor frame carried.

INCLUDE PERFETTO MODULE slices.with_context;

CREATE PERFETTO TABLE chrome_graphics_pipeline_surface_frame_steps(
  id LONG,
  ts TIMESTAMP,
  dur DURATION,
  step STRING,
  surface_frame_trace_id LONG,
  utid LONG,
  task_start_time_ts TIMESTAMP
)
AS
WITH steps AS (
  SELECT
    id,
    ts,
    dur,
    extract_arg(arg_set_id, 'chrome_graphics_pipeline.step') AS step,
    extract_arg(arg_set_id, 'chrome_graphics_pipeline.surface_frame_trace_id') AS raw_id,
    utid,
    ts - extract_arg(arg_set_id, 'current_task.event_offset_from_task_start_time_us') * 1000
      AS task_start_time_ts
  FROM thread_slice
  WHERE name = 'Graphics.Pipeline'
)
SELECT
  id,
  ts,
  dur,
  step,
  nullif(raw_id, -1) AS surface_frame_trace_id,
  utid,
  task_start_time_ts
FROM steps
WHERE raw_id IS NOT NULL;

CREATE PERFETTO TABLE chrome_graphics_pipeline_display_frame_steps(
  id LONG,
  ts TIMESTAMP,
  dur DURATION,
  step STRING,
  display_trace_id LONG,
  utid LONG,
  task_start_time_ts TIMESTAMP
)
AS
WITH
  steps AS (
    SELECT
      id,
      ts,
      dur,
      extract_arg(arg_set_id, 'chrome_graphics_pipeline.step') AS step,
      extract_arg(arg_set_id, 'chrome_graphics_pipeline.display_trace_id') AS display_trace_id,
      utid,
      ts - extract_arg(arg_set_id, 'current_task.event_offset_from_task_start_time_us') * 1000
        AS task_start_time_ts
    FROM thread_slice
    WHERE name = 'Graphics.Pipeline'
  ),
  ranked AS (
    SELECT
      *,
      row_number() OVER (PARTITION BY display_trace_id, step, utid ORDER BY ts DESC) AS nth
    FROM steps
    WHERE display_trace_id IS NOT NULL
  )
SELECT id, ts, dur, step, display_trace_id, utid, task_start_time_ts
FROM ranked
WHERE nth = 1;

CREATE PERFETTO TABLE chrome_surface_frame_id_to_first_display_id(
  surface_frame_trace_id LONG,
  display_trace_id LONG
)
AS
WITH aggregated AS (
  SELECT a.int_value AS surface_frame_trace_id, d.display_trace_id, d.ts
  FROM chrome_graphics_pipeline_display_frame_steps AS d
  JOIN slice AS s USING (id)
  JOIN args AS a ON a.arg_set_id = s.arg_set_id
  WHERE d.step = 'STEP_SURFACE_AGGREGATION'
    AND a.flat_key = 'chrome_graphics_pipeline.aggregated_surface_frame_trace_ids'
)
SELECT surface_frame_trace_id, display_trace_id
FROM (
  SELECT surface_frame_trace_id, display_trace_id, min(ts)
  FROM aggregated
  GROUP BY surface_frame_trace_id
);

CREATE PERFETTO TABLE chrome_graphics_pipeline_inputs_to_surface_frames(
  latency_id LONG,
  surface_frame_trace_id LONG
)
AS
SELECT a.int_value AS latency_id, f.surface_frame_trace_id
FROM chrome_graphics_pipeline_surface_frame_steps AS f
JOIN slice AS s USING (id)
JOIN args AS a ON a.arg_set_id = s.arg_set_id
WHERE f.step = 'STEP_SUBMIT_COMPOSITOR_FRAME'
  AND a.flat_key = 'chrome_graphics_pipeline.latency_ids';

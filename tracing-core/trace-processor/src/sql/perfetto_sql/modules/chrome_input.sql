-- Written for zerotrace: the `chrome.input` module, Chrome's input
-- pipeline from the typed `chrome_latency_info` field of its thread
-- slices (an input's latency id, the pipeline step the slice is, the input
-- type).
-- `chrome_inputs`: each input (latency id other than -1) with its type
-- (the least type its steps name). `chrome_input_pipeline_steps`: the
-- steps of typed inputs, the latest of each step on each thread, with when
-- the step's task began. `chrome_coalesced_inputs`: the inputs a
-- `STEP_RESAMPLE_SCROLL_EVENTS` step folded into the one it presented.
-- `chrome_touch_move_to_scroll_update`: the touch move behind each
-- gesture scroll update sent by the browser's UI thread: the touch move
-- whose `STEP_TOUCH_EVENT_HANDLED` step holds the whole scroll update's
-- `STEP_SEND_INPUT_EVENT_UI` step on its thread, else the one whose own
-- `STEP_SEND_INPUT_EVENT_UI` step does.
-- `chrome_dispatch_android_input_event_to_touch_move`: the touch move
-- whose UI step ran inside each Android `deliverInputEvent`
-- (`chrome.android_input`) on the same thread.

INCLUDE PERFETTO MODULE chrome.android_input;
INCLUDE PERFETTO MODULE intervals.intersect;
INCLUDE PERFETTO MODULE slices.with_context;

-- The input steps, the latest of each input, thread, step and type.
CREATE PERFETTO TABLE _chrome_input_pipeline_steps_no_input_type(
  latency_id LONG,
  slice_id LONG,
  ts TIMESTAMP,
  dur DURATION,
  utid LONG,
  step STRING,
  input_type STRING,
  task_start_time_ts TIMESTAMP
)
AS
WITH
  steps AS (
    SELECT
      extract_arg(arg_set_id, 'chrome_latency_info.trace_id') AS latency_id,
      id AS slice_id,
      ts,
      dur,
      utid,
      extract_arg(arg_set_id, 'chrome_latency_info.step') AS step,
      extract_arg(arg_set_id, 'chrome_latency_info.input_type') AS input_type,
      ts - extract_arg(arg_set_id, 'current_task.event_offset_from_task_start_time_us') * 1000
        AS task_start_time_ts
    FROM thread_slice
  ),
  ranked AS (
    SELECT
      *,
      row_number() OVER (PARTITION BY latency_id, utid, step, input_type ORDER BY ts DESC) AS nth
    FROM steps
    WHERE step IS NOT NULL AND latency_id != -1
  )
SELECT latency_id, slice_id, ts, dur, utid, step, input_type, task_start_time_ts
FROM ranked
WHERE nth = 1
ORDER BY slice_id, ts;

CREATE PERFETTO TABLE chrome_inputs(
  latency_id LONG,
  input_type STRING
)
AS
SELECT latency_id, min(input_type) AS input_type
FROM _chrome_input_pipeline_steps_no_input_type
WHERE latency_id != -1
GROUP BY latency_id;

CREATE PERFETTO TABLE chrome_input_pipeline_steps(
  latency_id LONG,
  slice_id LONG,
  ts TIMESTAMP,
  dur DURATION,
  utid LONG,
  step STRING,
  input_type STRING,
  task_start_time_ts TIMESTAMP
)
AS
SELECT
  i.latency_id,
  s.slice_id,
  s.ts,
  s.dur,
  s.utid,
  s.step,
  i.input_type,
  s.task_start_time_ts
FROM chrome_inputs AS i
LEFT JOIN _chrome_input_pipeline_steps_no_input_type AS s USING (latency_id)
WHERE i.input_type IS NOT NULL;

CREATE PERFETTO TABLE chrome_coalesced_inputs(
  coalesced_latency_id LONG,
  presented_latency_id LONG
)
AS
SELECT a.int_value AS coalesced_latency_id, p.latency_id AS presented_latency_id
FROM chrome_input_pipeline_steps AS p
JOIN slice AS s ON s.id = p.slice_id
JOIN args AS a ON a.arg_set_id = s.arg_set_id
WHERE p.step = 'STEP_RESAMPLE_SCROLL_EVENTS'
  AND a.flat_key = 'chrome_latency_info.coalesced_trace_ids'
  AND a.int_value != p.latency_id;

-- For each gesture scroll update sent on the UI thread, the input whose
-- step (chosen by `other_steps`) holds it whole on the same thread.
CREATE PERFETTO MACRO _zt_scroll_update_holders(other_steps TableOrSubquery)
RETURNS TableOrSubquery
AS (
  SELECT o.latency_id AS touch_move_latency_id, u.latency_id AS scroll_update_latency_id
  FROM _interval_intersect!(
    (
      (
        SELECT slice_id AS id, *
        FROM chrome_input_pipeline_steps
        WHERE step = 'STEP_SEND_INPUT_EVENT_UI'
          AND input_type = 'GESTURE_SCROLL_UPDATE_EVENT'
          AND dur > 0
      ),
      (SELECT slice_id AS id, * FROM $other_steps WHERE dur > 0)
    ),
    (utid)
  ) AS ii
  JOIN chrome_input_pipeline_steps AS u ON u.slice_id = ii.id_0
  JOIN chrome_input_pipeline_steps AS o ON o.slice_id = ii.id_1
  WHERE ii.ts = u.ts AND ii.dur = u.dur
);

CREATE PERFETTO TABLE chrome_touch_move_to_scroll_update(
  touch_move_latency_id LONG,
  scroll_update_latency_id LONG
)
AS
WITH
  by_handled AS MATERIALIZED (
    SELECT *
    FROM _zt_scroll_update_holders!((
      SELECT * FROM chrome_input_pipeline_steps WHERE step = 'STEP_TOUCH_EVENT_HANDLED'
    ))
  ),
  by_sent AS MATERIALIZED (
    SELECT *
    FROM _zt_scroll_update_holders!((
      SELECT *
      FROM chrome_input_pipeline_steps
      WHERE step = 'STEP_SEND_INPUT_EVENT_UI' AND input_type = 'TOUCH_MOVE_EVENT'
    ))
  ),
  updates AS (
    SELECT scroll_update_latency_id FROM by_handled
    UNION
    SELECT scroll_update_latency_id FROM by_sent
  )
SELECT
  coalesce(h.touch_move_latency_id, f.touch_move_latency_id) AS touch_move_latency_id,
  u.scroll_update_latency_id
FROM updates AS u
LEFT JOIN by_handled AS h USING (scroll_update_latency_id)
LEFT JOIN by_sent AS f USING (scroll_update_latency_id);

CREATE PERFETTO TABLE chrome_dispatch_android_input_event_to_touch_move(
  android_input_id STRING,
  touch_move_latency_id LONG
)
AS
SELECT d.android_input_id, p.latency_id AS touch_move_latency_id
FROM chrome_deliver_android_input_event AS d
JOIN chrome_input_pipeline_steps AS p USING (utid)
WHERE p.input_type = 'TOUCH_MOVE_EVENT'
  AND p.step = 'STEP_SEND_INPUT_EVENT_UI'
  AND d.ts <= p.ts
  AND d.ts + d.dur >= p.ts + p.dur;

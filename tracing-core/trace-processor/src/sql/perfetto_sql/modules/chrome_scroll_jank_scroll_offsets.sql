-- Written for zerotrace: the `chrome.scroll_jank.scroll_offsets` module,
-- how far a scroll moved, from the typed `scroll_deltas` field.
-- `chrome_scroll_input_deltas`: each scroll update's input deltas (its
-- `TranslateAndScaleWebInputEvent` slice); `chrome_scroll_input_offsets`:
-- those of the updates of `chrome_gesture_scroll_updates`
-- (`chrome.event_latency`) with the running sum of the vertical delta
-- within each scroll. `chrome_scroll_presented_deltas`: the deltas the
-- compositor was given and the visual offsets
-- (`InputHandlerProxy::HandleGestureScrollUpdate_Result`);
-- `chrome_presented_scroll_offsets`: per presentation time, its first
-- update, the vertical delta of all updates presented then and the running
-- offset within the scroll (updates presented together counted together).

INCLUDE PERFETTO MODULE chrome.event_latency;

CREATE PERFETTO TABLE chrome_scroll_input_deltas(
  scroll_update_id LONG,
  delta_x DOUBLE,
  delta_y DOUBLE
)
AS
SELECT
  extract_arg(arg_set_id, 'scroll_deltas.trace_id') AS scroll_update_id,
  extract_arg(arg_set_id, 'scroll_deltas.original_delta_x') AS delta_x,
  extract_arg(arg_set_id, 'scroll_deltas.original_delta_y') AS delta_y
FROM slice
WHERE name = 'TranslateAndScaleWebInputEvent';

CREATE PERFETTO TABLE chrome_scroll_input_offsets(
  scroll_update_id LONG,
  scroll_id LONG,
  ts TIMESTAMP,
  delta_y DOUBLE,
  relative_offset_y DOUBLE
)
AS
SELECT
  d.scroll_update_id,
  u.scroll_id,
  u.ts,
  d.delta_y,
  sum(d.delta_y) OVER (
    PARTITION BY u.scroll_id
    ORDER BY u.ts
    ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
  ) AS relative_offset_y
FROM chrome_scroll_input_deltas AS d
JOIN chrome_gesture_scroll_updates AS u USING (scroll_update_id);

CREATE PERFETTO TABLE chrome_scroll_presented_deltas(
  scroll_update_id LONG,
  delta_x DOUBLE,
  delta_y DOUBLE,
  offset_x LONG,
  offset_y LONG
)
AS
SELECT
  extract_arg(arg_set_id, 'scroll_deltas.trace_id') AS scroll_update_id,
  extract_arg(arg_set_id, 'scroll_deltas.provided_to_compositor_delta_x') AS delta_x,
  extract_arg(arg_set_id, 'scroll_deltas.provided_to_compositor_delta_y') AS delta_y,
  extract_arg(arg_set_id, 'scroll_deltas.visual_offset_x') AS offset_x,
  extract_arg(arg_set_id, 'scroll_deltas.visual_offset_y') AS offset_y
FROM slice
WHERE name = 'InputHandlerProxy::HandleGestureScrollUpdate_Result';

CREATE PERFETTO TABLE chrome_presented_scroll_offsets(
  scroll_update_id LONG,
  scroll_id LONG,
  ts TIMESTAMP,
  delta_y DOUBLE,
  relative_offset_y DOUBLE
)
AS
WITH presented AS (
  SELECT
    d.scroll_update_id,
    u.scroll_id,
    u.presentation_timestamp AS ts,
    sum(d.delta_y) OVER (PARTITION BY u.presentation_timestamp) AS delta_y,
    sum(d.delta_y) OVER (
      PARTITION BY u.scroll_id
      ORDER BY u.presentation_timestamp
      GROUPS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
    ) AS relative_offset_y,
    row_number() OVER (PARTITION BY u.presentation_timestamp ORDER BY u.ts) AS nth
  FROM chrome_scroll_presented_deltas AS d
  JOIN chrome_gesture_scroll_updates AS u USING (scroll_update_id)
)
SELECT scroll_update_id, scroll_id, ts, delta_y, relative_offset_y
FROM presented
WHERE nth = 1;

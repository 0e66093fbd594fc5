-- Written for zerotrace: the `chrome.scroll_jank.utils` module, helpers of
-- Chrome's scroll jank analysis.
-- `_is_janky_frame(…)`: whether a frame took more than half a VSync (and
-- 1e-9) longer than a neighbouring frame of the same gesture that lies
-- within the gesture (false when the neighbour is missing or elsewhere).
-- `_jank_budget(cur, prev, next)`: how far the frame's length passes the
-- longer of its neighbours' plus half a VSync (and 1e-9), with whichever
-- neighbour exists.
-- `chrome_select_long_task_slices(name)`: the slices named `name` of a
-- `scheduler.long_tasks` category, with the Mojo interface, IPC hash and
-- whether the message was a reply (from `chrome_mojo_event_info`).

CREATE PERFETTO FUNCTION _is_janky_frame(
  cur_gesture_id LONG,
  neighbour_gesture_id LONG,
  neighbour_ts TIMESTAMP,
  cur_gesture_begin_ts TIMESTAMP,
  cur_gesture_end_ts TIMESTAMP,
  cur_frame_exact DOUBLE,
  neighbour_frame_exact DOUBLE
)
RETURNS BOOL
AS
SELECT iif(
  $cur_gesture_id != $neighbour_gesture_id
    OR $neighbour_ts IS NULL
    OR $neighbour_ts < $cur_gesture_begin_ts
    OR $neighbour_ts > $cur_gesture_end_ts,
  FALSE,
  $cur_frame_exact > $neighbour_frame_exact + 0.5 + 1e-9
);

CREATE PERFETTO FUNCTION _jank_budget(
  cur_frame_exact DOUBLE,
  prev_frame_exact DOUBLE,
  next_frame_exact DOUBLE
)
RETURNS DOUBLE
AS
SELECT coalesce(
  max($cur_frame_exact - $prev_frame_exact, $cur_frame_exact - $next_frame_exact),
  $cur_frame_exact - $prev_frame_exact,
  $cur_frame_exact - $next_frame_exact
) - 0.5 - 1e-9;

CREATE PERFETTO FUNCTION chrome_select_long_task_slices(name STRING)
RETURNS TABLE(
  interface_name STRING,
  ipc_hash LONG,
  message_type STRING,
  id LONG
)
AS
SELECT
  extract_arg(s.arg_set_id, 'chrome_mojo_event_info.mojo_interface_tag') AS interface_name,
  extract_arg(s.arg_set_id, 'chrome_mojo_event_info.ipc_hash') AS ipc_hash,
  iif(extract_arg(s.arg_set_id, 'chrome_mojo_event_info.is_reply'), 'reply', 'message')
    AS message_type,
  s.id
FROM slice AS s
WHERE s.category GLOB '*scheduler.long_tasks*' AND s.name = $name;

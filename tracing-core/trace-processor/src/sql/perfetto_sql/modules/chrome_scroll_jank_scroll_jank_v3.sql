-- Written for zerotrace: the `chrome.scroll_jank.scroll_jank_v3` module,
-- Chrome's third scroll jank metric over the scroll updates of
-- `chrome.event_latency`.
-- `chrome_presented_gesture_scrolls`: the presented scroll updates, each
-- with the start of the last input folded into it (an update goes to the
-- latest presented update starting at or before it).
-- `chrome_scroll_updates_with_deltas`: each update's vertical delta given
-- to the compositor. `chrome_full_frame_view` and
-- `chrome_full_frame_delta_view`: the presented scroll (and pinch) frames,
-- with their deltas. `chrome_merged_frame_view`: one row per presentation
-- time, named by its first input (`id`, scroll and update ids, event
-- latency), with the first input's and last folded input's starts, the
-- inputs' update ids and deltas listed and summed and the longest input.
-- `chrome_frame_info_with_delay`: each with the time (ms) since the
-- scroll's previous frame was presented and since its last input began,
-- and the previous frame's EventLatency (-1 for none).
-- `chrome_vsyncs`: the VSync interval, the least the frames' EventLatency
-- slices give, else the least positive delay between frames.
-- `chrome_janky_frames_no_cause`: the frames presented more than 1.5 VSyncs
-- after the previous though their input came less than 1.5 VSyncs after;
-- `chrome_janky_frames_no_subcause` with the stage that grew most against
-- the previous frame (`chrome.scroll_jank.scroll_jank_v3_cause`);
-- `chrome_janky_frames` with that stage's and its child's names and the
-- device's hardware class.
-- `chrome_unique_frame_presentation_ts`, `chrome_janky_frames_percentage`
-- and `chrome_frames_per_scroll`: the share of janky frames overall and
-- per scroll.

INCLUDE PERFETTO MODULE chrome.metadata;
INCLUDE PERFETTO MODULE chrome.scroll_jank.scroll_jank_v3_cause;
INCLUDE PERFETTO MODULE chrome.event_latency;

-- The name of slice `id`.
CREATE PERFETTO FUNCTION _slice_name_from_id(id LONG)
RETURNS STRING
AS
SELECT name FROM slice WHERE id = $id;

-- The presented scroll updates by start.
CREATE PERFETTO TABLE _presented_gesture_scrolls AS
SELECT id, ts, dur, scroll_update_id, scroll_id, presentation_timestamp, event_type
FROM chrome_gesture_scroll_updates
WHERE is_presented
ORDER BY ts;

CREATE PERFETTO TABLE chrome_presented_gesture_scrolls(
  id LONG,
  ts TIMESTAMP,
  dur DURATION,
  last_presented_input_ts TIMESTAMP,
  scroll_update_id LONG,
  scroll_id LONG,
  presentation_timestamp LONG,
  event_type STRING
)
AS
WITH folded AS MATERIALIZED (
  SELECT
    u.ts,
    (
      SELECT p.id
      FROM _presented_gesture_scrolls AS p
      WHERE p.ts <= u.ts
      ORDER BY p.ts DESC
      LIMIT 1
    ) AS presented_id
  FROM chrome_gesture_scroll_updates AS u
)
SELECT
  p.id,
  p.ts,
  p.dur,
  (SELECT max(f.ts) FROM folded AS f WHERE f.presented_id = p.id) AS last_presented_input_ts,
  p.scroll_update_id,
  p.scroll_id,
  p.presentation_timestamp,
  p.event_type
FROM _presented_gesture_scrolls AS p;

CREATE PERFETTO TABLE chrome_scroll_updates_with_deltas(
  scroll_update_id LONG,
  delta_y DOUBLE
)
AS
SELECT
  extract_arg(arg_set_id, 'scroll_deltas.trace_id') AS scroll_update_id,
  extract_arg(arg_set_id, 'scroll_deltas.provided_to_compositor_delta_y') AS delta_y
FROM slice
WHERE name = 'InputHandlerProxy::HandleGestureScrollUpdate_Result';

CREATE PERFETTO TABLE chrome_full_frame_view(
  id LONG,
  ts TIMESTAMP,
  last_presented_input_ts TIMESTAMP,
  scroll_id LONG,
  scroll_update_id LONG,
  event_latency_id LONG,
  dur DURATION,
  presentation_timestamp LONG
)
AS
SELECT
  id,
  ts,
  last_presented_input_ts,
  scroll_id,
  scroll_update_id,
  id AS event_latency_id,
  dur,
  presentation_timestamp
FROM chrome_presented_gesture_scrolls
WHERE event_type IN (
    'GESTURE_SCROLL_UPDATE',
    'FIRST_GESTURE_SCROLL_UPDATE',
    'INERTIAL_GESTURE_SCROLL_UPDATE',
    'GESTURE_PINCH_UPDATE'
  )
  AND presentation_timestamp IS NOT NULL;

CREATE PERFETTO TABLE chrome_full_frame_delta_view(
  id LONG,
  ts TIMESTAMP,
  scroll_id LONG,
  scroll_update_id LONG,
  last_presented_input_ts TIMESTAMP,
  delta_y DOUBLE,
  event_latency_id LONG,
  dur DURATION,
  presentation_timestamp LONG
)
AS
SELECT
  f.id,
  f.ts,
  f.scroll_id,
  f.scroll_update_id,
  f.last_presented_input_ts,
  d.delta_y,
  f.event_latency_id,
  f.dur,
  f.presentation_timestamp
FROM chrome_full_frame_view AS f
LEFT JOIN chrome_scroll_updates_with_deltas AS d ON d.scroll_update_id = f.scroll_update_id;

CREATE PERFETTO TABLE chrome_merged_frame_view(
  id LONG,
  max_start_ts TIMESTAMP,
  min_start_ts TIMESTAMP,
  scroll_id LONG,
  scroll_update_id LONG,
  encapsulated_scroll_ids STRING,
  total_delta DOUBLE,
  segregated_delta_y STRING,
  event_latency_id LONG,
  dur DURATION,
  presentation_timestamp LONG
)
AS
WITH
  ordered AS (
    SELECT * FROM chrome_full_frame_delta_view ORDER BY presentation_timestamp, ts
  ),
  merged AS (
    SELECT
      presentation_timestamp,
      max(last_presented_input_ts) AS max_start_ts,
      min(ts) AS min_start_ts,
      group_concat(scroll_update_id, ',') AS encapsulated_scroll_ids,
      sum(delta_y) AS total_delta,
      group_concat(delta_y, ',') AS segregated_delta_y,
      max(dur) AS dur
    FROM ordered
    GROUP BY presentation_timestamp
  ),
  firsts AS (
    SELECT
      *,
      row_number() OVER (PARTITION BY presentation_timestamp ORDER BY ts, id) AS nth
    FROM chrome_full_frame_delta_view
  )
SELECT
  f.id,
  m.max_start_ts,
  m.min_start_ts,
  f.scroll_id,
  f.scroll_update_id,
  m.encapsulated_scroll_ids,
  m.total_delta,
  m.segregated_delta_y,
  f.event_latency_id,
  m.dur,
  m.presentation_timestamp
FROM merged AS m
JOIN firsts AS f ON f.presentation_timestamp = m.presentation_timestamp AND f.nth = 1
ORDER BY m.presentation_timestamp;

CREATE PERFETTO TABLE chrome_frame_info_with_delay(
  id LONG,
  max_start_ts TIMESTAMP,
  min_start_ts TIMESTAMP,
  scroll_id LONG,
  scroll_update_id LONG,
  encapsulated_scroll_ids STRING,
  total_delta DOUBLE,
  segregated_delta_y STRING,
  event_latency_id LONG,
  dur DURATION,
  presentation_timestamp LONG,
  delay_since_last_frame DOUBLE,
  delay_since_last_input DOUBLE,
  prev_event_latency_id LONG
)
AS
SELECT
  *,
  (
    presentation_timestamp
    - lag(presentation_timestamp, 1, presentation_timestamp) OVER (
      PARTITION BY scroll_id ORDER BY presentation_timestamp
    )
  ) / 1e6 AS delay_since_last_frame,
  (
    min_start_ts
    - lag(max_start_ts, 1, min_start_ts) OVER (PARTITION BY scroll_id ORDER BY min_start_ts)
  ) / 1e6 AS delay_since_last_input,
  lag(event_latency_id, 1, -1) OVER (PARTITION BY scroll_id ORDER BY min_start_ts)
    AS prev_event_latency_id
FROM chrome_merged_frame_view;

CREATE PERFETTO TABLE chrome_vsyncs(
  vsync_interval DOUBLE
)
AS
SELECT coalesce(
  (
    SELECT min(extract_arg(s.arg_set_id, 'event_latency.vsync_interval_ms'))
    FROM slice AS s
    JOIN chrome_frame_info_with_delay AS f ON f.event_latency_id = s.id
    WHERE extract_arg(s.arg_set_id, 'event_latency.vsync_interval_ms') > 0
  ),
  min(delay_since_last_frame)
) AS vsync_interval
FROM chrome_frame_info_with_delay
WHERE delay_since_last_frame > 0;

CREATE PERFETTO TABLE chrome_janky_frames_no_cause(
  delay_since_last_frame DOUBLE,
  event_latency_id LONG,
  vsync_interval DOUBLE,
  hardware_class STRING,
  scroll_id LONG,
  prev_event_latency_id LONG
)
AS
SELECT
  f.delay_since_last_frame,
  f.event_latency_id,
  v.vsync_interval,
  chrome_hardware_class() AS hardware_class,
  f.scroll_id,
  f.prev_event_latency_id
FROM chrome_frame_info_with_delay AS f, chrome_vsyncs AS v
WHERE f.delay_since_last_frame > v.vsync_interval * 1.5
  AND f.delay_since_last_input < v.vsync_interval * 1.5;

CREATE PERFETTO TABLE chrome_janky_frames_no_subcause(
  delay_since_last_frame DOUBLE,
  event_latency_id LONG,
  vsync_interval DOUBLE,
  hardware_class STRING,
  scroll_id LONG,
  prev_event_latency_id LONG,
  cause_id LONG
)
AS
SELECT
  *,
  chrome_get_v3_jank_cause_id(event_latency_id, prev_event_latency_id) AS cause_id
FROM chrome_janky_frames_no_cause;

CREATE PERFETTO TABLE chrome_janky_frames(
  cause_of_jank STRING,
  sub_cause_of_jank STRING,
  delay_since_last_frame DOUBLE,
  event_latency_id LONG,
  vsync_interval DOUBLE,
  hardware_class STRING,
  scroll_id LONG
)
AS
SELECT
  _slice_name_from_id(j.cause_id) AS cause_of_jank,
  _slice_name_from_id(
    chrome_get_v3_jank_cause_id(
      j.cause_id,
      (
        SELECT p.id
        FROM slice AS p
        WHERE p.name = _slice_name_from_id(j.cause_id) AND p.parent_id = j.prev_event_latency_id
      )
    )
  ) AS sub_cause_of_jank,
  j.delay_since_last_frame,
  j.event_latency_id,
  j.vsync_interval,
  j.hardware_class,
  j.scroll_id
FROM chrome_janky_frames_no_subcause AS j;

CREATE PERFETTO TABLE chrome_unique_frame_presentation_ts(
  presentation_timestamp LONG
)
AS
SELECT DISTINCT presentation_timestamp FROM chrome_presented_gesture_scrolls;

CREATE PERFETTO TABLE chrome_janky_frames_percentage(
  delayed_frame_percentage DOUBLE
)
AS
SELECT
  (SELECT count() FROM chrome_janky_frames) * 1.0
  / (SELECT count() FROM chrome_unique_frame_presentation_ts) * 100 AS delayed_frame_percentage;

CREATE PERFETTO TABLE chrome_frames_per_scroll(
  scroll_id LONG,
  num_frames LONG,
  num_janky_frames LONG,
  scroll_jank_percentage DOUBLE
)
AS
WITH
  frames AS (
    SELECT scroll_id, count(*) AS num_frames
    FROM chrome_frame_info_with_delay
    GROUP BY scroll_id
  ),
  janky AS (
    SELECT scroll_id, count(*) AS num_janky_frames
    FROM chrome_janky_frames
    GROUP BY scroll_id
  )
SELECT
  f.scroll_id,
  f.num_frames,
  j.num_janky_frames,
  100.0 * j.num_janky_frames / f.num_frames AS scroll_jank_percentage
FROM frames AS f
LEFT JOIN janky AS j USING (scroll_id);

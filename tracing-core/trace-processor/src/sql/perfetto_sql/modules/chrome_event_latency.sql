-- Written for zerotrace: the `chrome.event_latency` module.
-- `chrome_event_latencies`: Chrome's `EventLatency` slices, one per input
-- event, with the typed `event_latency` fields (event type, ids of the
-- scroll update and of the surface and display frames, VSync interval,
-- jank) and, from the stage slices below it (the first match of each in
-- `descendant_slice` order), when the buffer became available and ready,
-- when it was latched and swapped, and when the frame was presented
-- (the end of `SwapEndToPresentationCompositorFrame`, else of any
-- `*ToPresentation`, else of `LatchToSwapEnd`); presented means it has a
-- `Submit*ToPresentationCompositorFrame` stage.
-- `chrome_gesture_scroll_updates`: those of scroll updates (and presented
-- pinch updates), each with the number of its scroll: a scroll starts at
-- each `FIRST_GESTURE_SCROLL_UPDATE` and at the first update.

-- The start of the first descendant of `parent_id` matching `child_name`.
CREATE PERFETTO FUNCTION _descendant_slice_begin(parent_id LONG, child_name STRING)
RETURNS LONG
AS
SELECT d.ts FROM descendant_slice($parent_id) AS d WHERE d.name GLOB $child_name LIMIT 1;

-- The end of the first descendant of `parent_id` matching `child_name`
-- (NULL when it has not ended).
CREATE PERFETTO FUNCTION _descendant_slice_end(parent_id LONG, child_name STRING)
RETURNS LONG
AS
SELECT iif(d.dur = -1, NULL, d.ts + d.dur)
FROM descendant_slice($parent_id) AS d
WHERE d.name GLOB $child_name
LIMIT 1;

-- Whether `id` has a descendant matching `descendant_name`.
CREATE PERFETTO FUNCTION _has_descendant_slice_with_name(id LONG, descendant_name STRING)
RETURNS BOOL
AS
SELECT EXISTS(
  SELECT 1 FROM descendant_slice($id) AS d WHERE d.name GLOB $descendant_name
);

-- When the frame of EventLatency slice `id` was presented.
CREATE PERFETTO FUNCTION _get_presentation_timestamp(id LONG)
RETURNS LONG
AS
SELECT coalesce(
  _descendant_slice_end($id, 'SwapEndToPresentationCompositorFrame'),
  _descendant_slice_end($id, '*ToPresentation'),
  _descendant_slice_end($id, 'LatchToSwapEnd')
)
WHERE EXISTS (SELECT 1 FROM slice WHERE slice.id = $id);

CREATE PERFETTO TABLE chrome_event_latencies(
  id LONG,
  name STRING,
  ts TIMESTAMP,
  dur DURATION,
  scroll_update_id LONG,
  surface_frame_trace_id LONG,
  display_trace_id LONG,
  is_presented BOOL,
  event_type STRING,
  track_id LONG,
  vsync_interval_ms DOUBLE,
  is_janky_scrolled_frame BOOL,
  buffer_available_timestamp LONG,
  buffer_ready_timestamp LONG,
  latch_timestamp LONG,
  swap_end_timestamp LONG,
  presentation_timestamp LONG
)
AS
SELECT
  s.id,
  s.name,
  s.ts,
  s.dur,
  extract_arg(s.arg_set_id, 'event_latency.event_latency_id') AS scroll_update_id,
  extract_arg(s.arg_set_id, 'event_latency.surface_frame_trace_id') AS surface_frame_trace_id,
  extract_arg(s.arg_set_id, 'event_latency.display_trace_id') AS display_trace_id,
  _has_descendant_slice_with_name(s.id, 'Submit*ToPresentationCompositorFrame') AS is_presented,
  extract_arg(s.arg_set_id, 'event_latency.event_type') AS event_type,
  s.track_id,
  extract_arg(s.arg_set_id, 'event_latency.vsync_interval_ms') AS vsync_interval_ms,
  coalesce(extract_arg(s.arg_set_id, 'event_latency.is_janky_scrolled_frame'), 0)
    AS is_janky_scrolled_frame,
  _descendant_slice_begin(s.id, 'BufferAvailableToBufferReady') AS buffer_available_timestamp,
  _descendant_slice_begin(s.id, 'BufferReadyToLatch') AS buffer_ready_timestamp,
  coalesce(
    _descendant_slice_begin(s.id, 'LatchToSwapEnd'),
    _descendant_slice_begin(s.id, 'LatchToPresentation')
  ) AS latch_timestamp,
  _descendant_slice_begin(s.id, 'SwapEndToPresentationCompositorFrame') AS swap_end_timestamp,
  _get_presentation_timestamp(s.id) AS presentation_timestamp
FROM slice AS s
WHERE s.name = 'EventLatency';

CREATE PERFETTO TABLE chrome_gesture_scroll_updates(
  id LONG,
  name STRING,
  ts TIMESTAMP,
  dur DURATION,
  scroll_update_id LONG,
  is_presented BOOL,
  event_type STRING,
  track_id LONG,
  vsync_interval_ms DOUBLE,
  is_janky BOOL,
  buffer_available_timestamp LONG,
  buffer_ready_timestamp LONG,
  latch_timestamp LONG,
  swap_end_timestamp LONG,
  presentation_timestamp LONG,
  scroll_id LONG
)
AS
WITH updates AS (
  SELECT
    *,
    event_type = 'FIRST_GESTURE_SCROLL_UPDATE' OR row_number() OVER (ORDER BY ts) = 1
      AS starts_scroll
  FROM chrome_event_latencies
  WHERE event_type IN (
      'GESTURE_SCROLL_UPDATE',
      'FIRST_GESTURE_SCROLL_UPDATE',
      'INERTIAL_GESTURE_SCROLL_UPDATE'
    )
    OR (event_type GLOB '*GESTURE_PINCH_UPDATE' AND is_presented)
)
SELECT
  id,
  name,
  ts,
  dur,
  scroll_update_id,
  is_presented,
  event_type,
  track_id,
  vsync_interval_ms,
  is_janky_scrolled_frame AS is_janky,
  buffer_available_timestamp,
  buffer_ready_timestamp,
  latch_timestamp,
  swap_end_timestamp,
  presentation_timestamp,
  coalesce(
    sum(cast_int!(starts_scroll)) OVER (
      ORDER BY ts ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
    ),
    0
  ) AS scroll_id
FROM updates;

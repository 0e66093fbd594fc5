-- android.frames.per_frame_metrics, written for zerotrace: per frame (by
-- frame id) how late it presented against its expected timeline
-- (overrun), how long its UI thread worked, how long after its expected
-- start the app began it (vsync delay), and its CPU time (vsync delay,
-- doFrame and DrawFrames), estimated from the UI time when the frame
-- timeline lacks it; and the jank flags derived from those.

INCLUDE PERFETTO MODULE time.conversion;
INCLUDE PERFETTO MODULE android.frames.timeline;

-- Per frame id, its first actual timeline slice, its span and how many
-- actual slices it has.
CREATE PERFETTO TABLE _frame_id_count_in_actual_timeline AS
SELECT
  cast_int!(name) AS frame_id,
  min(id) AS id,
  min(ts) AS ts,
  max(dur) AS dur,
  max(ts + dur) AS ts_end,
  count() AS count
FROM actual_frame_timeline_slice
GROUP BY frame_id;

-- Per frame id, an expected timeline slice and how many it has.
CREATE PERFETTO TABLE _frame_id_count_in_expected_timeline AS
SELECT cast_int!(name) AS frame_id, id, count() AS count
FROM expected_frame_timeline_slice
GROUP BY frame_id;

-- How much later than expected each frame ended.
CREATE PERFETTO TABLE android_frames_overrun(
  -- The frame id.
  frame_id LONG,
  -- Actual end minus expected end (negative: early).
  overrun LONG
)
AS
SELECT
  a.frame_id,
  (asl.ts + asl.dur) - (esl.ts + esl.dur) AS overrun
FROM _frame_id_count_in_actual_timeline AS a
JOIN _frame_id_count_in_expected_timeline AS e ON e.frame_id = a.frame_id
JOIN slice AS asl ON asl.id = a.id
JOIN slice AS esl ON esl.id = e.id;

-- How long each frame's doFrame took on the UI thread.
CREATE PERFETTO TABLE android_frames_ui_time(
  -- The frame id.
  frame_id LONG,
  -- The doFrame slice's duration.
  ui_time LONG
)
AS
SELECT f.frame_id, s.dur AS ui_time
FROM android_frames_choreographer_do_frame AS f
JOIN slice AS s ON s.id = f.id;

-- How long after its expected start each frame's actual timeline began.
CREATE PERFETTO TABLE android_app_vsync_delay_per_frame(
  -- The frame id.
  frame_id LONG,
  -- Actual start minus expected start.
  app_vsync_delay LONG
)
AS
WITH
  one_per_frame AS (
    SELECT frame_id, do_frame_id, actual_frame_timeline_id, expected_frame_timeline_id
    FROM android_frames
    GROUP BY frame_id
  )
SELECT f.frame_id, act.ts - ex.ts AS app_vsync_delay
FROM one_per_frame AS f
JOIN slice AS ex ON ex.id = f.expected_frame_timeline_id
JOIN slice AS act ON act.id = f.actual_frame_timeline_id;

-- Each frame's CPU time: its vsync delay, its doFrame and its DrawFrames.
CREATE PERFETTO TABLE android_cpu_time_per_frame(
  -- The frame id.
  frame_id LONG,
  -- Actual start minus expected start.
  app_vsync_delay LONG,
  -- The doFrame slice's duration.
  do_frame_dur DURATION,
  -- The DrawFrame slices' durations, summed.
  draw_frame_dur DURATION,
  -- The three summed.
  cpu_time LONG
)
AS
WITH
  draws AS (
    SELECT d.frame_id, sum(s.dur) AS draw_frame_dur
    FROM android_frames_draw_frame AS d
    JOIN slice AS s ON s.id = d.id
    GROUP BY d.frame_id
  ),
  one_per_frame AS (
    SELECT frame_id, do_frame_id, actual_frame_timeline_id
    FROM android_frames
    GROUP BY frame_id
  )
SELECT
  v.frame_id,
  v.app_vsync_delay,
  df.dur AS do_frame_dur,
  draws.draw_frame_dur,
  v.app_vsync_delay + df.dur + draws.draw_frame_dur AS cpu_time
FROM android_app_vsync_delay_per_frame AS v
JOIN draws ON draws.frame_id = v.frame_id
JOIN one_per_frame AS f ON f.frame_id = v.frame_id
JOIN slice AS df ON df.id = f.do_frame_id;

-- The CPU time estimated from the UI time alone (plus 5 ms).
CREATE PERFETTO TABLE _cpu_time_per_frame_fallback(
  frame_id LONG,
  estimated_cpu_time LONG
)
AS
SELECT frame_id, ui_time + time_from_ms(5) AS estimated_cpu_time
FROM android_frames_ui_time;

-- The CPU time of each frame, measured when it can be, else estimated.
CREATE PERFETTO TABLE _estimated_cpu_time_per_frame(
  frame_id LONG,
  cpu_time LONG
)
AS
SELECT
  f.frame_id,
  coalesce(m.cpu_time, f.estimated_cpu_time) AS cpu_time
FROM _cpu_time_per_frame_fallback AS f
LEFT JOIN android_cpu_time_per_frame AS m ON m.frame_id = f.frame_id;

-- Per frame: overrun, CPU and UI time, and whether it was janky (late),
-- slow (over 20 ms of CPU), a big jank (over 50 ms) or a huge one (over
-- 200 ms); a flag is 1 or NULL.
CREATE PERFETTO TABLE android_frame_stats(
  -- The frame id.
  frame_id LONG,
  -- Actual end minus expected end.
  overrun LONG,
  -- CPU time.
  cpu_time LONG,
  -- UI thread time.
  ui_time LONG,
  -- Presented late.
  was_jank BOOL,
  -- Over 20 ms of CPU.
  was_slow_frame BOOL,
  -- Over 50 ms of CPU.
  was_big_jank BOOL,
  -- Over 200 ms of CPU.
  was_huge_jank BOOL
)
AS
SELECT
  o.frame_id,
  o.overrun,
  c.cpu_time,
  u.ui_time,
  iif(o.overrun > 0, 1, NULL) AS was_jank,
  iif(c.cpu_time > time_from_ms(20), 1, NULL) AS was_slow_frame,
  iif(c.cpu_time > time_from_ms(50), 1, NULL) AS was_big_jank,
  iif(c.cpu_time > time_from_ms(200), 1, NULL) AS was_huge_jank
FROM android_frames_overrun AS o
JOIN android_frames_ui_time AS u ON u.frame_id = o.frame_id
JOIN _estimated_cpu_time_per_frame AS c ON c.frame_id = o.frame_id;

-- Written for zerotrace: the `android.startup.time_to_display` module.
-- `android_startup_time_to_display`: for each app startup
-- (`android.startup.startups`), its time to initial display (TTID: from
-- the startup's start to the end of the `DrawFrame` of the first frame of
-- its process starting at or after it) and to full display (TTFD: from
-- the startup's start to the end of the `DrawFrame` of the first frame on
-- the main thread that had called `reportFullyDrawn…` at or after the
-- startup, among the frames still running when that call began), with
-- those frames' ids (`android.frames.timeline`) and the startup's process:
-- the one `android_startup_processes` gives, else a process named as the
-- startup's package (GLOB). NULL where a frame is missing.

INCLUDE PERFETTO MODULE android.startup.startups;
INCLUDE PERFETTO MODULE android.frames.timeline;
INCLUDE PERFETTO MODULE slices.with_context;

-- Each startup with its process.
CREATE PERFETTO VIEW _startups_with_upid AS
WITH
  by_startup AS (
    SELECT s.*, p.upid
    FROM android_startups AS s
    LEFT JOIN android_startup_processes AS p USING (startup_id)
  ),
  by_name AS (
    SELECT s.startup_id, p.upid
    FROM android_startups AS s
    JOIN process AS p ON p.name GLOB s.package
  )
SELECT
  b.startup_id,
  b.ts,
  b.ts_end,
  b.dur,
  b.package,
  b.startup_type,
  coalesce(b.upid, n.upid) AS upid
FROM by_startup AS b
LEFT JOIN by_name AS n ON b.upid IS NULL AND n.startup_id = b.startup_id;

-- Each startup's first frame and its time to initial display.
CREATE PERFETTO TABLE _ttid AS
WITH first_frame AS (
  SELECT
    s.startup_id,
    f.frame_id,
    s.ts AS startup_ts,
    f.draw_frame_id,
    s.upid,
    min(f.ts) AS frame_ts
  FROM _startups_with_upid AS s
  JOIN android_frames AS f ON f.upid = s.upid AND f.ts >= s.ts
  JOIN thread AS t ON t.utid = f.ui_thread_utid
  GROUP BY s.startup_id
)
SELECT
  ff.startup_id,
  ff.frame_id,
  ff.draw_frame_id,
  d.ts + d.dur - ff.startup_ts AS ttid,
  ff.upid
FROM first_frame AS ff
JOIN slice AS d ON d.id = ff.draw_frame_id;

-- Each startup's first frame after its first `reportFullyDrawn`, and its
-- time to full display.
CREATE PERFETTO TABLE _ttfd AS
WITH
  first_report AS (
    SELECT
      s.startup_id,
      s.ts AS startup_ts,
      min(t.ts) AS report_ts,
      t.utid,
      s.upid
    FROM _startups_with_upid AS s
    JOIN thread_slice AS t ON t.upid = s.upid AND t.ts >= s.ts
    WHERE t.name GLOB 'reportFullyDrawn*' AND t.is_main_thread = 1
    GROUP BY s.startup_id
  ),
  first_frame AS (
    SELECT
      r.startup_id,
      f.frame_id,
      r.startup_ts,
      f.draw_frame_id,
      r.upid,
      min(f.ts) AS frame_ts
    FROM first_report AS r
    JOIN android_frames AS f
      ON f.ui_thread_utid = r.utid AND f.ts + f.dur > r.report_ts
    GROUP BY r.startup_id
  )
SELECT
  ff.startup_id,
  ff.frame_id,
  ff.draw_frame_id,
  d.ts + d.dur - ff.startup_ts AS ttfd,
  ff.upid
FROM first_frame AS ff
JOIN slice AS d ON d.id = ff.draw_frame_id;

CREATE PERFETTO TABLE android_startup_time_to_display(
  startup_id LONG,
  time_to_initial_display LONG,
  time_to_full_display LONG,
  ttid_frame_id LONG,
  ttfd_frame_id LONG,
  upid JOINID(process.id)
)
AS
SELECT
  s.startup_id,
  i.ttid AS time_to_initial_display,
  f.ttfd AS time_to_full_display,
  i.frame_id AS ttid_frame_id,
  f.frame_id AS ttfd_frame_id,
  i.upid
FROM android_startups AS s
LEFT JOIN _ttid AS i USING (startup_id)
LEFT JOIN _ttfd AS f USING (startup_id);

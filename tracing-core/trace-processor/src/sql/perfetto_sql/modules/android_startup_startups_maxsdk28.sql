-- android.startup.startups_maxsdk28, written for zerotrace: app startups
-- on Android 9 and older. Cold and warm startups are the `launching:`
-- slices; a hot startup is an `activityResume` on a main thread outside
-- all of them, ending with the first frame after it.
--   _startups_maxsdk28  (ts, ts_end, dur, package, startup_type)

INCLUDE PERFETTO MODULE android.frames.timeline;
INCLUDE PERFETTO MODULE android.startup.startup_events;
INCLUDE PERFETTO MODULE slices.with_context;

-- The startups by start time; startup_type is 'hot' for the resumes and
-- NULL (decided later) for the `launching:` slices.
CREATE PERFETTO TABLE _startups_maxsdk28 AS
WITH launches AS (
  SELECT ts, ts_end, package_name AS package, NULL AS startup_type
  FROM _startup_events
),
resumes AS (
  SELECT
    s.ts,
    f.ts + f.dur AS ts_end,
    coalesce(s.process_name, s.thread_name, 'unknown') AS package,
    'hot' AS startup_type
  FROM thread_slice AS s, android_first_frame_after(s.ts) AS f
  WHERE s.name = 'activityResume'
    AND s.is_main_thread
    AND NOT EXISTS (
      SELECT 1 FROM launches AS l WHERE s.ts BETWEEN l.ts AND l.ts_end
    )
),
all_startups AS (
  SELECT * FROM launches
  UNION ALL
  SELECT * FROM resumes
)
SELECT ts, ts_end, ts_end - ts AS dur, package, startup_type
FROM all_startups
ORDER BY ts;

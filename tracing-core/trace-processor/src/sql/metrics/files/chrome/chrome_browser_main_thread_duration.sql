-- Written for zerotrace: the v1 metric file
-- chrome/chrome_browser_main_thread_duration.sql. How long, in whole
-- milliseconds, Chrome's browser main thread has events: the span from
-- the first to the last slice start on its root track event track (the
-- longest, if several qualify); NULL when there is none.

SELECT RUN_METRIC('chrome/chrome_processes.sql');

CREATE OR REPLACE PERFETTO VIEW chrome_browser_main_thread_duration AS
WITH main_tracks AS (
  SELECT tt.id AS track_id
  FROM thread_track AS tt
  JOIN chrome_thread AS t USING (utid)
  JOIN chrome_process AS p ON p.upid = t.upid
  WHERE t.canonical_name IN ('CrProcessMain', 'CrBrowserMain')
    AND p.process_type = 'Browser'
    AND EXISTS (
      SELECT 1
      FROM track AS tr
      JOIN args AS a ON a.arg_set_id = tr.source_arg_set_id
      WHERE tr.id = tt.id AND a.key = 'is_root_in_scope' AND a.int_value = 1
    )
),
spans AS (
  SELECT (MAX(s.ts) - MIN(s.ts)) / 1000000 AS ms
  FROM slice AS s
  JOIN main_tracks AS m USING (track_id)
  GROUP BY s.track_id
)
SELECT MAX(ms) AS duration_ms FROM spans;

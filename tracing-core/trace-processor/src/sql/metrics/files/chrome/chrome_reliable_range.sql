-- Written for zerotrace: the v1 metric file chrome/chrome_reliable_range.sql.
-- From when on a Chrome trace's thread data can be trusted to be complete
-- (`chrome_reliable_range`: one row, its start, why, and the process or
-- thread that limits it):
-- - a thread whose track event sequence began with its first packet is
--   complete for the whole trace; any other thread from its first slice;
-- - only busy threads count: at least the median event count, and an
--   event rate (events per millisecond of the browser main thread's span)
--   in the top 5%;
-- - a process Chrome reported active but whose data starts late
--   (`experimental_missing_chrome_processes`) is complete from when its
--   data starts, or never; a Browser, Renderer or GPU process without a
--   main thread never is; nor is anything when the browser main thread has
--   no span;
-- - a range-of-interest packet's start, when the trace has one, wins.

-- The integer value of metadata entry `name`, NULL when there is none.
CREATE OR REPLACE PERFETTO FUNCTION _extract_int_metadata(name STRING)
RETURNS LONG AS
SELECT m.int_value FROM metadata AS m WHERE m.name = $name LIMIT 1;

SELECT RUN_METRIC('chrome/chrome_browser_main_thread_duration.sql');

-- Per thread: its slices on track event (descriptor) tracks, and their
-- rate per millisecond of the browser main thread's span (0 without one).
CREATE OR REPLACE PERFETTO VIEW chrome_event_stats_per_thread AS
SELECT
  COUNT(*) AS cnt,
  IFNULL(
    CAST(COUNT(*) AS DOUBLE)
      / (SELECT d.duration_ms FROM chrome_browser_main_thread_duration AS d),
    0
  ) AS rate,
  tt.utid
FROM slice AS s
JOIN thread_track AS tt ON tt.id = s.track_id
WHERE extract_arg(tt.source_arg_set_id, 'source') = 'descriptor'
GROUP BY tt.utid;

-- The event count at the 50th percentile of the threads (the count of the
-- thread at position floor(n * 50 / 100) in ascending order).
CREATE OR REPLACE PERFETTO VIEW chrome_event_cnt_cutoff AS
SELECT cnt
FROM (
  SELECT cnt, ROW_NUMBER() OVER (ORDER BY cnt) - 1 AS pos
  FROM chrome_event_stats_per_thread
)
WHERE pos = (SELECT COUNT(*) * 50 / 100 FROM chrome_event_stats_per_thread);

-- The event rate at the 95th percentile, picked the same way.
CREATE OR REPLACE PERFETTO VIEW chrome_event_rate_cutoff AS
SELECT rate
FROM (
  SELECT rate, ROW_NUMBER() OVER (ORDER BY rate) - 1 AS pos
  FROM chrome_event_stats_per_thread
)
WHERE pos = (SELECT COUNT(*) * 95 / 100 FROM chrome_event_stats_per_thread);

-- The busy threads: where their data starts, and whether their sequence
-- began with its first packet.
CREATE OR REPLACE PERFETTO VIEW chrome_reliable_range_per_thread AS
WITH busy AS (
  SELECT st.utid
  FROM chrome_event_stats_per_thread AS st
  WHERE st.cnt >= (SELECT c.cnt FROM chrome_event_cnt_cutoff AS c)
    AND st.rate >= (SELECT r.rate FROM chrome_event_rate_cutoff AS r)
)
SELECT
  tt.utid,
  MIN(s.ts) AS start,
  MAX(COALESCE(extract_arg(tt.source_arg_set_id, 'has_first_packet_on_sequence'), 0))
    AS has_first_packet_on_sequence
FROM slice AS s
JOIN thread_track AS tt ON tt.id = s.track_id
WHERE tt.utid IN (SELECT utid FROM busy)
GROUP BY tt.utid;

-- Browser, Renderer and GPU processes with no thread named like a main
-- thread (`is_main_thread` does not tell: a renderer's logical main
-- thread is not its first): their data is never complete.
CREATE OR REPLACE PERFETTO VIEW chrome_processes_with_missing_main AS
SELECT p.upid
FROM process AS p
WHERE extract_arg(p.arg_set_id, 'chrome.process_type') IN ('Browser', 'Renderer', 'Gpu')
  AND NOT EXISTS (
    SELECT 1 FROM thread AS t WHERE t.upid = p.upid AND t.name GLOB '*[Mm]ain*'
  );

-- The latest point from which no process lacks data: one row, with the
-- process that sets it (NULL when the browser main thread has no span).
CREATE OR REPLACE PERFETTO VIEW chrome_processes_data_loss_free_period AS
WITH limits AS (
  SELECT m.upid, m.reliable_from FROM experimental_missing_chrome_processes AS m
  UNION ALL
  SELECT w.upid, NULL FROM chrome_processes_with_missing_main AS w
  UNION ALL
  SELECT NULL, NULL
  WHERE (SELECT d.duration_ms FROM chrome_browser_main_thread_duration AS d) IS NULL
)
SELECT
  upid AS limiting_upid,
  COALESCE(reliable_from, (SELECT MAX(ts + dur) FROM slice)) AS start
FROM limits
ORDER BY start DESC, upid IS NOT NULL DESC, upid
LIMIT 1;

CREATE OR REPLACE PERFETTO VIEW chrome_reliable_range AS
WITH parts AS (
  -- The latest first slice among threads whose sequence did not start
  -- with its first packet (with that thread), and the data loss bound.
  SELECT
    COALESCE(MAX(pt.start), 0) AS thread_start,
    pt.utid AS limiting_utid,
    COALESCE((SELECT f.start FROM chrome_processes_data_loss_free_period AS f), 0)
      AS data_loss_free_start,
    (SELECT f.limiting_upid FROM chrome_processes_data_loss_free_period AS f)
      AS limiting_upid
  FROM chrome_reliable_range_per_thread AS pt
  WHERE pt.has_first_packet_on_sequence = 0
),
roi AS (
  SELECT _extract_int_metadata('range_of_interest_start_us') AS start_us
)
SELECT
  COALESCE(roi.start_us * 1000, MAX(thread_start, data_loss_free_start)) AS start,
  CASE
    WHEN roi.start_us IS NOT NULL THEN 'Range of interest packet'
    WHEN limiting_upid IN (SELECT upid FROM chrome_processes_with_missing_main)
      THEN 'Missing main thread for upid=' || limiting_upid
    WHEN thread_start >= data_loss_free_start
      THEN 'First slice for utid=' || limiting_utid
    ELSE 'Missing process data for upid=' || limiting_upid
  END AS reason,
  limiting_upid AS debug_limiting_upid,
  limiting_utid AS debug_limiting_utid
FROM parts, roi;

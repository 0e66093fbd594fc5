-- Written for zerotrace: the `android.memory.lmk` module:
-- `android_lmk_events`, the processes Android's low memory killer killed,
-- with the kill's OOM score and reason. Kills are read from the first
-- source the trace has, in this order: lmkd's `lmk,<pid>,<reason>,<score>`
-- instants on the `lowmemorykiller` process track, older lmkd's slices of
-- that name, else the `kill_one_process` counter (the killed pid as value;
-- its score from the process's OOM score intervals, no reason). Also
-- `_android_lmk_kill_reason_string(reason)`, lmkd's name for a reason.

INCLUDE PERFETTO MODULE android.oom_adjuster;

CREATE PERFETTO FUNCTION _android_lmk_kill_reason_string(kill_reason LONG)
RETURNS STRING AS
SELECT
  CASE
    WHEN $kill_reason = 0 THEN 'PRESSURE_AFTER_KILL'
    WHEN $kill_reason = 1 THEN 'NOT_RESPONDING'
    WHEN $kill_reason = 2 THEN 'LOW_SWAP_AND_THRASHING'
    WHEN $kill_reason = 3 THEN 'LOW_MEM_AND_SWAP'
    WHEN $kill_reason = 4 THEN 'LOW_MEM_AND_THRASHING'
    WHEN $kill_reason = 5 THEN 'DIRECT_RECL_AND_THRASHING'
    WHEN $kill_reason = 6 THEN 'LOW_MEM_AND_SWAP_UTIL'
    WHEN $kill_reason = 7 THEN 'LOW_FILECACHE_AFTER_THRASHING'
    WHEN $kill_reason = 8 THEN 'LOW_MEM'
    WHEN $kill_reason = 9 THEN 'DIRECT_RECL_STUCK'
    WHEN $kill_reason >= 1000 AND $kill_reason < 2000 THEN 'VENDOR_REASON'
    ELSE 'UNKNOWN'
  END;

-- The fields of an `lmk,<pid>,<reason>,<score>` slice name.
CREATE PERFETTO TABLE _lmk_instant_events AS
SELECT
  s.ts,
  cast(str_split(s.name, ',', 1) AS LONG) AS pid,
  cast(str_split(s.name, ',', 2) AS LONG) AS kill_reason_raw,
  cast(str_split(s.name, ',', 3) AS LONG) AS oom_score_adj
FROM slice AS s
JOIN process_track AS t ON t.id = s.track_id
WHERE t.name = 'lowmemorykiller' AND s.name GLOB 'lmk,*' AND s.dur = 0;

CREATE PERFETTO TABLE _legacy_lmk_events AS
SELECT
  s.ts,
  cast(str_split(s.name, ',', 1) AS LONG) AS pid,
  cast(str_split(s.name, ',', 2) AS LONG) AS kill_reason_raw,
  cast(str_split(s.name, ',', 3) AS LONG) AS oom_score_adj
FROM slice AS s
WHERE s.name GLOB 'lmk,*' AND s.dur > 0;

CREATE PERFETTO TABLE _kill_one_process_events AS
WITH
  kills AS (
    SELECT c.ts, cast_int!(c.value) AS pid
    FROM counter AS c
    JOIN counter_track AS t ON t.id = c.track_id
    WHERE t.name = 'kill_one_process' AND c.value > 0
  ),
  scores AS (
    SELECT i.ts, i.dur, i.score, p.pid
    FROM android_oom_adj_intervals AS i
    JOIN process AS p USING (upid)
  )
SELECT k.ts, k.pid, NULL AS kill_reason_raw, s.score AS oom_score_adj
FROM kills AS k
LEFT JOIN scores AS s ON s.pid = k.pid AND k.ts >= s.ts AND k.ts < s.ts + s.dur;

CREATE PERFETTO VIEW _android_lmk_events AS
WITH
  source AS (
    SELECT
      CASE
        WHEN EXISTS (SELECT 1 FROM _lmk_instant_events) THEN 1
        WHEN EXISTS (SELECT 1 FROM _legacy_lmk_events) THEN 2
        ELSE 3
      END AS which
  )
SELECT * FROM _lmk_instant_events WHERE (SELECT which FROM source) = 1
UNION ALL
SELECT * FROM _legacy_lmk_events WHERE (SELECT which FROM source) = 2
UNION ALL
SELECT * FROM _kill_one_process_events WHERE (SELECT which FROM source) = 3;

CREATE PERFETTO TABLE android_lmk_events(
  ts TIMESTAMP,
  upid JOINID(process.upid),
  pid LONG,
  process_name STRING,
  oom_score_adj LONG,
  kill_reason STRING,
  kill_reason_raw LONG
) AS
SELECT
  e.ts,
  p.upid,
  e.pid,
  p.name AS process_name,
  e.oom_score_adj,
  _android_lmk_kill_reason_string(e.kill_reason_raw) AS kill_reason,
  e.kill_reason_raw
FROM _android_lmk_events AS e
LEFT JOIN process AS p
  ON e.pid = p.pid
  AND e.ts >= coalesce(p.start_ts, trace_start())
  AND e.ts <= coalesce(p.end_ts, trace_end());

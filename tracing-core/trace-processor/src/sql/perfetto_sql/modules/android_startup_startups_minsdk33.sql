-- android.startup.startups_minsdk33, written for zerotrace: app startups
-- on Android 13 and later. system_server marks each with an async slice
-- `launchingActivity#<id>` and an instant
-- `launchingActivity#<id>:completed-<hot|warm|cold>:<package>`.
--   _startup_async_events     (ts, dur, startup_id)
--   _startup_complete_events  (startup_id, package_name, startup_type,
--                              ts of the first such instant)
--   _startups_minsdk33        (startup_id, ts, ts_end, dur, package,
--                              startup_type)

-- The `launchingActivity#<id>` slices of positive duration.
CREATE PERFETTO VIEW _startup_async_events AS
SELECT ts, dur, cast_int!(substr(name, 19)) AS startup_id
FROM slice
WHERE name GLOB 'launchingActivity#*' AND dur > 0 AND instr(name, ':') = 0;

-- The completion instants (same-process completions left out), the first
-- of each (id, package, type).
CREATE PERFETTO VIEW _startup_complete_events AS
SELECT
  cast_int!(str_split(rest, ':', 0)) AS startup_id,
  str_split(rest, ':', 2) AS package_name,
  CASE str_split(rest, ':', 1)
    WHEN 'completed-hot' THEN 'hot'
    WHEN 'completed-warm' THEN 'warm'
    WHEN 'completed-cold' THEN 'cold'
    ELSE NULL
  END AS startup_type,
  min(ts) AS ts
FROM (
  SELECT ts, substr(name, 19) AS rest
  FROM slice
  WHERE dur = 0
    AND name GLOB 'launchingActivity#*:completed*:*'
    AND NOT name GLOB '*:completed-same-process:*'
)
GROUP BY 1, 2, 3;

-- One row per completed startup: the async slice with its package and
-- type.
CREATE PERFETTO TABLE _startups_minsdk33 AS
SELECT
  a.startup_id,
  a.ts,
  a.ts + a.dur AS ts_end,
  a.dur,
  c.package_name AS package,
  c.startup_type
FROM _startup_async_events AS a
JOIN _startup_complete_events AS c USING (startup_id);

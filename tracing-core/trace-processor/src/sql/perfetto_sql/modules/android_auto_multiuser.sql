-- android.auto.multiuser, written for zerotrace: how long Android
-- Automotive takes to switch to a user. The switch starts at the last
-- `UserController.startUser-<id>-...` slice for a user other than 10 and
-- ends at each later app startup or `finishUserStopped-10...` slice end;
-- the previous user 10's CPU time and memory growth during the switch
-- are attached.
--   android_auto_multiuser_timing  one row per end event
--   _android_auto_user_10_total_cpu_time  user 10's CPU time per end event
--   _android_auto_user_10_total_memory    user 10's RSS growth per end event
--   android_auto_multiuser_timing_with_previous_user_resource_usage

INCLUDE PERFETTO MODULE android.startup.startups;

-- One row per event ending the latest user switch: the started user (the
-- up to two characters after the first '-' of the start slice's name),
-- when the switch started and the event ended, both names, and the
-- duration between.
CREATE PERFETTO TABLE android_auto_multiuser_timing(
  event_start_user_id STRING,
  event_start_time LONG,
  event_end_time LONG,
  event_end_name STRING,
  event_start_name STRING,
  duration LONG
) AS
WITH switch_start AS (
  SELECT
    name AS event_start_name,
    ts AS start_ts,
    substr(name, instr(name, '-') + 1, 2) AS user_id
  FROM slice
  WHERE name GLOB 'UserController.startUser*'
    AND NOT name GLOB 'UserController.startUser-10*'
  ORDER BY ts DESC
  LIMIT 1
),
end_events AS (
  SELECT ts_end AS end_ts, package AS end_name FROM android_startups
  UNION
  SELECT ts + dur, name FROM slice WHERE name GLOB 'finishUserStopped-10*'
)
SELECT
  s.user_id AS event_start_user_id,
  s.start_ts AS event_start_time,
  e.end_ts AS event_end_time,
  e.end_name AS event_end_name,
  s.event_start_name,
  e.end_ts - s.start_ts AS duration
FROM end_events AS e
JOIN switch_start AS s ON e.end_ts > s.start_ts
ORDER BY e.end_ts, e.end_name;

-- CPU time of user 10's processes (uid / 100000 = 10) scheduled between
-- the switch start and each end event.
CREATE PERFETTO VIEW _android_auto_user_10_total_cpu_time AS
SELECT
  sum(ss.dur) AS total_cpu_time,
  (p.uid - p.android_appid) / 100000 AS user_id,
  m.event_end_name
FROM sched_slice AS ss
JOIN thread AS t USING (utid)
JOIN process AS p USING (upid)
JOIN android_auto_multiuser_timing AS m
WHERE (p.uid - p.android_appid) / 100000 = 10
  AND ss.ts BETWEEN m.event_start_time AND m.event_end_time
GROUP BY m.event_end_name;

-- The summed growth, in KB (rounded down), of the `mem.rss` counters of
-- user 10's processes between the switch start and each end event.
CREATE PERFETTO VIEW _android_auto_user_10_total_memory AS
WITH samples AS (
  SELECT
    c.ts,
    c.value,
    p.name AS proc_name,
    (p.uid - p.android_appid) / 100000 AS user_id,
    m.event_end_name
  FROM counter AS c
  LEFT JOIN process_counter_track AS t ON t.id = c.track_id
  LEFT JOIN process AS p USING (upid)
  JOIN android_auto_multiuser_timing AS m
  WHERE t.name GLOB 'mem.rss'
    AND (p.uid - p.android_appid) / 100000 = 10
    AND c.ts BETWEEN m.event_start_time AND m.event_end_time
),
steps AS (
  SELECT
    *,
    value - coalesce(
      lag(value) OVER (PARTITION BY proc_name, event_end_name ORDER BY ts),
      value
    ) AS growth
  FROM samples
),
per_process AS (
  SELECT proc_name, sum(growth) / 1e3 AS kb, user_id, event_end_name
  FROM steps
  WHERE growth > 0
  GROUP BY proc_name, event_end_name
)
SELECT
  cast_int!(sum(kb)) AS total_memory_usage_kb,
  user_id,
  event_end_name
FROM per_process
GROUP BY event_end_name;

-- The switch timings with user 10's CPU time and memory growth.
CREATE PERFETTO VIEW android_auto_multiuser_timing_with_previous_user_resource_usage(
  event_start_user_id STRING,
  event_start_time LONG,
  event_end_time LONG,
  event_end_name STRING,
  event_start_name STRING,
  duration LONG,
  user_id LONG,
  total_cpu_time LONG,
  total_memory_usage_kb LONG
) AS
SELECT
  a.event_start_user_id,
  a.event_start_time,
  a.event_end_time,
  a.event_end_name,
  a.event_start_name,
  a.duration,
  cpu.user_id,
  cpu.total_cpu_time,
  mem.total_memory_usage_kb
FROM android_auto_multiuser_timing AS a
LEFT JOIN _android_auto_user_10_total_cpu_time AS cpu
  ON cpu.event_end_name = a.event_end_name
LEFT JOIN _android_auto_user_10_total_memory AS mem
  ON mem.event_end_name = a.event_end_name;

-- Written for zerotrace: the `android.app_process_starts` module.
-- `android_app_process_starts`: the app processes started during the
-- trace and why. system_server's `Start proc: <name>` slices start a
-- process; in it, `bindApplication` then, on the same thread, what the
-- start was for: an activity (`performCreate:<activity>`), a service
-- (`serviceCreate:…=<service> …`) or a broadcast
-- (`broadcastReceiveComp:<receiver>`). A `bindApplication` followed by none
-- of these was a content provider's start (reason `provider`, no intent).
-- For each process (upid) one start, joined to the latest `Start proc` of
-- its name before it; `total_dur` runs from that `Start proc` to the end
-- of the intent's slice (of `bindApplication` for a provider).

INCLUDE PERFETTO MODULE slices.with_context;

-- system_server's process starts: when, and the process's name.
CREATE PERFETTO VIEW _proc_start AS
SELECT ts, dur, trim(substr(name, 12)) AS process_name
FROM thread_slice
WHERE name GLOB 'Start proc:*' AND process_name = 'system_server';

-- Each intent slice right after a `bindApplication` on its track.
CREATE PERFETTO TABLE _cold_start AS
WITH
  lifecycle AS (
    SELECT
      id,
      ts AS intent_ts,
      dur AS intent_dur,
      track_id,
      name,
      upid,
      process_name,
      pid,
      utid,
      CASE
        WHEN name GLOB 'performCreate:*' THEN 'activity'
        WHEN name GLOB 'serviceCreate:*' THEN 'service'
        WHEN name GLOB 'broadcastReceiveComp:*' THEN 'broadcast'
      END AS reason,
      CASE
        WHEN name GLOB 'performCreate:*' THEN str_split(name, 'performCreate:', 1)
        WHEN name GLOB 'serviceCreate:*' THEN str_split(str_split(name, '=', 2), ' ', 0)
        WHEN name GLOB 'broadcastReceive*' THEN str_split(name, 'broadcastReceiveComp:', 1)
      END AS intent
    FROM thread_slice
    WHERE name = 'bindApplication'
      OR name GLOB 'performCreate:*'
      OR name GLOB 'serviceCreate:*'
      OR name GLOB 'broadcastReceiveComp:*'
  ),
  with_previous AS (
    SELECT
      *,
      lag(name) OVER w AS bind_app_name,
      lag(intent_ts) OVER w AS bind_app_ts,
      lag(intent_dur) OVER w AS bind_app_dur,
      lag(id) OVER w AS bind_app_id
    FROM lifecycle
    WINDOW w AS (PARTITION BY track_id ORDER BY intent_ts)
  )
SELECT * FROM with_previous WHERE bind_app_name = 'bindApplication';

-- Each cold start with the latest `Start proc` of its process before it
-- (one per process).
CREATE PERFETTO VIEW _cold_proc_start AS
SELECT
  c.*,
  max(p.ts) AS proc_start_ts,
  p.dur AS proc_start_dur,
  c.intent_ts + c.intent_dur - max(p.ts) AS total_dur
FROM _cold_start AS c
JOIN _proc_start AS p ON p.process_name = c.process_name AND p.ts < c.intent_ts
GROUP BY c.upid;

-- The `bindApplication` slices no intent followed: content providers'.
CREATE PERFETTO TABLE _provider_start AS
SELECT b.bind_app_id, s.*
FROM (
  SELECT id AS bind_app_id FROM slice WHERE name = 'bindApplication'
  EXCEPT
  SELECT bind_app_id FROM _cold_start
) AS b
JOIN thread_slice AS s ON s.id = b.bind_app_id;

-- Each provider start with the latest `Start proc` of its process before
-- it (one per process).
CREATE PERFETTO VIEW _provider_proc_start AS
SELECT
  c.*,
  max(p.ts) AS proc_start_ts,
  p.dur AS proc_start_dur,
  c.ts + c.dur - max(p.ts) AS total_dur
FROM _provider_start AS c
JOIN _proc_start AS p ON p.process_name = c.process_name AND p.ts < c.ts
GROUP BY c.upid;

CREATE PERFETTO TABLE android_app_process_starts(
  start_id LONG,
  id LONG,
  track_id JOINID(track.id),
  process_name STRING,
  pid LONG,
  upid JOINID(process.id),
  intent STRING,
  reason STRING,
  proc_start_ts TIMESTAMP,
  proc_start_dur DURATION,
  bind_app_ts TIMESTAMP,
  bind_app_dur DURATION,
  intent_ts TIMESTAMP,
  intent_dur DURATION,
  total_dur LONG
)
AS
SELECT
  bind_app_id AS start_id,
  id,
  track_id,
  process_name,
  pid,
  upid,
  intent,
  reason,
  proc_start_ts,
  proc_start_dur,
  bind_app_ts,
  bind_app_dur,
  intent_ts,
  intent_dur,
  total_dur
FROM _cold_proc_start
UNION ALL
SELECT
  bind_app_id,
  NULL,
  NULL,
  process_name,
  pid,
  upid,
  NULL,
  'provider',
  proc_start_ts,
  proc_start_dur,
  ts,
  dur,
  NULL,
  NULL,
  total_dur
FROM _provider_proc_start;

-- Written for zerotrace: the `android.broadcasts` module.
-- `_android_broadcasts_minsdk_u`: on Android U and later, system_server's
-- broadcast queues (process tracks `BroadcastQueue.mRunning[<queue>]`)
-- hold a slice `<process queue id> <pid>:<process name>/… running` for a
-- process taking broadcasts, and under it one `<record id> <intent
-- action>/… scheduled` for each broadcast sent to it: one row per such
-- broadcast, with the receiving process (pid, name and, by the pid at the
-- time of the broadcast, upid) and the queue it came from.

INCLUDE PERFETTO MODULE android.freezer;

-- What follows the first ':' in the second word of the part of `name`
-- before its first '/': the receiving process's name.
CREATE PERFETTO FUNCTION _extract_broadcast_process_name(name STRING)
RETURNS LONG
AS
SELECT substr(w, instr(w, ':') + 1)
FROM (SELECT str_split(str_split($name, '/', 0), ' ', 1) AS w);

CREATE PERFETTO TABLE _android_broadcasts_minsdk_u(
  record_id STRING,
  intent_action STRING,
  process_name STRING,
  pid LONG,
  upid JOINID(process.id),
  process_queue_id STRING,
  queue_id LONG,
  id JOINID(slice.id),
  ts TIMESTAMP,
  dur DURATION,
  track_id JOINID(track.id)
)
AS
WITH
  queues AS (
    SELECT
      t.id AS track_id,
      cast_int!(replace(str_split(t.name, '[', 1), ']', '')) AS queue_id
    FROM process_track AS t
    JOIN process AS p USING (upid)
    WHERE t.name GLOB 'BroadcastQueue.mRunning*' AND p.name = 'system_server'
  ),
  running AS (
    SELECT
      s.id,
      str_split(s.name, ' ', 0) AS process_queue_id,
      q.queue_id,
      _extract_broadcast_process_name(s.name) AS process_name,
      cast_int!(str_split(str_split(str_split(s.name, '/', 0), ' ', 1), ':', 0)) AS pid
    FROM slice AS s
    JOIN queues AS q USING (track_id)
    WHERE s.name GLOB '* running'
  )
SELECT
  str_split(b.name, ' ', 0) AS record_id,
  str_split(str_split(b.name, '/', 0), ' ', 1) AS intent_action,
  r.process_name,
  r.pid,
  _pid_to_upid(r.pid, b.ts) AS upid,
  r.process_queue_id,
  r.queue_id,
  b.id,
  b.ts,
  b.dur,
  b.track_id
FROM slice AS b
JOIN running AS r ON r.id = b.parent_id
WHERE b.name GLOB '* scheduled';

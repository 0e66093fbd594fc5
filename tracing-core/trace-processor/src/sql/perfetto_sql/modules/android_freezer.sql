-- Written for zerotrace: the `android.freezer` module.
-- `android_freezer_events`: each time the activity manager froze a
-- process (a slice `Freeze <name>:<pid>`), how long it stayed frozen: until
-- the process's next freeze or unfreeze (`Unfreeze <name>:<pid> <reason>`),
-- or the end of the trace, with the unfreeze's reason as its number and
-- its name (statsd's `UnfreezeReason`; NULL when the next event is not an
-- unfreeze or gives no known reason). A pid becomes the process that had
-- it at the event's time (`_pid_to_upid`); events of no known process are
-- left out.

-- The pid at the end of a freezer slice's second word (`name:pid`).
CREATE PERFETTO FUNCTION _extract_freezer_pid(name STRING)
RETURNS LONG
AS
SELECT cast_int!(reverse(str_split(reverse(str_split($name, ' ', 1)), ':', 0)));

-- The process that had `pid` at `event_ts` (alive then, its unknown start
-- or end taken as the trace's); of several, the last one made.
CREATE PERFETTO FUNCTION _pid_to_upid(pid LONG, event_ts TIMESTAMP)
RETURNS LONG
AS
SELECT upid
FROM process
WHERE pid = $pid
  AND $event_ts >= coalesce(start_ts, trace_start())
  AND $event_ts <= coalesce(end_ts, trace_end())
ORDER BY upid DESC
LIMIT 1;

-- statsd's name of an unfreeze reason's number.
CREATE PERFETTO FUNCTION _translate_unfreeze_reason(reason LONG)
RETURNS STRING
AS
SELECT CASE $reason
  WHEN 0 THEN 'none'
  WHEN 1 THEN 'activity'
  WHEN 2 THEN 'finish_receiver'
  WHEN 3 THEN 'start_receiver'
  WHEN 4 THEN 'bind_service'
  WHEN 5 THEN 'unbind_service'
  WHEN 6 THEN 'start_service'
  WHEN 7 THEN 'get_provider'
  WHEN 8 THEN 'remove_provider'
  WHEN 9 THEN 'ui_visibility'
  WHEN 10 THEN 'allowlist'
  WHEN 11 THEN 'process_begin'
  WHEN 12 THEN 'process_end'
  WHEN 13 THEN 'trim_memory'
  WHEN 15 THEN 'ping'
  WHEN 16 THEN 'file_locks'
  WHEN 17 THEN 'file_lock_check_failure'
  WHEN 18 THEN 'binder_txns'
  WHEN 19 THEN 'feature_flags'
  WHEN 20 THEN 'short_fgs_timeout'
  WHEN 21 THEN 'system_init'
  WHEN 22 THEN 'backup'
  WHEN 23 THEN 'shell'
  WHEN 24 THEN 'remove_task'
  WHEN 25 THEN 'uid_idle'
  WHEN 26 THEN 'stop_service'
  WHEN 27 THEN 'executing_service'
  WHEN 28 THEN 'restriction_change'
  WHEN 29 THEN 'component_disabled'
END;

CREATE PERFETTO TABLE android_freezer_events(
  upid JOINID(process.id),
  pid LONG,
  ts TIMESTAMP,
  dur DURATION,
  unfreeze_reason_int LONG,
  unfreeze_reason_str STRING
)
AS
WITH
  events AS (
    SELECT
      ts,
      _extract_freezer_pid(name) AS pid,
      name GLOB 'Freeze *' AS is_freeze,
      iif(name GLOB 'Unfreeze *', str_split(name, ' ', 2), NULL) AS reason
    FROM slice
    WHERE name GLOB 'Freeze *:*' OR name GLOB 'Unfreeze *:*'
  ),
  located AS (
    SELECT ts, pid, is_freeze, reason, _pid_to_upid(pid, ts) AS upid
    FROM events
  ),
  spans AS (
    SELECT
      upid,
      pid,
      ts,
      is_freeze,
      coalesce(lead(ts) OVER w, trace_end()) - ts AS dur,
      cast_int!(lead(reason) OVER w) AS next_reason
    FROM located
    WINDOW w AS (PARTITION BY upid ORDER BY ts)
  )
SELECT
  upid,
  pid,
  ts,
  dur,
  next_reason AS unfreeze_reason_int,
  _translate_unfreeze_reason(next_reason) AS unfreeze_reason_str
FROM spans
WHERE is_freeze AND upid IS NOT NULL;

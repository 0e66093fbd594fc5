-- Written for zerotrace: the `android.anrs` module.
-- `android_anrs`: every ANR (Application Not Responding) system_server
-- reported in the trace, one row each. system_server marks an ANR with
-- a counter named `ErrorId:<process>#<uuid>` (or `ErrorId:<process>
-- <pid>#<uuid>`) and its subject with `Subject(for ErrorId <uuid>):<text>`;
-- the ANR timer's expiry, when traced, is a slice
-- `expired(<timer id>,<pid>,<uid>,<type>,<timeout ms>)`, matched to the
-- ANR of the same pid that follows it most closely. The ANR's type comes
-- from the timer, else from the subject's wording; its intent, component
-- and the platform's default timeout for its type from the subject.

-- The ANR type a subject line's wording says (system_server's own ANRs
-- without a known wording are its watchdog's).
CREATE PERFETTO FUNCTION _extract_anr_type(subject STRING, process_name STRING)
RETURNS STRING AS
SELECT
  CASE
    WHEN $subject IS NULL THEN NULL
    WHEN $subject GLOB 'Broadcast of*' THEN 'BROADCAST_OF_INTENT'
    WHEN $subject GLOB 'Input dispatching timed out*does not have a focused window*'
      OR $subject GLOB 'Input dispatching timed out*Waiting because no window has focus but there is a focused application*'
      THEN 'INPUT_DISPATCHING_TIMEOUT_NO_FOCUSED_WINDOW'
    WHEN $subject GLOB 'Input dispatching timed out*' THEN 'INPUT_DISPATCHING_TIMEOUT'
    WHEN $subject GLOB 'Context.startForegroundService() did not then call Service.startForeground()*'
      THEN 'START_FOREGROUND_SERVICE'
    WHEN $subject GLOB 'executing service*' THEN 'EXECUTING_SERVICE'
    WHEN $subject GLOB 'ContentProvider not responding*' THEN 'CONTENT_PROVIDER_NOT_RESPONDING'
    WHEN $subject GLOB 'App requested: Buffer processing hung up due to stuck fence. Indicates GPU hang'
      THEN 'GPU_HANG'
    WHEN $subject GLOB 'No response to onStartJob*' THEN 'JOB_SERVICE_START'
    WHEN $subject GLOB 'No response to onStopJob*' THEN 'JOB_SERVICE_STOP'
    WHEN $subject GLOB 'Timed out while trying to bind*' THEN 'JOB_SERVICE_BIND'
    WHEN $subject GLOB 'Process ProcessRecord{*} failed to complete startup' THEN 'BIND_APPLICATION'
    WHEN $subject GLOB 'A foreground service of FOREGROUND_SERVICE_TYPE_SHORT_SERVICE did not stop within a timeout*'
      THEN 'FOREGROUND_SHORT_SERVICE_TIMEOUT'
    WHEN $subject GLOB 'A foreground service of type*' THEN 'FOREGROUND_SERVICE_TIMEOUT'
    WHEN $subject GLOB 'App requested: *' THEN 'APP_TRIGGERED'
    WHEN $subject GLOB 'required notification not provided*'
      THEN 'JOB_SERVICE_NOTIFICATION_NOT_PROVIDED'
    WHEN $process_name = 'system_server' THEN 'SYSTEM_SERVER_WATCHDOG_TIMEOUT'
    ELSE 'UNKNOWN_ANR_TYPE'
  END;

-- The intent flags (`flg=0x…`) of a broadcast's subject, NULL without.
CREATE PERFETTO FUNCTION _get_broadcast_flag(subject STRING)
RETURNS LONG AS
SELECT IIF(
  $subject GLOB 'Broadcast of Intent *flg=*',
  unhex(str_split(substr($subject, instr($subject, ' flg=') + 5), ' ', 0)),
  NULL
);

-- The platform's default ANR timeout in ms for a type (a broadcast's
-- depends on whether it was sent to the foreground, flag 0x10000000).
CREATE PERFETTO FUNCTION _default_anr_dur(anr_type STRING, subject STRING)
RETURNS LONG AS
SELECT
  CASE $anr_type
    WHEN 'BROADCAST_OF_INTENT' THEN IIF(
      COALESCE(_get_broadcast_flag($subject) & unhex('0x10000000'), 1) = 0,
      60000,
      10000
    )
    WHEN 'INPUT_DISPATCHING_TIMEOUT' THEN 5000
    WHEN 'INPUT_DISPATCHING_TIMEOUT_NO_FOCUSED_WINDOW' THEN 5000
    WHEN 'START_FOREGROUND_SERVICE' THEN 30000
    WHEN 'EXECUTING_SERVICE' THEN 20000
    WHEN 'JOB_SERVICE_START' THEN 8000
    WHEN 'JOB_SERVICE_STOP' THEN 8000
    WHEN 'JOB_SERVICE_BIND' THEN 8000
    WHEN 'JOB_SERVICE_NOTIFICATION_NOT_PROVIDED' THEN 8000
    WHEN 'BIND_APPLICATION' THEN 15000
    WHEN 'FOREGROUND_SHORT_SERVICE_TIMEOUT' THEN 180000
    WHEN 'FOREGROUND_SERVICE_TIMEOUT' THEN 30000
    ELSE NULL
  END;

-- The ANR's length in ms a watchdog subject states (`… for <n>s`).
CREATE PERFETTO FUNCTION _extract_anr_duration_from_subject(subject STRING)
RETURNS LONG AS
SELECT IIF(
  $subject GLOB '*Blocked in* for *s*',
  CAST(regexp_extract($subject, ' for ([0-9]+)s') * 1000 AS LONG),
  NULL
);

-- The standard ANR type of an ANR timer's type (NULL for JobScheduler's,
-- which maps to several).
CREATE PERFETTO FUNCTION _platform_to_standard_anr_type(platform STRING)
RETURNS STRING AS
SELECT
  CASE $platform
    WHEN 'BROADCAST_TIMEOUT' THEN 'BROADCAST_OF_INTENT'
    WHEN 'SERVICE_TIMEOUT' THEN 'EXECUTING_SERVICE'
    WHEN 'SHORT_FGS_TIMEOUT' THEN 'FOREGROUND_SHORT_SERVICE_TIMEOUT'
    WHEN 'SERVICE_FOREGROUND_TIMEOUT' THEN 'FOREGROUND_SERVICE_TIMEOUT'
    WHEN 'JobScheduler' THEN NULL
    ELSE $platform
  END;

-- A broadcast ANR's intent: its `act=` action, else the text between
-- `Broadcast of ` and `/u`.
CREATE PERFETTO FUNCTION _get_intent(anr_type STRING, subject STRING)
RETURNS STRING AS
SELECT
  CASE
    WHEN $anr_type IS NOT 'BROADCAST_OF_INTENT' THEN NULL
    WHEN $subject GLOB 'Broadcast of Intent *act=*'
      THEN str_split(substr($subject, instr($subject, 'act=') + 4), ' ', 0)
    WHEN $subject GLOB 'Broadcast of */u*'
      THEN str_split(substr($subject, instr($subject, 'Broadcast of ') + 13), '/u', 0)
    ELSE NULL
  END;

-- The component an ANR's subject names, by the type's wording.
CREATE PERFETTO FUNCTION _get_component(anr_type STRING, subject STRING)
RETURNS STRING AS
SELECT
  CASE $anr_type
    WHEN 'BROADCAST_OF_INTENT'
      THEN str_split(substr($subject, instr($subject, ' cmp=') + 5), ' ', 0)
    WHEN 'INPUT_DISPATCHING_TIMEOUT'
      THEN str_split(substr($subject, instr($subject, '(') + 1), ' ', 1)
    -- The word after the one that follows ` u<user>`.
    WHEN 'START_FOREGROUND_SERVICE' THEN str_split(
      substr(
        $subject,
        instr($subject, ' u') + 1 + instr(substr($subject, instr($subject, ' u') + 1), ' ')
      ),
      ' ',
      0
    )
    WHEN 'EXECUTING_SERVICE'
      THEN str_split(substr($subject, instr($subject, 'executing service ') + 18), ',', 0)
    WHEN 'FOREGROUND_SHORT_SERVICE_TIMEOUT'
      THEN str_split(substr($subject, instr($subject, 'ComponentInfo{') + 14), '}', 0)
    WHEN 'FOREGROUND_SERVICE_TIMEOUT'
      THEN str_split(substr($subject, instr($subject, 'ComponentInfo{') + 14), '}', 0)
    WHEN 'APP_TRIGGERED'
      THEN substr($subject, instr($subject, 'App requested: ') + 15)
    ELSE NULL
  END;

CREATE PERFETTO TABLE android_anrs(
  process_name STRING,
  pid LONG,
  upid JOINID(process.id),
  error_id STRING,
  ts TIMESTAMP,
  subject STRING,
  intent STRING,
  component STRING,
  timer_delay LONG,
  anr_type STRING,
  anr_dur_ms LONG,
  default_anr_dur_ms LONG
) AS
WITH
  system_server_counters AS (
    SELECT t.id, t.name
    FROM process_counter_track AS t
    JOIN process AS p USING (upid)
    WHERE p.name = 'system_server'
  ),
  -- `ErrorId:<process>[ <pid>]#<uuid>`, one reading per ANR.
  reported AS (
    SELECT
      str_split(substr(str_split(t.name, '#', 0), 9), ' ', 0) AS process_name,
      cast_int!(str_split(substr(str_split(t.name, '#', 0), 9), ' ', 1)) AS pid,
      str_split(t.name, '#', 1) AS error_id,
      c.ts
    FROM system_server_counters AS t
    JOIN counter AS c ON c.track_id = t.id
    WHERE t.name GLOB 'ErrorId:*'
  ),
  -- `Subject(for ErrorId <uuid>):<subject>`.
  subjects AS (
    SELECT
      substr(str_split(t.name, ')', 0), 21) AS error_id,
      substr(t.name, length(str_split(t.name, ')', 0)) + 3) AS subject
    FROM system_server_counters AS t
    WHERE t.name GLOB 'Subject(for ErrorId *'
  ),
  -- `expired(<timer id>,<pid>,<uid>,<type>,<timeout ms>)`.
  timers AS (
    SELECT
      ts AS timer_ts,
      cast_int!(str_split(params, ',', 1)) AS pid,
      str_split(params, ',', 3) AS anr_type,
      cast_int!(str_split(params, ',', 4)) AS anr_dur_ms
    FROM (
      SELECT ts, trim(substr(name, length('expired(') + 1), ')') AS params
      FROM slice
      WHERE name GLOB 'expired(*,*,*,*,*)'
    )
  ),
  -- Per ANR, the latest timer of its pid that expired before it (or
  -- none).
  best_timer AS (
    SELECT error_id, timer_ts, anr_type, anr_dur_ms
    FROM (
      SELECT
        r.error_id,
        t.timer_ts,
        t.anr_type,
        t.anr_dur_ms,
        ROW_NUMBER() OVER (
          PARTITION BY r.error_id
          ORDER BY t.timer_ts IS NULL, r.ts - t.timer_ts
        ) AS rank
      FROM reported AS r
      LEFT JOIN timers AS t USING (pid)
      WHERE t.pid IS NULL OR r.ts >= t.timer_ts
    )
    WHERE rank = 1
  ),
  typed AS (
    SELECT
      r.process_name,
      r.pid,
      p.upid,
      r.error_id,
      r.ts,
      s.subject,
      r.ts - b.timer_ts AS timer_delay,
      COALESCE(
        _platform_to_standard_anr_type(b.anr_type),
        _extract_anr_type(s.subject, r.process_name)
      ) AS anr_type,
      COALESCE(b.anr_dur_ms, _extract_anr_duration_from_subject(s.subject)) AS anr_dur_ms
    FROM reported AS r
    LEFT JOIN subjects AS s USING (error_id)
    LEFT JOIN best_timer AS b USING (error_id)
    LEFT JOIN process AS p ON p.pid = r.pid
  )
SELECT
  process_name,
  pid,
  upid,
  error_id,
  ts,
  subject,
  _get_intent(anr_type, subject) AS intent,
  _get_component(anr_type, subject) AS component,
  timer_delay,
  anr_type,
  anr_dur_ms,
  _default_anr_dur(anr_type, subject) AS default_anr_dur_ms
FROM typed;

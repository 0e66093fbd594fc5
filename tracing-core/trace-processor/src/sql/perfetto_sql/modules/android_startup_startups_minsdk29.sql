-- android.startup.startups_minsdk29, written for zerotrace: app startups
-- on Android 10 to 12. The intent-started markers of system_server's
-- MetricsLogger split the trace into spans (each to the next marker, the
-- last to the trace end); a span holding exactly one `launching:` slice,
-- wholly inside it, and a launch-finished marker is one startup, from the
-- intent to the slice's end.
--   _activity_intent_received            the intent-started markers
--   _activity_intent_recv_spans          the spans between them
--   _startup_partitions                  spans with one `launching:`
--   _activity_intent_startup_successful  the launch-finished markers
--   _startups_minsdk29                   (ts, ts_end, dur, package,
--                                         startup_type)

INCLUDE PERFETTO MODULE android.startup.startup_events;

-- When system_server's MetricsLogger saw an activity intent start.
CREATE PERFETTO VIEW _activity_intent_received AS
SELECT ts
FROM slice
WHERE name = 'MetricsLogger:launchObserverNotifyIntentStarted';

-- From each intent start to the next (the last to the trace's end).
CREATE PERFETTO TABLE _activity_intent_recv_spans(
  ts TIMESTAMP,
  dur DURATION
) AS
SELECT ts, lead(ts, 1, trace_end()) OVER (ORDER BY ts) - ts AS dur
FROM _activity_intent_received
ORDER BY ts;

-- The spans in which exactly one `launching:` slice starts.
CREATE PERFETTO VIEW _startup_partitions AS
SELECT *
FROM _activity_intent_recv_spans AS p
WHERE (
  SELECT count(*) FROM _startup_events AS e
  WHERE e.ts BETWEEN p.ts AND p.ts + p.dur
) = 1;

-- When MetricsLogger saw an activity launch finish.
CREATE PERFETTO VIEW _activity_intent_startup_successful AS
SELECT ts
FROM slice
WHERE name = 'MetricsLogger:launchObserverNotifyActivityLaunchFinished';

-- The startups by start time (startup_type decided later, NULL here).
CREATE PERFETTO TABLE _startups_minsdk29 AS
SELECT
  p.ts,
  e.ts_end,
  e.ts_end - p.ts AS dur,
  e.package_name AS package,
  NULL AS startup_type
FROM _startup_partitions AS p
JOIN _startup_events AS e
  ON e.ts BETWEEN p.ts AND p.ts + p.dur
  AND e.ts_end BETWEEN p.ts AND p.ts + p.dur
WHERE EXISTS (
  SELECT 1 FROM _activity_intent_startup_successful AS ok
  WHERE ok.ts BETWEEN p.ts AND p.ts + p.dur
)
ORDER BY p.ts;

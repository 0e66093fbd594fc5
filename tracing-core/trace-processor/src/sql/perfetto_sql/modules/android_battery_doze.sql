-- Written for zerotrace: the `android.battery.doze` module.
-- `android_light_idle_state` and `android_deep_idle_state`: the device
-- idle controller's light and deep doze states over time, from the
-- `DozeLightState` and `DozeDeepState` counters, each value held until the
-- next (the last until the end of the trace) and named as
-- DeviceIdleController names it (`unmapped` for a value it has no name for).

INCLUDE PERFETTO MODULE counters.intervals;

-- The intervals of the global counter track named `name`.
CREATE PERFETTO MACRO _zt_doze_intervals(name Expr)
RETURNS TableOrSubquery
AS (
  SELECT id, ts, dur, value AS v
  FROM counter_leading_intervals!((
    SELECT c.id, c.ts, 0 AS track_id, c.value
    FROM counter AS c
    JOIN counter_track AS t ON t.id = c.track_id
    WHERE t.name = $name
  ))
);

CREATE PERFETTO TABLE android_light_idle_state(
  id LONG,
  ts TIMESTAMP,
  dur DURATION,
  light_idle_state STRING
)
AS
SELECT
  id,
  ts,
  dur,
  CASE v
    WHEN 0 THEN 'active'
    WHEN 1 THEN 'inactive'
    WHEN 4 THEN 'idle'
    WHEN 5 THEN 'waiting_for_network'
    WHEN 6 THEN 'idle_maintenance'
    WHEN 7 THEN 'override'
    ELSE 'unmapped'
  END AS light_idle_state
FROM _zt_doze_intervals!('DozeLightState');

CREATE PERFETTO TABLE android_deep_idle_state(
  id LONG,
  ts TIMESTAMP,
  dur DURATION,
  deep_idle_state STRING
)
AS
SELECT
  id,
  ts,
  dur,
  CASE v
    WHEN 0 THEN 'active'
    WHEN 1 THEN 'inactive'
    WHEN 2 THEN 'idle_pending'
    WHEN 3 THEN 'sensing'
    WHEN 4 THEN 'locating'
    WHEN 5 THEN 'idle'
    WHEN 6 THEN 'idle_maintenance'
    WHEN 7 THEN 'quick_doze_delay'
    ELSE 'unmapped'
  END AS deep_idle_state
FROM _zt_doze_intervals!('DozeDeepState');

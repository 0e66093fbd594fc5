-- Written for zerotrace: the `android.battery.charging_states` module.
-- `android_charging_states`: the device's charging state over the whole
-- trace, from the `BatteryStatus` counter (BatteryManager's status: 2
-- charging, 3 discharging, 4 not charging, 5 full): each value held until
-- the next, the time before the first reading and any other value
-- `unknown`/`Unknown`; rows numbered from 1 in time order.

INCLUDE PERFETTO MODULE counters.intervals;
INCLUDE PERFETTO MODULE intervals.fill_gaps;

CREATE PERFETTO TABLE android_charging_states(
  id LONG,
  ts TIMESTAMP,
  dur DURATION,
  short_charging_state STRING,
  charging_state STRING
)
AS
WITH
  held AS (
    SELECT id, ts, dur, value
    FROM counter_leading_intervals!((
      SELECT c.id, c.ts, 0 AS track_id, c.value
      FROM counter AS c
      JOIN counter_track AS t ON t.id = c.track_id
      WHERE t.name = 'BatteryStatus'
    ))
    WHERE dur > 0
  ),
  named AS (
    SELECT
      id,
      ts,
      dur,
      CASE value
        WHEN 2 THEN 'charging'
        WHEN 3 THEN 'discharging'
        WHEN 4 THEN 'not_charging'
        WHEN 5 THEN 'full'
      END AS short_charging_state,
      CASE value
        WHEN 2 THEN 'Charging'
        WHEN 3 THEN 'Discharging'
        WHEN 4 THEN 'Not charging'
        WHEN 5 THEN 'Full'
      END AS charging_state
    FROM held
  )
SELECT
  row_number() OVER () AS id,
  ts,
  dur,
  coalesce(short_charging_state, 'unknown') AS short_charging_state,
  coalesce(charging_state, 'Unknown') AS charging_state
FROM _intervals_fill_gaps!((NULL), (short_charging_state, charging_state), named);

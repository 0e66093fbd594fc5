-- Written for zerotrace: the `android.battery` module:
-- `android_battery_charge`, one row per time any `batt.*` counter has a
-- value, with the readings of the battery's counters (average and
-- instantaneous current, capacity, charge, voltage, energy, power) at that
-- time, NULL where a counter has none.

CREATE PERFETTO VIEW _android_batt_values AS
SELECT c.ts, t.name, c.value
FROM counter AS c
JOIN counter_track AS t ON t.id = c.track_id
WHERE t.name GLOB 'batt.*';

CREATE PERFETTO VIEW android_battery_charge(
  ts TIMESTAMP,
  current_avg_ua DOUBLE,
  capacity_percent DOUBLE,
  charge_uah DOUBLE,
  current_ua DOUBLE,
  voltage_uv DOUBLE,
  energy_counter_uwh DOUBLE,
  power_mw DOUBLE
) AS
WITH stamps AS (SELECT DISTINCT ts FROM _android_batt_values)
SELECT
  s.ts,
  a.value AS current_avg_ua,
  p.value AS capacity_percent,
  q.value AS charge_uah,
  i.value AS current_ua,
  v.value AS voltage_uv,
  e.value AS energy_counter_uwh,
  w.value AS power_mw
FROM stamps AS s
LEFT JOIN _android_batt_values AS a ON a.ts = s.ts AND a.name = 'batt.current.avg_ua'
LEFT JOIN _android_batt_values AS p ON p.ts = s.ts AND p.name = 'batt.capacity_pct'
LEFT JOIN _android_batt_values AS q ON q.ts = s.ts AND q.name = 'batt.charge_uah'
LEFT JOIN _android_batt_values AS i ON i.ts = s.ts AND i.name = 'batt.current_ua'
LEFT JOIN _android_batt_values AS v ON v.ts = s.ts AND v.name = 'batt.voltage_uv'
LEFT JOIN _android_batt_values AS e ON e.ts = s.ts AND e.name = 'batt.energy_counter_uwh'
LEFT JOIN _android_batt_values AS w ON w.ts = s.ts AND w.name = 'batt.power_mw'
ORDER BY s.ts;

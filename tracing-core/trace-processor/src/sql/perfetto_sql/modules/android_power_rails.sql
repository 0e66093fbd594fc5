-- Written for zerotrace: the `android.power_rails` module, over the
-- `power_rails` counter tracks (one per rail and session; each value the
-- rail's energy since boot, in µWs). `android_power_rails_counters` gives
-- each reading with the time to the next one, the energy used in that
-- time and the average power it makes (mW); `android_power_rails_metadata`
-- one row per rail: its track name, raw and friendly names, subsystem and
-- machine.

INCLUDE PERFETTO MODULE counters.intervals;

CREATE PERFETTO TABLE android_power_rails_counters(
  id ID(counter.id),
  ts TIMESTAMP,
  dur DURATION,
  power_rail_name STRING,
  raw_power_rail_name STRING,
  energy_since_boot DOUBLE,
  energy_since_boot_at_end DOUBLE,
  average_power DOUBLE,
  energy_delta DOUBLE,
  track_id JOINID(track.id),
  value DOUBLE
) AS
SELECT
  iv.id,
  iv.ts,
  iv.dur,
  t.name AS power_rail_name,
  extract_arg(t.source_arg_set_id, 'raw_name') AS raw_power_rail_name,
  iv.value AS energy_since_boot,
  iv.next_value AS energy_since_boot_at_end,
  (iv.next_value - iv.value) / iv.dur * 1e6 AS average_power,
  iv.delta_value AS energy_delta,
  iv.track_id,
  iv.value
FROM counter_leading_intervals!((
  SELECT c.id, c.ts, c.track_id, c.value
  FROM counter AS c
  JOIN counter_track AS ct ON ct.id = c.track_id
  WHERE ct.type = 'power_rails'
)) AS iv
JOIN counter_track AS t ON t.id = iv.track_id;

CREATE PERFETTO TABLE android_power_rails_metadata(
  power_rail_name STRING,
  raw_power_rail_name STRING,
  friendly_name STRING,
  track_id JOINID(track.id),
  subsystem_name STRING,
  machine_id JOINID(machine.id)
) AS
SELECT
  t.name AS power_rail_name,
  extract_arg(t.source_arg_set_id, 'raw_name') AS raw_power_rail_name,
  iif(t.name GLOB 'power.rails.*', substr(t.name, length('power.rails.') + 1), NULL)
    AS friendly_name,
  t.id AS track_id,
  extract_arg(t.source_arg_set_id, 'subsystem_name') AS subsystem_name,
  t.machine_id
FROM counter_track AS t
WHERE t.type = 'power_rails';

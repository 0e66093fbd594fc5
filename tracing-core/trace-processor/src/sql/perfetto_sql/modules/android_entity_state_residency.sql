-- Written for zerotrace: the `android.entity_state_residency` module, over
-- the `entity_state` counter tracks (named `Entity residency: ENTITY is
-- STATE`; each value the time, in ms, the entity has spent in the state
-- since boot). `android_entity_state_residency` gives each reading with
-- the time to the next one, the entity and state named apart, the time in
-- state (ns) at both ends and the share of the interval spent in it.

CREATE PERFETTO TABLE android_entity_state_residency(
  id ID(counter.id),
  ts TIMESTAMP,
  dur DURATION,
  entity_name STRING,
  state_name STRING,
  raw_name STRING,
  state_time_since_boot DURATION,
  state_time_since_boot_at_end DURATION,
  state_time_ratio DOUBLE,
  track_id JOINID(track.id)
) AS
WITH
  named AS (
    SELECT
      id,
      name AS raw_name,
      name GLOB 'Entity residency: * is *' AS parsed,
      instr(name, ' is ') AS sep
    FROM counter_track
    WHERE type = 'entity_state'
  ),
  tracks AS (
    SELECT
      id,
      raw_name,
      iif(parsed, substr(raw_name, length('Entity residency: ') + 1,
                         sep - length('Entity residency: ') - 1), NULL) AS entity_name,
      iif(parsed, substr(raw_name, sep + length(' is ')), NULL) AS state_name
    FROM named
  ),
  readings AS (
    SELECT
      c.id,
      c.ts,
      lead(c.ts) OVER (PARTITION BY c.track_id ORDER BY c.ts) - c.ts AS dur,
      t.entity_name,
      t.state_name,
      t.raw_name,
      cast(c.value * 1e6 AS INTEGER) AS state_time_since_boot,
      cast(lead(c.value) OVER (PARTITION BY c.track_id ORDER BY c.ts) * 1e6 AS INTEGER)
        AS state_time_since_boot_at_end,
      c.track_id
    FROM counter AS c
    JOIN tracks AS t ON t.id = c.track_id
  )
SELECT
  id,
  ts,
  dur,
  entity_name,
  state_name,
  raw_name,
  state_time_since_boot,
  state_time_since_boot_at_end,
  (state_time_since_boot_at_end - state_time_since_boot) * 1.0 / dur AS state_time_ratio,
  track_id
FROM readings;

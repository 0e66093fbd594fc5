-- Written for zerotrace: the `linux.cpu.idle_time_in_state` module, over
-- the sysfs cpuidle residency counters (tracks of type `cpu_idle_state`,
-- dimensions `cpu` and `state`, values cumulative microseconds). It
-- provides `linux_per_cpu_idle_time_in_state_counters` (per sample after a
-- track's first: the residency gained since the previous sample, the
-- elapsed time in microseconds, their ratio as a percentage capped at
-- 100, plus a `C0` row per CPU and time for what no state accounts for,
-- floored at 0) and `linux_cpu_idle_time_in_state_counters` (the same
-- summed over the CPUs of each machine).

INCLUDE PERFETTO MODULE time.conversion;

CREATE PERFETTO TABLE linux_per_cpu_idle_time_in_state_counters(
  ts TIMESTAMP,
  machine_id JOINID(machine.id),
  state STRING,
  cpu LONG,
  idle_percentage DOUBLE,
  total_residency DOUBLE,
  time_slice LONG
) AS
WITH
  samples AS (
    SELECT
      counter.ts,
      counter.value,
      counter.track_id,
      -- The host's tracks carry no machine id; it is machine 0.
      coalesce(track.machine_id, 0) AS machine_id,
      extract_arg(track.dimension_arg_set_id, 'state') AS state,
      extract_arg(track.dimension_arg_set_id, 'cpu') AS cpu
    FROM counter
    JOIN track ON track.id = counter.track_id
    WHERE track.type = 'cpu_idle_state'
  ),
  deltas AS (
    SELECT
      ts,
      machine_id,
      state,
      cpu,
      value - lag(value) OVER by_track AS total_residency,
      time_to_us(ts - lag(ts) OVER by_track) AS time_slice
    FROM samples
    WINDOW by_track AS (PARTITION BY track_id ORDER BY ts)
  )
SELECT
  ts,
  machine_id,
  state,
  cpu,
  min(100, (total_residency / time_slice) * 100) AS idle_percentage,
  total_residency,
  time_slice
FROM deltas
WHERE time_slice IS NOT NULL
UNION ALL
SELECT
  ts,
  machine_id,
  'C0' AS state,
  cpu,
  max(0, ((time_slice - sum(total_residency)) / time_slice) * 100) AS idle_percentage,
  max(0, time_slice - sum(total_residency)) AS total_residency,
  time_slice
FROM deltas
WHERE time_slice IS NOT NULL
GROUP BY ts, cpu, machine_id;

CREATE PERFETTO TABLE linux_cpu_idle_time_in_state_counters(
  ts TIMESTAMP,
  machine_id JOINID(machine.id),
  state STRING,
  idle_percentage DOUBLE,
  total_residency DOUBLE,
  time_slice LONG
) AS
SELECT
  ts,
  machine_id,
  state,
  min(100, (sum(total_residency) / sum(time_slice)) * 100) AS idle_percentage,
  sum(total_residency) AS total_residency,
  sum(time_slice) AS time_slice
FROM linux_per_cpu_idle_time_in_state_counters
GROUP BY ts, state, machine_id;

-- Written for zerotrace: the `linux.cpu.utilization.system` module,
-- system-wide aggregates akin to /proc/stat. It provides
-- `cpu_utilization_per_period(interval)` and `cpu_utilization_per_second`
-- (time non-idle threads ran in each period, over the period and over the
-- period times the CPU count), `cpu_cycles` (one row: cycles, running
-- time and frequencies over the whole trace), `cpu_cycles_per_cpu`, and
-- the interval forms `cpu_cycles_in_interval`, `cpu_cycles_per_cpu_in_interval`
-- and `cpu_utilization_in_interval` (running time while the system was
-- awake, by the monotonic clock, as a percentage of the interval's awake
-- time).

INCLUDE PERFETTO MODULE linux.cpu.utilization.general;
INCLUDE PERFETTO MODULE linux.cpu.utilization.thread_cpu;
INCLUDE PERFETTO MODULE time.conversion;
INCLUDE PERFETTO MODULE intervals.intersect;

CREATE PERFETTO FUNCTION cpu_utilization_per_period(interval LONG)
RETURNS TABLE(
  ts TIMESTAMP,
  utilization DOUBLE,
  unnormalized_utilization DOUBLE
) AS
SELECT *
FROM _cpu_avg_utilization_per_period!($interval, (
  SELECT * FROM sched WHERE utid NOT IN (SELECT utid FROM thread WHERE is_idle)
));

CREATE PERFETTO TABLE cpu_utilization_per_second(
  ts TIMESTAMP,
  utilization DOUBLE,
  unnormalized_utilization DOUBLE
) AS
SELECT ts, utilization, unnormalized_utilization
FROM cpu_utilization_per_period(time_from_s(1));

CREATE PERFETTO TABLE cpu_cycles(
  millicycles LONG,
  megacycles LONG,
  runtime DURATION,
  min_freq LONG,
  max_freq LONG,
  avg_freq LONG
) AS
SELECT
  sum(millicycles) AS millicycles,
  cast(sum(millicycles) / 1e9 AS INT) AS megacycles,
  sum(runtime) AS runtime,
  min(min_freq) AS min_freq,
  max(max_freq) AS max_freq,
  cast(sum(millicycles) / (sum(runtime) / 1000) AS INT) AS avg_freq
FROM cpu_cycles_per_thread_per_cpu;

CREATE PERFETTO FUNCTION cpu_cycles_in_interval(ts TIMESTAMP, dur LONG)
RETURNS TABLE(
  millicycles LONG,
  megacycles LONG,
  runtime DURATION,
  awake_runtime DURATION,
  min_freq LONG,
  max_freq LONG,
  avg_freq LONG
) AS
SELECT
  cast(sum(ii.dur * f.freq / 1000) AS INT) AS millicycles,
  cast(sum(ii.dur * f.freq / 1000) / 1e9 AS INT) AS megacycles,
  sum(ii.dur) AS runtime,
  sum(to_monotonic(ii.ts + ii.dur) - to_monotonic(ii.ts)) AS awake_runtime,
  min(f.freq) AS min_freq,
  max(f.freq) AS max_freq,
  cast(
    sum(ii.dur * f.freq / 1000) / (sum(CASE WHEN f.freq IS NOT NULL THEN ii.dur END) / 1000)
    AS INT
  ) AS avg_freq
FROM _interval_intersect_single!($ts, $dur, _cpu_freq_per_thread) AS ii
JOIN _cpu_freq_per_thread AS f USING (id);

CREATE PERFETTO FUNCTION cpu_utilization_in_interval(ts TIMESTAMP, dur LONG)
RETURNS TABLE(
  awake_dur LONG,
  awake_utilization DOUBLE,
  awake_unnormalized_utilization DOUBLE
) AS
SELECT
  awake_runtime AS awake_dur,
  round(
    awake_runtime * 100.0 / (to_monotonic($ts + $dur) - to_monotonic($ts))
      / _zt_cpu_count(),
    2
  ) AS awake_utilization,
  round(awake_runtime * 100.0 / (to_monotonic($ts + $dur) - to_monotonic($ts)), 2)
    AS awake_unnormalized_utilization
FROM cpu_cycles_in_interval($ts, $dur);

CREATE PERFETTO TABLE cpu_cycles_per_cpu(
  ucpu JOINID(cpu.id),
  cpu LONG,
  millicycles LONG,
  megacycles LONG,
  runtime DURATION,
  min_freq LONG,
  max_freq LONG,
  avg_freq LONG
) AS
SELECT
  ucpu,
  cpu,
  sum(millicycles) AS millicycles,
  cast(sum(millicycles) / 1e9 AS INT) AS megacycles,
  sum(runtime) AS runtime,
  min(min_freq) AS min_freq,
  max(max_freq) AS max_freq,
  cast(sum(millicycles) / (sum(runtime) / 1000) AS INT) AS avg_freq
FROM cpu_cycles_per_thread_per_cpu
GROUP BY ucpu, cpu;

CREATE PERFETTO FUNCTION cpu_cycles_per_cpu_in_interval(ts TIMESTAMP, dur LONG)
RETURNS TABLE(
  ucpu JOINID(cpu.id),
  cpu LONG,
  millicycles LONG,
  megacycles LONG,
  runtime DURATION,
  min_freq LONG,
  max_freq LONG,
  avg_freq LONG
) AS
SELECT
  f.ucpu,
  f.cpu,
  cast(sum(ii.dur * f.freq / 1000) AS INT) AS millicycles,
  cast(sum(ii.dur * f.freq / 1000) / 1e9 AS INT) AS megacycles,
  sum(ii.dur) AS runtime,
  min(f.freq) AS min_freq,
  max(f.freq) AS max_freq,
  cast(
    sum(ii.dur * f.freq / 1000) / (sum(CASE WHEN f.freq IS NOT NULL THEN ii.dur END) / 1000)
    AS INT
  ) AS avg_freq
FROM _interval_intersect_single!($ts, $dur, _cpu_freq_per_thread) AS ii
JOIN _cpu_freq_per_thread AS f USING (id)
GROUP BY f.ucpu;

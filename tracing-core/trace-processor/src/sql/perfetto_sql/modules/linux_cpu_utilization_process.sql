-- Written for zerotrace: the `linux.cpu.utilization.process` module, CPU
-- use per process (the sum over its threads). It provides
-- `cpu_process_utilization_per_period(interval, upid)` and
-- `cpu_process_utilization_per_second(upid)` (the process's running time
-- per period, over the period and over the period times the CPU count),
-- `cpu_cycles_per_process` (cycles, running time and frequencies over the
-- trace), `cpu_cycles_per_process_in_interval(ts, dur)` and
-- `cpu_process_utilization_in_interval(ts, dur)` (running time while
-- awake, as a percentage of the interval's awake time).

INCLUDE PERFETTO MODULE linux.cpu.utilization.general;
INCLUDE PERFETTO MODULE linux.cpu.utilization.thread_cpu;
INCLUDE PERFETTO MODULE time.conversion;
INCLUDE PERFETTO MODULE intervals.intersect;

CREATE PERFETTO FUNCTION cpu_process_utilization_per_period(
  interval LONG,
  upid JOINID(process.id)
)
RETURNS TABLE(
  ts TIMESTAMP,
  utilization DOUBLE,
  unnormalized_utilization DOUBLE
) AS
WITH ran AS (
  SELECT sched.ts, sched.ts_end, sched.utid
  FROM sched
  JOIN thread USING (utid)
  JOIN process USING (upid)
  WHERE thread.upid = $upid AND NOT thread.is_idle
)
SELECT * FROM _cpu_avg_utilization_per_period!($interval, ran);

CREATE PERFETTO FUNCTION cpu_process_utilization_per_second(upid JOINID(process.id))
RETURNS TABLE(
  ts TIMESTAMP,
  utilization DOUBLE,
  unnormalized_utilization DOUBLE
) AS
SELECT * FROM cpu_process_utilization_per_period(time_from_s(1), $upid);

CREATE PERFETTO TABLE cpu_cycles_per_process(
  upid JOINID(process.id),
  millicycles LONG,
  megacycles LONG,
  runtime DURATION,
  min_freq LONG,
  max_freq LONG,
  avg_freq LONG
) AS
SELECT
  t.upid,
  sum(c.millicycles) AS millicycles,
  cast(sum(c.millicycles) / 1e9 AS INT) AS megacycles,
  sum(c.runtime) AS runtime,
  min(c.min_freq) AS min_freq,
  max(c.max_freq) AS max_freq,
  cast(sum(c.millicycles) / (sum(c.runtime) / 1000) AS INT) AS avg_freq
FROM cpu_cycles_per_thread_per_cpu AS c
JOIN thread AS t USING (utid)
WHERE t.upid IS NOT NULL
GROUP BY t.upid;

CREATE PERFETTO FUNCTION cpu_cycles_per_process_in_interval(ts TIMESTAMP, dur LONG)
RETURNS TABLE(
  upid JOINID(process.id),
  millicycles LONG,
  megacycles LONG,
  runtime DURATION,
  awake_runtime DURATION,
  min_freq LONG,
  max_freq LONG,
  avg_freq LONG
) AS
WITH
  by_process AS (
    SELECT f.id, f.ts, f.dur, f.freq, t.upid
    FROM _cpu_freq_per_thread AS f
    JOIN thread AS t USING (utid)
  )
SELECT
  p.upid,
  cast(sum(ii.dur * p.freq / 1000) AS INT) AS millicycles,
  cast(sum(ii.dur * p.freq / 1000) / 1e9 AS INT) AS megacycles,
  sum(ii.dur) AS runtime,
  sum(to_monotonic(ii.ts + ii.dur) - to_monotonic(ii.ts)) AS awake_runtime,
  min(p.freq) AS min_freq,
  max(p.freq) AS max_freq,
  cast(
    sum(ii.dur * p.freq / 1000) / (sum(CASE WHEN p.freq IS NOT NULL THEN ii.dur END) / 1000)
    AS INT
  ) AS avg_freq
FROM _interval_intersect_single!($ts, $dur, by_process) AS ii
JOIN by_process AS p USING (id)
GROUP BY p.upid;

CREATE PERFETTO FUNCTION cpu_process_utilization_in_interval(ts TIMESTAMP, dur LONG)
RETURNS TABLE(
  upid JOINID(process.id),
  process_name STRING,
  awake_dur LONG,
  awake_utilization DOUBLE,
  awake_unnormalized_utilization DOUBLE
) AS
SELECT
  c.upid,
  p.name AS process_name,
  sum(c.awake_runtime) AS awake_dur,
  round(
    sum(c.awake_runtime) * 100.0 / (to_monotonic($ts + $dur) - to_monotonic($ts))
      / _zt_cpu_count(),
    6
  ) AS awake_utilization,
  round(sum(c.awake_runtime) * 100.0 / (to_monotonic($ts + $dur) - to_monotonic($ts)), 6)
    AS awake_unnormalized_utilization
FROM cpu_cycles_per_process_in_interval($ts, $dur) AS c
JOIN process AS p USING (upid)
GROUP BY c.upid;

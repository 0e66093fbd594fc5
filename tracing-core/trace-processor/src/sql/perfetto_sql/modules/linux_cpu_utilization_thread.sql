-- Written for zerotrace: the `linux.cpu.utilization.thread` module, CPU
-- use per thread. It provides `cpu_thread_utilization_per_period(interval,
-- utid)` and `cpu_thread_utilization_per_second(utid)` (the thread's
-- running time per period, over the period and over the period times the
-- CPU count), `cpu_cycles_per_thread` (cycles, running time and
-- frequencies over the trace), `cpu_cycles_per_thread_in_interval(ts,
-- dur)` and `cpu_thread_utilization_in_interval(ts, dur)` (running time
-- while awake, as a percentage of the interval's awake time).

INCLUDE PERFETTO MODULE linux.cpu.utilization.general;
INCLUDE PERFETTO MODULE linux.cpu.utilization.thread_cpu;
INCLUDE PERFETTO MODULE time.conversion;
INCLUDE PERFETTO MODULE intervals.intersect;

CREATE PERFETTO FUNCTION cpu_thread_utilization_per_period(
  interval LONG,
  utid JOINID(thread.id)
)
RETURNS TABLE(
  ts TIMESTAMP,
  utilization DOUBLE,
  unnormalized_utilization DOUBLE
) AS
WITH ran AS (
  SELECT ts, ts_end, utid FROM sched WHERE utid = $utid
)
SELECT * FROM _cpu_avg_utilization_per_period!($interval, ran);

CREATE PERFETTO FUNCTION cpu_thread_utilization_per_second(utid JOINID(thread.id))
RETURNS TABLE(
  ts TIMESTAMP,
  utilization DOUBLE,
  unnormalized_utilization DOUBLE
) AS
SELECT * FROM cpu_thread_utilization_per_period(time_from_s(1), $utid);

CREATE PERFETTO TABLE cpu_cycles_per_thread(
  utid JOINID(thread.id),
  millicycles LONG,
  megacycles LONG,
  runtime DURATION,
  min_freq LONG,
  max_freq LONG,
  avg_freq LONG
) AS
SELECT
  utid,
  sum(millicycles) AS millicycles,
  cast(sum(millicycles) / 1e9 AS INT) AS megacycles,
  sum(runtime) AS runtime,
  min(min_freq) AS min_freq,
  max(max_freq) AS max_freq,
  cast(sum(millicycles) / (sum(runtime) / 1000) AS INT) AS avg_freq
FROM cpu_cycles_per_thread_per_cpu
GROUP BY utid;

CREATE PERFETTO FUNCTION cpu_cycles_per_thread_in_interval(ts TIMESTAMP, dur LONG)
RETURNS TABLE(
  utid JOINID(thread.id),
  millicycles LONG,
  megacycles LONG,
  runtime DURATION,
  awake_runtime DURATION,
  min_freq LONG,
  max_freq LONG,
  avg_freq LONG
) AS
SELECT
  f.utid,
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
JOIN _cpu_freq_per_thread AS f USING (id)
GROUP BY f.utid;

CREATE PERFETTO FUNCTION cpu_thread_utilization_in_interval(ts TIMESTAMP, dur LONG)
RETURNS TABLE(
  upid JOINID(process.id),
  utid JOINID(thread.id),
  thread_name STRING,
  awake_dur LONG,
  awake_utilization DOUBLE,
  awake_unnormalized_utilization DOUBLE
) AS
SELECT
  t.upid,
  c.utid,
  t.name AS thread_name,
  sum(c.awake_runtime) AS awake_dur,
  round(
    sum(c.awake_runtime) * 100.0 / (to_monotonic($ts + $dur) - to_monotonic($ts))
      / _zt_cpu_count(),
    6
  ) AS awake_utilization,
  round(sum(c.awake_runtime) * 100.0 / (to_monotonic($ts + $dur) - to_monotonic($ts)), 6)
    AS awake_unnormalized_utilization
FROM cpu_cycles_per_thread_in_interval($ts, $dur) AS c
JOIN thread AS t USING (utid)
GROUP BY c.utid;

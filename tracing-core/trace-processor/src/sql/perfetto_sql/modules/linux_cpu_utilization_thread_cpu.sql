-- Written for zerotrace: the `linux.cpu.utilization.thread_cpu` module.
-- It provides `cpu_cycles_per_thread_per_cpu` (per thread and CPU: the
-- cycles it ran, as the sum of time times frequency, in millicycles and
-- megacycles, its running time and its lowest, highest and average
-- frequency in kHz) and `cpu_cycles_per_thread_per_cpu_in_interval(ts,
-- dur)`, the same counting only the running time inside the interval.
-- A CPU the `cpu` table lacks (an ftrace-only trace) is named by its
-- `sched.ucpu`, the host's CPU number.

INCLUDE PERFETTO MODULE linux.cpu.utilization.general;
INCLUDE PERFETTO MODULE intervals.intersect;

CREATE PERFETTO TABLE cpu_cycles_per_thread_per_cpu(
  utid JOINID(thread.id),
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
  f.utid,
  f.ucpu,
  coalesce(cpu.cpu, f.ucpu) AS cpu,
  cast(sum(f.dur * f.freq / 1000) AS INT) AS millicycles,
  cast(sum(f.dur * f.freq / 1000) / 1e9 AS INT) AS megacycles,
  sum(f.dur) AS runtime,
  min(f.freq) AS min_freq,
  max(f.freq) AS max_freq,
  cast(sum(f.dur * f.freq / 1000) / (sum(f.dur) / 1000) AS INT) AS avg_freq
FROM _cpu_freq_per_thread AS f
LEFT JOIN cpu USING (ucpu)
GROUP BY f.utid, f.ucpu;

CREATE PERFETTO FUNCTION cpu_cycles_per_thread_per_cpu_in_interval(
  ts TIMESTAMP,
  dur LONG
)
RETURNS TABLE(
  utid JOINID(thread.id),
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
  f.utid,
  f.ucpu,
  coalesce(cpu.cpu, f.ucpu) AS cpu,
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
LEFT JOIN cpu USING (ucpu)
GROUP BY f.utid, f.ucpu;

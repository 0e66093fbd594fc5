-- Written for zerotrace: the `linux.cpu.frequency` module. It provides
-- `cpu_frequency_counters`: the `cpufreq` counter of each CPU as intervals
-- of constant frequency (kHz, through `counter_leading_intervals!`), with
-- the CPU's number and its unique id (`cpu.ucpu`, by machine; for a CPU
-- the `cpu` table lacks, as in an ftrace-only trace, its number, which is
-- what `sched.ucpu` holds for the host's CPUs).

INCLUDE PERFETTO MODULE counters.intervals;

CREATE PERFETTO TABLE cpu_frequency_counters(
  id LONG,
  track_id JOINID(track.id),
  ts TIMESTAMP,
  dur DURATION,
  freq LONG,
  ucpu LONG,
  cpu LONG
) AS
SELECT
  iv.id,
  iv.track_id,
  iv.ts,
  iv.dur,
  cast(iv.value AS INT) AS freq,
  coalesce(cpu.ucpu, t.cpu) AS ucpu,
  t.cpu
FROM counter_leading_intervals!((
  SELECT counter.id, counter.ts, counter.track_id, counter.value
  FROM counter
  JOIN cpu_counter_track AS freq_track
    ON freq_track.id = counter.track_id AND freq_track.name = 'cpufreq'
)) AS iv
JOIN cpu_counter_track AS t ON t.id = iv.track_id
LEFT JOIN cpu ON t.machine_id IS cpu.machine_id AND t.cpu = cpu.cpu;

-- Written for zerotrace: the `linux.cpu.idle` module. It provides
-- `cpu_idle_counters`: the `cpuidle` counter of each CPU as intervals of
-- constant idle state (through `counter_leading_intervals!`), the kernel's
-- "exit idle" value 4294967295 shown as -1 (the CPU is active); deeper
-- states have larger numbers.

INCLUDE PERFETTO MODULE counters.intervals;

CREATE PERFETTO TABLE cpu_idle_counters(
  id LONG,
  track_id JOINID(track.id),
  ts TIMESTAMP,
  dur DURATION,
  idle LONG,
  cpu LONG
) AS
SELECT
  iv.id,
  iv.track_id,
  iv.ts,
  iv.dur,
  cast(CASE WHEN iv.value = 4294967295 THEN -1 ELSE iv.value END AS INT) AS idle,
  t.cpu
FROM counter_leading_intervals!((
  SELECT counter.id, counter.ts, counter.track_id, counter.value
  FROM counter
  JOIN cpu_counter_track AS idle_track
    ON idle_track.id = counter.track_id AND idle_track.name = 'cpuidle'
)) AS iv
JOIN cpu_counter_track AS t ON t.id = iv.track_id;

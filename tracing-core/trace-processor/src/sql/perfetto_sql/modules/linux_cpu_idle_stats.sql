-- Written for zerotrace: the `linux.cpu.idle_stats` module. It provides
-- `cpu_idle_stats`: per CPU and idle state (C-state, the counter's value
-- plus one), how often the state was entered, the time spent in it, the
-- average stay, and its share (percent) of the CPU's whole counted time,
-- active time included.

INCLUDE PERFETTO MODULE linux.cpu.idle;

CREATE PERFETTO TABLE cpu_idle_stats(
  cpu LONG,
  state LONG,
  count LONG,
  dur DURATION,
  avg_dur DURATION,
  idle_percent DOUBLE
) AS
WITH
  per_state AS (
    SELECT
      cpu,
      idle + 1 AS state,
      count(idle) AS count,
      sum(dur) AS dur,
      sum(dur) / count(idle) AS avg_dur
    FROM cpu_idle_counters
    WHERE idle >= 0
    GROUP BY cpu, idle
  ),
  per_cpu AS (
    SELECT cpu, sum(dur) AS all_dur
    FROM cpu_idle_counters
    GROUP BY cpu
  )
SELECT
  per_state.cpu,
  per_state.state,
  per_state.count,
  per_state.dur,
  per_state.avg_dur,
  per_state.dur * 100.0 / per_cpu.all_dur AS idle_percent
FROM per_state
JOIN per_cpu USING (cpu);

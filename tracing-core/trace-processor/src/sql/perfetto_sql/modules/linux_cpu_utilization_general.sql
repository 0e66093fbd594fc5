-- Written for zerotrace: the `linux.cpu.utilization.general` module, the
-- shared parts of the CPU utilization modules. It provides the period
-- helpers (`_partition_start`, `_partition_count`, `_partitions(size)`:
-- the periods of `size` ns from the one holding the trace's start to the
-- one holding its end), `_interval_partitions!` (each interval clipped to
-- the end of the period it starts in), `_cpu_avg_utilization_per_period!`
-- (running time per period, over the period's length and over that times
-- the CPU count), and `_cpu_freq_per_thread`: every sched slice of a
-- non-idle thread cut where its CPU's frequency changes, each piece with
-- the frequency (kHz) it ran at (NULL before the CPU's first frequency).

INCLUDE PERFETTO MODULE linux.cpu.frequency;

-- The number of CPUs: by the `cpu` table, else (an ftrace-only trace) by
-- the CPUs `sched` saw.
CREATE PERFETTO FUNCTION _zt_cpu_count()
RETURNS LONG AS
SELECT coalesce((SELECT max(cpu) + 1 FROM cpu), (SELECT max(cpu) + 1 FROM sched));

CREATE PERFETTO FUNCTION _partition_start(ts TIMESTAMP, size LONG)
RETURNS LONG AS
SELECT ($ts / $size) * $size;

CREATE PERFETTO FUNCTION _partition_count(size LONG)
RETURNS LONG AS
SELECT (_partition_start(trace_end(), $size) - _partition_start(trace_start(), $size)) / $size + 1;

-- How many periods of `size` there are: those covering the trace, but
-- never more than `sched` has rows (upstream numbers the periods by
-- `sched`'s ids, which also bounds a tiny `size`).
CREATE PERFETTO FUNCTION _zt_period_count(size LONG)
RETURNS LONG AS
SELECT min(_partition_count($size), (SELECT count(*) FROM sched));

CREATE PERFETTO FUNCTION _partitions(size LONG)
RETURNS TABLE(ts TIMESTAMP, ts_end LONG) AS
WITH RECURSIVE
  bound(k) AS MATERIALIZED (SELECT _zt_period_count($size) WHERE $size > 0),
  period(ts, n) AS (
    SELECT _partition_start(trace_start(), $size), 1 FROM bound WHERE k > 0
    UNION ALL
    SELECT period.ts + $size, period.n + 1 FROM period, bound WHERE period.n < bound.k
  )
SELECT ts, ts + $size AS ts_end FROM period;

CREATE PERFETTO MACRO _interval_partitions(
  partitions TableOrSubquery,
  intervals TableOrSubquery
)
RETURNS TableOrSubquery
AS (
  SELECT
    p.ts AS partition_ts,
    min(i.ts_end, p.ts_end) AS ts_end,
    max(i.ts, p.ts) AS ts
  FROM $intervals AS i
  JOIN $partitions AS p ON p.ts <= i.ts AND i.ts < p.ts_end
);

CREATE PERFETTO MACRO _cpu_avg_utilization_per_period(
  interval Expr,
  sched_table TableOrSubquery
)
RETURNS TableOrSubquery
AS (
  WITH
    -- Computed once, not per interval.
    _zt_period AS MATERIALIZED (
      SELECT
        $interval AS size,
        _partition_start(trace_start(), $interval) AS first_ts,
        _partition_start(trace_start(), $interval)
          + _zt_period_count($interval) * ($interval) AS end_ts
    ),
    _zt_piece AS (
      SELECT
        (i.ts / p.size) * p.size AS partition_ts,
        min(i.ts_end, (i.ts / p.size) * p.size + p.size) - i.ts AS dur
      FROM $sched_table AS i, _zt_period AS p
      WHERE i.ts >= p.first_ts AND i.ts < p.end_ts
    )
  SELECT
    partition_ts AS ts,
    sum(dur) / (cast($interval AS REAL) * (SELECT max(cpu) + 1 FROM sched)) AS utilization,
    sum(dur) / cast($interval AS REAL) AS unnormalized_utilization
  FROM _zt_piece
  GROUP BY partition_ts
  ORDER BY partition_ts
);

CREATE PERFETTO VIEW _cpu_freq_for_metrics AS
SELECT id, ts, dur, cpu, ucpu, freq
FROM cpu_frequency_counters
WHERE freq IS NOT NULL;

CREATE PERFETTO VIEW _sched_without_id AS
SELECT ts, dur, utid, ucpu
FROM sched
WHERE utid NOT IN (SELECT utid FROM thread WHERE is_idle) AND dur != -1;

CREATE VIRTUAL TABLE _cpu_freq_per_thread_span_join USING SPAN_LEFT_JOIN(
  _sched_without_id PARTITIONED ucpu,
  _cpu_freq_for_metrics PARTITIONED ucpu
);

CREATE PERFETTO TABLE _cpu_freq_per_thread AS
SELECT
  row_number() OVER () - 1 AS id,
  ts,
  dur,
  ucpu,
  cpu,
  utid,
  freq,
  id AS counter_id
FROM _cpu_freq_per_thread_span_join;

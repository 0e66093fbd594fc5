-- Written for zerotrace: the `linux.memory.process` module. It provides
-- `memory_rss_and_swap_per_process`: for each process, a timeline of its
-- anonymous, file-backed and shared-memory RSS and its swap (the
-- `mem.rss.anon`, `mem.rss.file`, `mem.rss.shmem` and `mem.swap`
-- counters), one row per span in which none of the four changes, a
-- counter without a value yet being NULL; with the totals rss (anon +
-- file + shmem), anon_rss_and_swap and rss_and_swap, where a missing
-- shmem or swap counts as 0 and a missing anon or file RSS makes the
-- total NULL.

INCLUDE PERFETTO MODULE linux.memory.general;

-- The spans of one process counter (by name): `_all_counters_per_process`
-- restricted to it, each sample lasting until the next of its track, the
-- last until its process ends (or the trace does) plus 1. The name is
-- tested before the window, not after (where SQLite cannot move a test
-- past a window function): only that counter's tracks and samples are
-- read and sorted, not every process counter once per view.
CREATE PERFETTO MACRO _zt_process_counter_spans(counter_name Expr)
RETURNS TableOrSubquery
AS (
  SELECT
    c.ts,
    lead(c.ts, 1, (
      SELECT coalesce(p.end_ts, trace_end()) FROM process AS p WHERE p.upid = t.upid
    ) + 1) OVER (PARTITION BY c.track_id ORDER BY c.ts) - c.ts AS dur,
    t.upid,
    c.value
  FROM process_counter_track AS t
  JOIN counter AS c ON c.track_id = t.id
  WHERE t.name = $counter_name AND t.upid IS NOT NULL
);

CREATE PERFETTO VIEW _anon_rss AS
SELECT ts, dur, upid, value AS anon_rss_val
FROM _zt_process_counter_spans!('mem.rss.anon');

CREATE PERFETTO VIEW _file_rss AS
SELECT ts, dur, upid, value AS file_rss_val
FROM _zt_process_counter_spans!('mem.rss.file');

CREATE PERFETTO VIEW _shmem_rss AS
SELECT ts, dur, upid, value AS shmem_rss_val
FROM _zt_process_counter_spans!('mem.rss.shmem');

CREATE PERFETTO VIEW _swap AS
SELECT ts, dur, upid, value AS swap_val
FROM _zt_process_counter_spans!('mem.swap');

CREATE VIRTUAL TABLE _anon_swap_sj
USING SPAN_OUTER_JOIN(_anon_rss PARTITIONED upid, _swap PARTITIONED upid);

CREATE VIRTUAL TABLE _anon_swap_file_sj
USING SPAN_OUTER_JOIN(_anon_swap_sj PARTITIONED upid, _file_rss PARTITIONED upid);

CREATE VIRTUAL TABLE _rss_swap_sj
USING SPAN_OUTER_JOIN(_anon_swap_file_sj PARTITIONED upid, _shmem_rss PARTITIONED upid);

CREATE PERFETTO TABLE _memory_rss_and_swap_per_process_table AS
SELECT
  ts,
  dur,
  upid,
  cast(anon_rss_val AS INT) AS anon_rss,
  cast(file_rss_val AS INT) AS file_rss,
  cast(shmem_rss_val AS INT) AS shmem_rss,
  cast(swap_val AS INT) AS swap
FROM _rss_swap_sj;

CREATE PERFETTO VIEW memory_rss_and_swap_per_process(
  ts TIMESTAMP,
  dur DURATION,
  upid JOINID(process.id),
  pid LONG,
  process_name STRING,
  anon_rss LONG,
  file_rss LONG,
  shmem_rss LONG,
  rss LONG,
  swap LONG,
  anon_rss_and_swap LONG,
  rss_and_swap LONG
) AS
SELECT
  m.ts,
  m.dur,
  m.upid,
  p.pid,
  p.name AS process_name,
  m.anon_rss,
  m.file_rss,
  m.shmem_rss,
  m.anon_rss + m.file_rss + coalesce(m.shmem_rss, 0) AS rss,
  m.swap,
  m.anon_rss + coalesce(m.swap, 0) AS anon_rss_and_swap,
  m.anon_rss + m.file_rss + coalesce(m.shmem_rss, 0) + coalesce(m.swap, 0) AS rss_and_swap
FROM _memory_rss_and_swap_per_process_table AS m
JOIN process AS p USING (upid);

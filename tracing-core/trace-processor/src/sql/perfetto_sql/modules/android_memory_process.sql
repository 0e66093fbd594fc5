-- Written for zerotrace: the `android.memory.process` module. It lays a
-- process's OOM adjustment score intervals (`android.oom_adjuster`) and
-- its RSS and swap timeline (`linux.memory.process`) over each other:
-- `memory_oom_score_with_rss_and_swap_per_process` has one row per span
-- of a process in which neither its score nor any of its memory counters
-- changed. A span that only one side covers keeps the other side's
-- columns NULL (an outer span join, partitioned by process). The totals
-- follow `linux.memory.process`: rss is anon + file + shmem,
-- anon_rss_and_swap is anon + swap, rss_and_swap is all four, a missing
-- shmem or swap counting as 0 and a missing anon or file RSS making the
-- total NULL.

INCLUDE PERFETTO MODULE android.oom_adjuster;

INCLUDE PERFETTO MODULE linux.memory.process;

-- The score side: only the columns the table keeps, so that the span
-- join's other side names none of them.
CREATE PERFETTO VIEW _zt_oom_score_spans AS
SELECT
  ts,
  dur,
  upid,
  score,
  bucket,
  process_name,
  oom_adj_id,
  oom_adj_ts,
  oom_adj_dur,
  oom_adj_track_id,
  oom_adj_thread_name,
  oom_adj_reason,
  oom_adj_trigger
FROM android_oom_adj_intervals;

CREATE VIRTUAL TABLE _zt_oom_score_memory_sj
USING SPAN_OUTER_JOIN(
  _zt_oom_score_spans PARTITIONED upid,
  _memory_rss_and_swap_per_process_table PARTITIONED upid
);

-- Each process's OOM adjustment score and its memory together: a new row
-- whenever either the score or one of the RSS and swap counters changes.
CREATE PERFETTO TABLE memory_oom_score_with_rss_and_swap_per_process(
  ts TIMESTAMP,
  dur DURATION,
  score LONG,
  bucket STRING,
  upid JOINID(process.id),
  process_name STRING,
  pid LONG,
  oom_adj_id JOINID(slice.id),
  oom_adj_ts TIMESTAMP,
  oom_adj_dur DURATION,
  oom_adj_track_id JOINID(track.id),
  oom_adj_thread_name STRING,
  oom_adj_reason STRING,
  oom_adj_trigger STRING,
  anon_rss LONG,
  file_rss LONG,
  shmem_rss LONG,
  rss LONG,
  swap LONG,
  anon_rss_and_swap LONG,
  rss_and_swap LONG
) AS
SELECT
  j.ts,
  j.dur,
  j.score,
  j.bucket,
  j.upid,
  j.process_name,
  p.pid,
  j.oom_adj_id,
  j.oom_adj_ts,
  j.oom_adj_dur,
  j.oom_adj_track_id,
  j.oom_adj_thread_name,
  j.oom_adj_reason,
  j.oom_adj_trigger,
  j.anon_rss,
  j.file_rss,
  j.shmem_rss,
  j.anon_rss + j.file_rss + coalesce(j.shmem_rss, 0) AS rss,
  j.swap,
  j.anon_rss + coalesce(j.swap, 0) AS anon_rss_and_swap,
  j.anon_rss + j.file_rss + coalesce(j.shmem_rss, 0) + coalesce(j.swap, 0) AS rss_and_swap
FROM _zt_oom_score_memory_sj AS j
JOIN process AS p USING (upid);

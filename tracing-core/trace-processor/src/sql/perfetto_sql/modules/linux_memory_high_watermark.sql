-- Written for zerotrace: the `linux.memory.high_watermark` module. It
-- provides `memory_rss_high_watermark_per_process`: for each process, the
-- highest RSS (anon + file + shmem, a missing one counting as 0) reached
-- up to each time, as intervals of constant value.

INCLUDE PERFETTO MODULE counters.intervals;
INCLUDE PERFETTO MODULE linux.memory.process;

CREATE PERFETTO TABLE _memory_rss_high_watermark_per_process_table AS
WITH
  rss AS (
    SELECT
      ts,
      upid,
      coalesce(anon_rss, 0) + coalesce(file_rss, 0) + coalesce(shmem_rss, 0) AS total
    FROM _memory_rss_and_swap_per_process_table
  ),
  -- The running maximum as a counter-like table, one "track" per process.
  running_max AS (
    SELECT
      0 AS id,
      ts,
      upid AS track_id,
      max(total) OVER (PARTITION BY upid ORDER BY ts) AS value
    FROM rss
  )
SELECT ts, dur, track_id AS upid, cast(value AS INT) AS rss_high_watermark
FROM counter_leading_intervals!(running_max);

CREATE PERFETTO VIEW memory_rss_high_watermark_per_process(
  ts TIMESTAMP,
  dur DURATION,
  upid JOINID(process.id),
  pid LONG,
  process_name STRING,
  rss_high_watermark LONG
) AS
SELECT h.ts, h.dur, h.upid, p.pid, p.name AS process_name, h.rss_high_watermark
FROM _memory_rss_high_watermark_per_process_table AS h
JOIN process AS p USING (upid);

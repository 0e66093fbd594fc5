-- Written for zerotrace: the `android.memory.memory_breakdown` module.
-- `android_process_memory_intervals`: each process memory counter
-- (anon, swap, file and shmem RSS, ART's heap size, DMA-BUF RSS, locked
-- and GPU memory) as intervals of constant value, clipped to the
-- process's lifetime, in bytes; `zygote_adjusted_value` takes off, for
-- anon RSS, swap, file RSS and heap, the average of the same counter of
-- the primary zygote (`zygote`/`zygote64`) that forked the process, the
-- memory it shares with it copy-on-write; `track_has_spike_gt_100mib`
-- flags tracks with a step of more than 100 MiB.
-- `android_process_memory_intervals_by_oom_bucket`: the same intervals cut
-- by the process's OOM adjustment bucket (`unknown` where none).

INCLUDE PERFETTO MODULE android.oom_adjuster;
INCLUDE PERFETTO MODULE counters.intervals;

CREATE PERFETTO TABLE android_process_memory_intervals(
  id JOINID(counter.id),
  ts TIMESTAMP,
  dur DURATION,
  process_name STRING,
  upid JOINID(process.upid),
  pid JOINID(process.pid),
  memory_track_name STRING,
  track_id JOINID(track.id),
  value LONG,
  zygote_adjusted_value LONG,
  track_has_spike_gt_100mib BOOL
) AS
WITH
  tracks AS (
    SELECT id AS track_id, IIF(name = 'Heap size (KB)', 'mem.heap', name) AS name, upid
    FROM process_counter_track
    WHERE name IN (
      'mem.rss.anon', 'mem.swap', 'mem.rss.file', 'mem.rss.shmem',
      'Heap size (KB)', 'mem.dmabuf_rss', 'mem.locked', 'GPU Memory'
    )
  ),
  -- Values in bytes (the heap size is in KB).
  readings AS (
    SELECT
      c.id,
      c.track_id,
      c.ts,
      CAST(c.value AS INT) * IIF(t.name = 'mem.heap', 1024, 1) AS value
    FROM counter AS c
    JOIN tracks AS t USING (track_id)
  ),
  intervals AS (
    SELECT id AS counter_id, ts, dur, track_id, CAST(value AS INT) AS value, delta_value
    FROM counter_leading_intervals!(readings)
  ),
  spiky AS (
    SELECT DISTINCT track_id FROM intervals WHERE abs(delta_value) > 100 * 1024 * 1024
  ),
  clipped AS (
    SELECT
      i.counter_id,
      MAX(i.ts, COALESCE(p.start_ts, i.ts)) AS ts,
      MIN(i.ts + i.dur, COALESCE(p.end_ts, i.ts + i.dur))
        - MAX(i.ts, COALESCE(p.start_ts, i.ts)) AS dur,
      t.upid,
      t.name AS memory_track_name,
      i.track_id,
      i.value,
      i.track_id IN (SELECT track_id FROM spiky) AS track_has_spike_gt_100mib
    FROM intervals AS i
    JOIN tracks AS t USING (track_id)
    JOIN process AS p ON p.upid = t.upid
  ),
  zygotes AS (
    SELECT upid FROM process WHERE name IN ('zygote', 'zygote64')
  ),
  -- Each primary zygote's average per adjustable counter.
  baselines AS (
    SELECT t.upid AS zygote_upid, t.name AS memory_track_name, AVG(r.value) AS baseline
    FROM readings AS r
    JOIN tracks AS t USING (track_id)
    WHERE t.upid IN (SELECT upid FROM zygotes)
      AND t.name IN ('mem.rss.anon', 'mem.swap', 'mem.rss.file', 'mem.heap')
    GROUP BY t.upid, t.name
  )
SELECT
  c.counter_id AS id,
  c.ts,
  c.dur,
  p.name AS process_name,
  c.upid,
  p.pid,
  c.memory_track_name,
  c.track_id,
  c.value,
  IIF(
    c.upid IN (SELECT upid FROM zygotes),
    c.value,
    MAX(0, c.value - CAST(COALESCE(b.baseline, 0) AS INT))
  ) AS zygote_adjusted_value,
  c.track_has_spike_gt_100mib
FROM clipped AS c
JOIN process AS p ON p.upid = c.upid
LEFT JOIN baselines AS b
  ON b.zygote_upid = p.parent_upid AND b.memory_track_name = c.memory_track_name
WHERE c.dur > 0;

-- The OOM bucket intervals of the processes with memory intervals, per
-- memory track (the right side of the span join below).
CREATE PERFETTO TABLE _memory_breakdown_oom_intervals_prepared AS
SELECT t.track_id, o.ts, o.dur, o.bucket
FROM android_oom_adj_intervals AS o
JOIN (SELECT DISTINCT track_id, upid FROM android_process_memory_intervals) AS t
  USING (upid)
WHERE o.dur > 0;

CREATE VIRTUAL TABLE _memory_breakdown_mem_oom_span_join USING SPAN_LEFT_JOIN(
  android_process_memory_intervals PARTITIONED track_id,
  _memory_breakdown_oom_intervals_prepared PARTITIONED track_id
);

CREATE PERFETTO TABLE android_process_memory_intervals_by_oom_bucket(
  id LONG,
  ts TIMESTAMP,
  dur DURATION,
  process_name STRING,
  upid JOINID(process.upid),
  pid JOINID(process.pid),
  bucket STRING,
  memory_track_name STRING,
  track_id JOINID(track.id),
  counter_id JOINID(counter.id),
  value LONG,
  zygote_adjusted_value LONG,
  track_has_spike_gt_100mib BOOL
) AS
SELECT
  ROW_NUMBER() OVER () AS id,
  m.ts,
  m.dur,
  m.process_name,
  m.upid,
  m.pid,
  COALESCE(m.bucket, 'unknown') AS bucket,
  m.memory_track_name,
  m.track_id,
  m.id AS counter_id,
  m.value,
  m.zygote_adjusted_value,
  m.track_has_spike_gt_100mib
FROM _memory_breakdown_mem_oom_span_join AS m
WHERE m.dur > 0;

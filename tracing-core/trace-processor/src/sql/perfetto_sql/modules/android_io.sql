-- Written for zerotrace: the `android.io` module, f2fs's figures.
-- `_android_io_f2fs_counter_stats`: per f2fs counter (tracks whose name
-- holds `f2fs`, named by what follows their first `].`), the sum, max,
-- min, count and mean of its values and the time from its first to its
-- last. `_android_io_f2fs_write_stats`: per thread, inode and device, the
-- bytes `f2fs_write_end` ftrace events copied and how many there were;
-- `_android_io_f2fs_aggregate_write_stats` those totals over the trace
-- with the distinct processes, devices, inodes and threads.

CREATE PERFETTO VIEW _android_io_f2fs_counter_stats(
  name STRING,
  sum DOUBLE,
  max DOUBLE,
  min DOUBLE,
  dur DURATION,
  count LONG,
  avg DOUBLE
)
AS
SELECT
  str_split(t.name, '].', 1) AS name,
  sum(c.value) AS sum,
  max(c.value) AS max,
  min(c.value) AS min,
  max(c.ts) - min(c.ts) AS dur,
  count(c.ts) AS count,
  avg(c.value) AS avg
FROM counter AS c
JOIN counter_track AS t ON t.id = c.track_id AND t.name GLOB '*f2fs*'
GROUP BY 1
ORDER BY sum DESC;

CREATE PERFETTO VIEW _android_io_f2fs_write_stats(
  utid JOINID(thread.id),
  tid LONG,
  thread_name STRING,
  upid JOINID(process.id),
  pid LONG,
  process_name STRING,
  ino LONG,
  dev LONG,
  bytes LONG,
  write_count LONG
)
AS
WITH writes AS (
  SELECT
    utid,
    extract_arg(arg_set_id, 'len') AS len,
    extract_arg(arg_set_id, 'dev') AS dev,
    extract_arg(arg_set_id, 'ino') AS ino,
    extract_arg(arg_set_id, 'copied') AS copied
  FROM ftrace_event
  WHERE name GLOB 'f2fs_write_end*'
)
SELECT
  t.utid,
  t.tid,
  t.name AS thread_name,
  p.upid,
  p.pid,
  p.name AS process_name,
  w.ino,
  w.dev,
  sum(w.copied) AS bytes,
  count(w.len) AS write_count
FROM writes AS w
JOIN thread AS t USING (utid)
JOIN process AS p USING (upid)
GROUP BY t.utid, w.ino, w.dev
ORDER BY bytes DESC;

CREATE PERFETTO VIEW _android_io_f2fs_aggregate_write_stats(
  total_write_count LONG,
  distinct_processes LONG,
  total_bytes_written LONG,
  distinct_device_count LONG,
  distinct_inode_count LONG,
  distinct_thread_count LONG
)
AS
SELECT
  sum(write_count) AS total_write_count,
  count(DISTINCT pid) AS distinct_processes,
  sum(bytes) AS total_bytes_written,
  count(DISTINCT dev) AS distinct_device_count,
  count(DISTINCT ino) AS distinct_inode_count,
  count(DISTINCT tid) AS distinct_thread_count
FROM _android_io_f2fs_write_stats;

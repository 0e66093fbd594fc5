-- Written for zerotrace: the `android.thread` module.
-- `android_standardize_thread_name(name)`: a thread's name cut down to the
-- part that names its kind, so threads can be counted by kind: `kworker/…`
-- is `kworker`; otherwise the name is cut before its first '-', then '[',
-- then ':', then ' ', and what hex-looking numbers remain are masked by
-- `__intrinsic_strip_hex` ("RenderThread-1[123]" is "RenderThread",
-- "binder:5543_E" is "binder").
-- `_android_thread_creation_spam_per_thread(max_thread_dur,
-- sliding_window_dur)` and `_android_thread_creation_spam_per_process(…)`:
-- for each process (and kind of thread), the most threads it started
-- within any window of `sliding_window_dur` that opens at one of its
-- thread starts, counting only threads that lived at most
-- `max_thread_dur` (all threads when it is NULL).

CREATE PERFETTO FUNCTION android_standardize_thread_name(thread_name STRING)
RETURNS STRING
AS
SELECT iif(
  $thread_name GLOB 'kworker/*',
  'kworker',
  __intrinsic_strip_hex(
    str_split(
      str_split(
        str_split(str_split($thread_name, '-', 0), '[', 0),
        ':',
        0
      ),
      ' ',
      0
    ),
    1
  )
);

-- The threads a spam count looks at: their process, kind and start.
CREATE PERFETTO FUNCTION _zt_thread_starts(max_thread_dur DOUBLE)
RETURNS TABLE(
  upid LONG,
  process_name STRING,
  thread_name_prefix STRING,
  start_ts LONG
)
AS
SELECT
  t.upid,
  p.name AS process_name,
  android_standardize_thread_name(t.name) AS thread_name_prefix,
  t.start_ts
FROM thread AS t
JOIN process AS p USING (upid)
WHERE $max_thread_dur IS NULL
  OR ($max_thread_dur AND t.end_ts - t.start_ts <= $max_thread_dur);

CREATE PERFETTO FUNCTION _android_thread_creation_spam_per_thread(
  max_thread_dur DOUBLE,
  sliding_window_dur DOUBLE
)
RETURNS TABLE(
  process_name STRING,
  upid JOINID(process.id),
  thread_name_prefix STRING,
  max_count_per_sec LONG
)
AS
WITH windows AS (
  SELECT
    upid,
    process_name,
    thread_name_prefix,
    count(start_ts) OVER (
      PARTITION BY upid, thread_name_prefix
      ORDER BY start_ts
      RANGE BETWEEN CURRENT ROW AND cast_int!($sliding_window_dur) FOLLOWING
    ) AS n
  FROM _zt_thread_starts($max_thread_dur)
)
SELECT
  process_name,
  upid,
  thread_name_prefix,
  max(n) AS max_count_per_sec
FROM windows
GROUP BY upid, thread_name_prefix
HAVING max_count_per_sec > 0
ORDER BY n DESC;

CREATE PERFETTO FUNCTION _android_thread_creation_spam_per_process(
  max_thread_dur DOUBLE,
  sliding_window_dur DOUBLE
)
RETURNS TABLE(
  process_name STRING,
  upid JOINID(process.id),
  max_count_per_sec LONG
)
AS
WITH windows AS (
  SELECT
    upid,
    process_name,
    count(start_ts) OVER (
      PARTITION BY upid
      ORDER BY start_ts
      RANGE BETWEEN CURRENT ROW AND cast_int!($sliding_window_dur) FOLLOWING
    ) AS n
  FROM _zt_thread_starts($max_thread_dur)
)
SELECT process_name, upid, max(n) AS max_count_per_sec
FROM windows
GROUP BY upid
HAVING max_count_per_sec > 0
ORDER BY n DESC;

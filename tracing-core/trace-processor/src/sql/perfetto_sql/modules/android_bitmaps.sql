-- Written for zerotrace: the `android.bitmaps` module, from the `view`
-- atrace category's per-process counters.
-- `android_bitmap_memory` (`Bitmap Memory`, bytes) and
-- `android_bitmap_count` (`Bitmap Count`): each sample of the counter
-- held until the next as `counters.intervals` makes them, with its process.
-- `android_bitmap_counters_per_process`: both at once, on the intervals
-- where a process's two counters overlap (the two are written one after
-- the other, so the short intervals between their updates are kept).

INCLUDE PERFETTO MODULE counters.intervals;
INCLUDE PERFETTO MODULE intervals.intersect;

-- The intervals of the process counter named `name`.
CREATE PERFETTO MACRO _android_bitmap_counter_macro(name Expr)
RETURNS TableOrSubquery
AS (
  SELECT id, track_id, ts, dur, value
  FROM counter_leading_intervals!((
    SELECT c.id, c.track_id, c.ts, c.value
    FROM counter AS c
    JOIN process_counter_track AS t ON t.id = c.track_id
    WHERE t.name = $name
  ))
);

CREATE PERFETTO TABLE android_bitmap_memory(
  id ID(counter.id),
  upid JOINID(process.upid),
  ts TIMESTAMP,
  dur DURATION,
  track_id JOINID(counter.track_id),
  value LONG
)
AS
SELECT i.id, t.upid, i.ts, i.dur, i.track_id, i.value
FROM _android_bitmap_counter_macro!('Bitmap Memory') AS i
JOIN process_counter_track AS t ON t.id = i.track_id
ORDER BY i.id;

CREATE PERFETTO TABLE android_bitmap_count(
  id ID(counter.id),
  upid JOINID(process.upid),
  ts TIMESTAMP,
  dur DURATION,
  track_id JOINID(counter.track_id),
  value LONG
)
AS
SELECT i.id, t.upid, i.ts, i.dur, i.track_id, i.value
FROM _android_bitmap_counter_macro!('Bitmap Count') AS i
JOIN process_counter_track AS t ON t.id = i.track_id
ORDER BY i.id;

CREATE PERFETTO TABLE android_bitmap_counters_per_process(
  upid JOINID(process.upid),
  process_name STRING,
  ts TIMESTAMP,
  dur DURATION,
  bitmap_memory LONG,
  bitmap_count LONG,
  bitmap_memory_id JOINID(counter.id),
  bitmap_count_id JOINID(counter.id)
)
AS
SELECT
  ii.upid,
  p.name AS process_name,
  ii.ts,
  ii.dur,
  m.value AS bitmap_memory,
  n.value AS bitmap_count,
  m.id AS bitmap_memory_id,
  n.id AS bitmap_count_id
FROM _interval_intersect!((android_bitmap_memory, android_bitmap_count), (upid)) AS ii
JOIN android_bitmap_memory AS m ON m.id = ii.id_0
JOIN android_bitmap_count AS n ON n.id = ii.id_1
JOIN process AS p ON p.upid = ii.upid;

-- Written for zerotrace: the `android.memory.heap_graph.bitmap` module.
-- Every `android.graphics.Bitmap` object of a Java heap dump, with the
-- scalar fields the dump recorded for it (`heap_graph_primitive`, reached
-- through the object's `heap_graph_object_data`) pivoted into columns.
-- Android's hwui numbers a bitmap `mId = pid * 10^7 + storage * 10^6 +
-- counter`, so the allocating pid and the kind of pixel storage come out
-- of the id; `mSourceId` is the sender's `mId` for a bitmap received in
-- a parcel (-1 when none), and the sender's process is the one with that
-- pid alive at the dump's time. A dump that recorded no fields (the
-- proto heap graphs of older devices) still lists its bitmaps, the field
-- columns NULL.

-- The process with pid `pid` alive at `at_ts` (started at or before it,
-- not ended before it; a missing start or end is the trace's), the most
-- recent one when several are; NULL when none.
CREATE PERFETTO FUNCTION _android_bitmap_resolve_sender_upid(
  pid LONG,
  at_ts TIMESTAMP
)
RETURNS LONG
AS
SELECT p.upid
FROM process AS p
WHERE
  p.pid = $pid
  AND $at_ts >= coalesce(p.start_ts, trace_start())
  AND $at_ts <= coalesce(p.end_ts, trace_end())
ORDER BY p.upid DESC
LIMIT 1;

-- hwui's name of a bitmap's pixel storage kind (0 to 3), NULL for any
-- other number.
CREATE PERFETTO FUNCTION _android_bitmap_storage_type_name(
  storage_type LONG
)
RETURNS STRING
AS
SELECT
  CASE $storage_type
    WHEN 0 THEN 'wrapped_pixel_ref'
    WHEN 1 THEN 'heap'
    WHEN 2 THEN 'ashmem'
    WHEN 3 THEN 'hardware'
  END;

-- One row per Bitmap object per heap dump: its size, dimensions and
-- density, its id and the pid and storage kind the id encodes, and, for
-- a bitmap received from another process, the sender's id, pid, storage
-- kind, process and process name.
CREATE PERFETTO TABLE heap_graph_bitmaps(
  object_id JOINID(heap_graph_object.id),
  upid JOINID(process.upid),
  graph_sample_ts TIMESTAMP,
  width LONG,
  height LONG,
  density LONG,
  bitmap_id LONG,
  bitmap_pid LONG,
  bitmap_storage_type STRING,
  source_id LONG,
  source_pid LONG,
  source_storage_type STRING,
  source_upid JOINID(process.upid),
  source_process_name STRING,
  self_size LONG,
  native_size LONG,
  reachable BOOL
) AS
WITH
  bitmap AS (
    SELECT
      o.id AS object_id,
      o.upid,
      o.graph_sample_ts,
      o.self_size,
      o.native_size,
      o.reachable,
      d.field_set_id
    FROM heap_graph_object AS o
    JOIN heap_graph_class AS c ON c.id = o.type_id
    LEFT JOIN heap_graph_object_data AS d ON d.id = o.object_data_id
    WHERE 'android.graphics.Bitmap' IN (c.name, c.deobfuscated_name)
  ),
  pivoted AS (
    SELECT
      b.object_id,
      b.upid,
      b.graph_sample_ts,
      b.self_size,
      b.native_size,
      b.reachable,
      max(f.int_value) FILTER (WHERE f.field_name = 'android.graphics.Bitmap.mWidth') AS width,
      max(f.int_value) FILTER (WHERE f.field_name = 'android.graphics.Bitmap.mHeight') AS height,
      max(f.int_value) FILTER (WHERE f.field_name = 'android.graphics.Bitmap.mDensity') AS density,
      max(f.long_value) FILTER (WHERE f.field_name = 'android.graphics.Bitmap.mId') AS bitmap_id,
      nullif(
        max(f.long_value) FILTER (WHERE f.field_name = 'android.graphics.Bitmap.mSourceId'),
        -1
      ) AS source_id
    FROM bitmap AS b
    LEFT JOIN heap_graph_primitive AS f ON f.field_set_id = b.field_set_id
    GROUP BY b.object_id
  ),
  decoded AS (
    SELECT
      *,
      cast_int!(bitmap_id / 10000000) AS bitmap_pid,
      _android_bitmap_storage_type_name(cast_int!(bitmap_id % 10000000 / 1000000))
        AS bitmap_storage_type,
      cast_int!(source_id / 10000000) AS source_pid,
      _android_bitmap_storage_type_name(cast_int!(source_id % 10000000 / 1000000))
        AS source_storage_type
    FROM pivoted
  ),
  resolved AS (
    SELECT
      *,
      iif(
        source_pid IS NULL,
        NULL,
        _android_bitmap_resolve_sender_upid(source_pid, graph_sample_ts)
      ) AS source_upid
    FROM decoded
  )
SELECT
  r.object_id,
  r.upid,
  r.graph_sample_ts,
  r.width,
  r.height,
  r.density,
  r.bitmap_id,
  r.bitmap_pid,
  r.bitmap_storage_type,
  r.source_id,
  r.source_pid,
  r.source_storage_type,
  r.source_upid,
  p.name AS source_process_name,
  r.self_size,
  r.native_size,
  r.reachable
FROM resolved AS r
LEFT JOIN process AS p ON p.upid = r.source_upid
ORDER BY r.object_id;

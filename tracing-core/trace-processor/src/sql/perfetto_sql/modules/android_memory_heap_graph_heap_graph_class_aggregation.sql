-- android.memory.heap_graph.heap_graph_class_aggregation, written for
-- zerotrace: per Java heap dump and class, its objects and bytes (all,
-- reachable) and what they dominate, each dominated object counted once
-- (only objects no dominator of which has their class add their totals).
--   android_heap_graph_class_aggregation  (upid, graph_sample_ts, type_id,
--     type_name, is_libcore_or_array, obj_count, size_bytes,
--     native_size_bytes, reachable_obj_count, reachable_size_bytes,
--     reachable_native_size_bytes, dominated_obj_count,
--     dominated_size_bytes, dominated_native_size_bytes)

INCLUDE PERFETTO MODULE android.memory.heap_graph.dominator_tree;

-- Whether a class name is the runtime's, the core library's or an array
-- of primitives (or a common container or coroutine library's).
CREATE PERFETTO FUNCTION _is_libcore_or_array(obj_name STRING)
RETURNS BOOL AS
SELECT
  ($obj_name GLOB 'java.*' AND NOT $obj_name GLOB 'java.lang.Class<*>')
  OR $obj_name GLOB 'j$.*'
  OR $obj_name GLOB 'int[[]*'
  OR $obj_name GLOB 'long[[]*'
  OR $obj_name GLOB 'byte[[]*'
  OR $obj_name GLOB 'char[[]*'
  OR $obj_name GLOB 'short[[]*'
  OR $obj_name GLOB 'float[[]*'
  OR $obj_name GLOB 'double[[]*'
  OR $obj_name GLOB 'boolean[[]*'
  OR $obj_name GLOB 'android.util.*Array*'
  OR $obj_name GLOB 'kotlinx.coroutines.*'
  OR $obj_name GLOB 'kotlinx.atomicfu.*';

CREATE PERFETTO TABLE _heap_object_marked_for_dominated_stats AS
SELECT id, marked
FROM __intrinsic_heap_graph_dominator_first_of_class()
ORDER BY id;

CREATE PERFETTO TABLE android_heap_graph_class_aggregation(
  upid JOINID(process.id),
  graph_sample_ts TIMESTAMP,
  type_id LONG,
  type_name STRING,
  is_libcore_or_array BOOL,
  obj_count LONG,
  size_bytes LONG,
  native_size_bytes LONG,
  reachable_obj_count LONG,
  reachable_size_bytes LONG,
  reachable_native_size_bytes LONG,
  dominated_obj_count LONG,
  dominated_size_bytes LONG,
  dominated_native_size_bytes LONG
) AS
SELECT
  o.upid,
  o.graph_sample_ts,
  o.type_id,
  coalesce(c.deobfuscated_name, c.name) AS type_name,
  _is_libcore_or_array(coalesce(c.deobfuscated_name, c.name)) AS is_libcore_or_array,
  count(*) AS obj_count,
  sum(o.self_size) AS size_bytes,
  sum(o.native_size) AS native_size_bytes,
  sum(CASE WHEN o.reachable THEN 1 ELSE 0 END) AS reachable_obj_count,
  sum(CASE WHEN o.reachable THEN o.self_size ELSE 0 END) AS reachable_size_bytes,
  sum(CASE WHEN o.reachable THEN o.native_size ELSE 0 END) AS reachable_native_size_bytes,
  sum(CASE WHEN m.marked THEN d.dominated_obj_count ELSE 0 END) AS dominated_obj_count,
  sum(CASE WHEN m.marked THEN d.dominated_size_bytes ELSE 0 END) AS dominated_size_bytes,
  sum(CASE WHEN m.marked THEN d.dominated_native_size_bytes ELSE 0 END)
    AS dominated_native_size_bytes
FROM heap_graph_object o
JOIN heap_graph_class c ON c.id = o.type_id
LEFT JOIN _heap_object_marked_for_dominated_stats m USING (id)
LEFT JOIN heap_graph_dominator_tree d USING (id)
GROUP BY o.upid, o.graph_sample_ts, o.type_id
ORDER BY o.upid, o.graph_sample_ts, o.type_id;

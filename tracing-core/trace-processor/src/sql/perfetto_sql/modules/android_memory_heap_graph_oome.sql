-- android.memory.heap_graph.oome, written for zerotrace: the Java
-- OutOfMemoryErrors ART reported with a heap dump.
--   android_heap_graph_java_oome_details  (id, heap_graph_id,
--     allocation_size_bytes, total_bytes_free, free_bytes_until_oom,
--     error_msg): the failed allocation, the free bytes and the message.

CREATE PERFETTO VIEW android_heap_graph_java_oome_details(
  id ID,
  heap_graph_id JOINID(heap_graph.id),
  allocation_size_bytes LONG,
  total_bytes_free LONG,
  free_bytes_until_oom LONG,
  error_msg STRING
) AS
SELECT
  id,
  heap_graph_id,
  allocation_size_bytes,
  total_bytes_free,
  free_bytes_until_oom,
  error_msg
FROM __intrinsic_heap_graph_java_oome_details;

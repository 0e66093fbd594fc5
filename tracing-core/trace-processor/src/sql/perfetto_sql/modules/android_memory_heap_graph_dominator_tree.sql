-- android.memory.heap_graph.dominator_tree, written for zerotrace: the
-- dominator tree of every Java heap dump, each object with what it keeps
-- alive on its own.
--   heap_graph_dominator_tree  (id, idom_id, dominated_obj_count,
--     dominated_size_bytes, dominated_native_size_bytes, depth): the
--     object, its immediate dominator, the objects (itself included) and
--     bytes it dominates, and its depth (1 under the roots).

INCLUDE PERFETTO MODULE android.memory.heap_graph.raw_dominator_tree;

CREATE PERFETTO TABLE heap_graph_dominator_tree(
  id LONG,
  idom_id LONG,
  dominated_obj_count LONG,
  dominated_size_bytes LONG,
  dominated_native_size_bytes LONG,
  depth LONG
) AS
SELECT
  id,
  idom_id,
  dominated_obj_count,
  dominated_size_bytes,
  dominated_native_size_bytes,
  depth
FROM __intrinsic_heap_graph_dominator_tree()
ORDER BY id;

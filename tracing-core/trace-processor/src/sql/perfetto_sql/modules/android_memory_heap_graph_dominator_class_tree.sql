-- android.memory.heap_graph.dominator_class_tree, written for zerotrace:
-- the dominator tree of every Java heap dump folded into a tree of
-- classes (as class_tree folds the shortest-path tree).
--   _heap_graph_dominator_class_tree  (graph_sample_ts, upid, id,
--     parent_id, name, root_type, heap_type, self_count, self_size,
--     path_hash_stable)

INCLUDE PERFETTO MODULE android.memory.heap_graph.raw_dominator_tree;

CREATE PERFETTO TABLE _heap_graph_dominator_class_tree AS
SELECT
  graph_sample_ts,
  upid,
  id,
  parent_id,
  name,
  root_type,
  heap_type,
  self_count,
  self_size,
  path_hash_stable
FROM __intrinsic_heap_graph_class_tree('dominator')
ORDER BY id;

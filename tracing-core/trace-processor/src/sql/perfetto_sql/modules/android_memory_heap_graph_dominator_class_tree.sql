-- android.memory.heap_graph.dominator_class_tree, written for zerotrace:
-- the dominator tree of every Java heap dump folded into a tree of
-- classes (as class_tree folds the shortest-path tree).
--   _heap_graph_dominator_class_tree  (graph_sample_ts, upid, id,
--     parent_id, name, root_type, heap_type, self_count, self_size,
--     path_hash_stable)
--   _heap_graph_dominator_path_hashes  (id, path_hash, parent_path_hash)

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

-- Each object of the dominator tree with the key of its class path and
-- of its parent's path (0 for a root's), as `_heap_graph_path_hashes` is
-- for the shortest-path tree. A view: computed when queried.
CREATE PERFETTO VIEW _heap_graph_dominator_path_hashes(
  id JOINID(heap_graph_object.id),
  path_hash LONG,
  parent_path_hash LONG
) AS
SELECT id, path_hash, parent_path_hash
FROM __intrinsic_heap_graph_path_hashes('dominator');

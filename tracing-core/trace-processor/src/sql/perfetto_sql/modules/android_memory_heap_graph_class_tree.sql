-- android.memory.heap_graph.class_tree, written for zerotrace: every Java
-- heap dump's objects on shortest paths from the roots, and those paths
-- folded into a tree of classes (computed by zerotrace's native operators
-- in sql/heap_graph/).
--   _heap_graph_object_min_depth_tree  (id, parent_id): the object that
--     reaches each object first in a breadth-first walk from the roots.
--   _heap_graph_class_tree  (graph_sample_ts, upid, id, parent_id, name,
--     root_type, heap_type, self_count, self_size, path_hash_stable): one
--     node per class path, its objects counted and their bytes summed.
--   _heap_graph_path_hashes  (id, path_hash, parent_path_hash): each
--     object's class path key.

INCLUDE PERFETTO MODULE android.memory.heap_graph.excluded_refs;

CREATE PERFETTO TABLE _heap_graph_object_min_depth_tree AS
SELECT id, parent_id
FROM __intrinsic_heap_graph_min_depth_tree()
ORDER BY id;

CREATE PERFETTO TABLE _heap_graph_class_tree AS
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
FROM __intrinsic_heap_graph_class_tree('min_depth')
ORDER BY id;

-- Each object of the shortest-path tree with the key of its class path
-- and of its parent's path (0 for a root's): the class tree node an
-- object falls in is the one whose path_hash_stable is its path_hash.
-- A view: the keys are computed when queried, not at the include.
CREATE PERFETTO VIEW _heap_graph_path_hashes(
  id JOINID(heap_graph_object.id),
  path_hash LONG,
  parent_path_hash LONG
) AS
SELECT id, path_hash, parent_path_hash
FROM __intrinsic_heap_graph_path_hashes('min_depth');

-- android.memory.heap_graph.class_summary_tree, written for zerotrace:
-- the class tree of every Java heap dump with, per node, the objects and
-- bytes at it and under it.
--   android_heap_graph_class_summary_tree  (graph_sample_ts, upid, id,
--     parent_id, name, root_type, self_count, self_size, cumulative_count,
--     cumulative_size)

INCLUDE PERFETTO MODULE android.memory.heap_graph.class_tree;

CREATE PERFETTO TABLE _heap_graph_class_tree_cumulatives AS
WITH RECURSIVE under(id, node) AS (
  SELECT id, id FROM _heap_graph_class_tree
  UNION ALL
  SELECT u.id, t.id
  FROM under u
  JOIN _heap_graph_class_tree t ON t.parent_id = u.node
)
SELECT
  u.id,
  sum(t.self_count) AS cumulative_count,
  sum(t.self_size) AS cumulative_size
FROM under u
JOIN _heap_graph_class_tree t ON t.id = u.node
GROUP BY u.id
ORDER BY u.id;

CREATE PERFETTO TABLE android_heap_graph_class_summary_tree(
  graph_sample_ts TIMESTAMP,
  upid JOINID(process.id),
  id LONG,
  parent_id LONG,
  name STRING,
  root_type STRING,
  self_count LONG,
  self_size LONG,
  cumulative_count LONG,
  cumulative_size LONG
) AS
SELECT
  t.graph_sample_ts,
  t.upid,
  t.id,
  t.parent_id,
  t.name,
  t.root_type,
  t.self_count,
  t.self_size,
  c.cumulative_count,
  c.cumulative_size
FROM _heap_graph_class_tree t
JOIN _heap_graph_class_tree_cumulatives c USING (id)
ORDER BY t.id;

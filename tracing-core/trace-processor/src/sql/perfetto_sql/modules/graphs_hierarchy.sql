-- Written for zerotrace: the `graphs.hierarchy` module.

INCLUDE PERFETTO MODULE graphs.search;

-- _tree_reachable_ancestors_or_self!(tree, start_nodes): the ids of the
-- start nodes (`start_nodes`' column id) and of every ancestor of theirs
-- in the tree of `tree`'s rows (id, parent_id), one column id.
CREATE PERFETTO MACRO _tree_reachable_ancestors_or_self(
  tree TableOrSubquery,
  start_nodes TableOrSubquery
)
RETURNS TableOrSubquery
AS (
  SELECT node_id AS id
  FROM graph_reachable_dfs!(
    (SELECT id AS source_node_id, parent_id AS dest_node_id FROM $tree),
    (SELECT id AS node_id FROM $start_nodes)
  )
);

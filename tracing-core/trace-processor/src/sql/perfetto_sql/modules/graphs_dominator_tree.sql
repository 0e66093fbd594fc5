-- Written for zerotrace: the `graphs.dominator_tree` module.

-- graph_dominator_tree!(graph, root): for the flow graph of `graph`'s
-- edges (source_node_id, dest_node_id) entered at node `root`, each node
-- the root reaches with its immediate dominator (the last other node every
-- path from the root to it passes through; NULL for the root). Columns
-- node_id, dominator_node_id, in the preorder of a depth-first walk from
-- the root. Computed natively (src/sql/graphs/dominator.rs).
CREATE PERFETTO MACRO graph_dominator_tree(
  graph_table TableOrSubquery,
  root_node_id Expr
)
RETURNS TableOrSubquery
AS (
  SELECT node_id, dominator_node_id
  FROM __intrinsic_graph_dominator_tree(
    (SELECT __intrinsic_graph_rows_agg(e.source_node_id, e.dest_node_id) FROM $graph_table AS e),
    $root_node_id
  )
);

-- Written for zerotrace: the `graphs.search` module, searches over any
-- edge table (columns source_node_id, dest_node_id; a NULL destination
-- only makes its source a node), a node's edges taken in the order they
-- came. The walks are native (src/sql/graphs/search.rs), fed by
-- __intrinsic_graph_rows_agg.

-- Every node a depth-first walk reaches from the start nodes (`starts`'
-- column node_id), with the node it was first reached from (NULL for a
-- start): columns node_id, parent_node_id, in the order reached.
CREATE PERFETTO MACRO graph_reachable_dfs(
  graph_table TableOrSubquery,
  start_nodes TableOrSubquery
)
RETURNS TableOrSubquery
AS (
  SELECT node_id, parent_node_id
  FROM __intrinsic_graph_dfs(
    (SELECT __intrinsic_graph_rows_agg(e.source_node_id, e.dest_node_id) FROM $graph_table AS e),
    (SELECT __intrinsic_graph_rows_agg(s.node_id) FROM $start_nodes AS s)
  )
);

-- Every node a breadth-first walk reaches from the start nodes (`starts`'
-- column node_id), with the node it was first reached from (NULL for a
-- start): columns node_id, parent_node_id, in the order reached.
CREATE PERFETTO MACRO graph_reachable_bfs(
  graph_table TableOrSubquery,
  start_nodes TableOrSubquery
)
RETURNS TableOrSubquery
AS (
  SELECT node_id, parent_node_id
  FROM __intrinsic_graph_bfs(
    (SELECT __intrinsic_graph_rows_agg(e.source_node_id, e.dest_node_id) FROM $graph_table AS e),
    (SELECT __intrinsic_graph_rows_agg(s.node_id) FROM $start_nodes AS s)
  )
);

-- For rows (node_id, node_parent_id, sort_key), each node's next sibling
-- by sort_key (NULL for the last): columns node_id, next_node_id.
CREATE PERFETTO MACRO graph_next_sibling(graph_table TableOrSubquery)
RETURNS TableOrSubquery
AS (
  SELECT
    node_id,
    lead(node_id) OVER (PARTITION BY node_parent_id ORDER BY sort_key) AS next_node_id
  FROM $graph_table
);

-- From each root (`roots`' root_node_id) alone, a depth-first walk
-- adding up the edge_weight of the edges it takes until the sum passes the
-- root's root_target_weight; with a true `is_target_weight_floor` the
-- node that passed it is kept. Columns root_node_id, node_id,
-- parent_node_id.
CREATE PERFETTO MACRO graph_reachable_weight_bounded_dfs(
  graph_table TableOrSubquery,
  root_table TableOrSubquery,
  is_target_weight_floor Expr
)
RETURNS TableOrSubquery
AS (
  SELECT root_node_id, node_id, parent_node_id
  FROM __intrinsic_graph_weight_bounded_dfs(
    (
      SELECT __intrinsic_graph_rows_agg(e.source_node_id, e.dest_node_id, e.edge_weight)
      FROM $graph_table AS e
    ),
    (
      SELECT __intrinsic_graph_rows_agg(r.root_node_id, r.root_target_weight)
      FROM $root_table AS r
    ),
    $is_target_weight_floor
  )
);

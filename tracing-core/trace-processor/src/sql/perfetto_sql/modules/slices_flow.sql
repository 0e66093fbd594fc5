-- Written for zerotrace: the `slices.flow` module.

INCLUDE PERFETTO MODULE graphs.search;

-- The slices reached by following flows (the `flow` table's slice_out to
-- slice_in) from each flow that leaves a slice of `source_table` (its
-- column id): one walk per such flow, rooted at the slice it leaves.
-- Columns root_node_id (that slice), node_id (a slice reached) and
-- parent_node_id (the slice it was reached from, NULL for the root).
CREATE PERFETTO MACRO _slice_following_flow(source_table TableOrSubquery)
RETURNS TableOrSubquery
AS (
  SELECT root_node_id, node_id, parent_node_id
  FROM graph_reachable_weight_bounded_dfs!(
    (SELECT f.slice_out AS source_node_id, f.slice_in AS dest_node_id, 0 AS edge_weight FROM flow AS f),
    (
      SELECT f.slice_out AS root_node_id, 1 AS root_target_weight
      FROM flow AS f
      JOIN (SELECT id FROM $source_table) AS src ON src.id = f.slice_out
    ),
    1
  )
);

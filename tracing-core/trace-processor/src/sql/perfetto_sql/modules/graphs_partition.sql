-- Written for zerotrace: the `graphs.partition` module.

-- tree_structural_partition_by_group!(tree): the tree of `tree`'s rows
-- (id, parent_id, group_key; exactly one row has a NULL parent) split
-- into a forest, one part per group, each node hanging from its nearest
-- ancestor of its own group (NULL when none). Columns id, parent_id,
-- group_key. Computed natively (src/sql/graphs/partition.rs).
CREATE PERFETTO MACRO tree_structural_partition_by_group(tree_table TableOrSubquery)
RETURNS TableOrSubquery
AS (
  SELECT id, parent_id, group_key
  FROM __intrinsic_graph_partition(
    (SELECT __intrinsic_graph_rows_agg(t.id, t.parent_id, t.group_key) FROM $tree_table AS t)
  )
);

-- Written for zerotrace: the `std.trees.table_conversion` module, a table
-- turned into a tree value and back, laid out with every parent before
-- its children (src/sql/graphs/tree_table.rs).

-- Column `col` of the source rows.
CREATE PERFETTO MACRO _zt_tree_value(col ColumnName)
RETURNS Expr
AS t.$col;

-- The tree of `source_table`'s rows (columns id and parent_id; a NULL
-- parent makes a root), carrying the listed columns (at most 6) along:
-- a value for _tree_to_table!.
CREATE PERFETTO MACRO _tree_from_table(
  source_table TableOrSubquery,
  columns ColumnNameList
)
RETURNS Expr
AS (
  SELECT __intrinsic_graph_rows_agg(
    t.id, t.parent_id __intrinsic_token_apply_prefix!(_zt_tree_value, $columns)
  )
  FROM $source_table AS t
);

-- Operator column `idx` under the name `col`.
CREATE PERFETTO MACRO _zt_tree_column(idx ColumnName, col ColumnName)
RETURNS _ProjectionFragment
AS $idx AS $col;

-- The rows of a tree made by _tree_from_table! (with the same column
-- list), parents first: columns _tree_id (the row's number, from 0),
-- _tree_parent_id (its parent's number, NULL for a root), id, parent_id
-- and the listed columns.
CREATE PERFETTO MACRO _tree_to_table(tree_ptr Expr, columns ColumnNameList)
RETURNS TableOrSubquery
AS (
  SELECT
    c0 AS _tree_id,
    c1 AS _tree_parent_id,
    c2 AS id,
    c3 AS parent_id
    __intrinsic_token_apply_prefix!(_zt_tree_column, (c4, c5, c6, c7, c8, c9), $columns)
  FROM __intrinsic_tree_to_table($tree_ptr)
);

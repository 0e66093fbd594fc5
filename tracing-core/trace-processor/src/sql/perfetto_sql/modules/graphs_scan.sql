-- Written for zerotrace: the `graphs.scan` module, prefix sums over a
-- graph whose step is the caller's SQL. Both scans start from
-- `init_table`'s rows (column id, then the listed columns, at most 7),
-- pass each row along its node's edges (`graph_table`'s source_node_id
-- to dest_node_id) as rows of the destination carrying the row's values,
-- and run the step query, which reads those rows as `$table` and answers
-- rows (id, then the listed columns) that are passed on in turn.
-- - _graph_scan!(graph, init, (cols), step): the step runs on every
--   step's rows until nothing is passed on.
-- - _graph_aggregating_scan!(graph, init, (cols), agg): each node's rows
--   are all gathered before the query runs on them (nodes taken by the
--   length of the longest path below them, longest first); the query's
--   columns must be id and the listed ones.
-- The result is every row, the first ones then each query's: columns id
-- and the listed ones. Computed natively (src/sql/graphs/scan.rs).

-- Column `x` of the first rows.
CREATE PERFETTO MACRO _zt_graph_scan_value(x ColumnName)
RETURNS Expr
AS init_table.$x;

-- Operator column `c` under the name `name`.
CREATE PERFETTO MACRO _zt_graph_scan_rename(c ColumnName, name ColumnName)
RETURNS _ProjectionFragment
AS result.$c AS $name;

-- A scan that runs `step_query` on every step's rows until nothing is
-- passed on: columns id and `scan_columns`.
CREATE PERFETTO MACRO _graph_scan(
  graph_table TableOrSubquery,
  init_table TableOrSubquery,
  scan_columns ColumnNameList,
  step_query TableOrSubquery
)
RETURNS TableOrSubquery
AS (
  SELECT
    result.c0 AS id
    __intrinsic_token_apply_prefix!(_zt_graph_scan_rename, (c1, c2, c3, c4, c5, c6, c7), $scan_columns)
  FROM __intrinsic_graph_scan(
    (SELECT __intrinsic_graph_rows_agg(g.source_node_id, g.dest_node_id) FROM $graph_table AS g),
    (
      SELECT __intrinsic_graph_rows_agg(
        init_table.id
        __intrinsic_token_apply_prefix!(_zt_graph_scan_value, $scan_columns)
      )
      FROM $init_table AS init_table
    ),
    __intrinsic_stringify_ignore_table!($step_query),
    __intrinsic_stringify!($scan_columns)
  ) AS result
);

-- A scan that runs `agg_query` once per node, on every row that reaches
-- it: columns id and `agg_columns`.
CREATE PERFETTO MACRO _graph_aggregating_scan(
  graph_table TableOrSubquery,
  init_table TableOrSubquery,
  agg_columns ColumnNameList,
  agg_query TableOrSubquery
)
RETURNS TableOrSubquery
AS (
  SELECT
    result.c0 AS id
    __intrinsic_token_apply_prefix!(_zt_graph_scan_rename, (c1, c2, c3, c4, c5, c6, c7), $agg_columns)
  FROM __intrinsic_graph_aggregating_scan(
    (SELECT __intrinsic_graph_rows_agg(g.source_node_id, g.dest_node_id) FROM $graph_table AS g),
    (
      SELECT __intrinsic_graph_rows_agg(
        init_table.id
        __intrinsic_token_apply_prefix!(_zt_graph_scan_value, $agg_columns)
      )
      FROM $init_table AS init_table
    ),
    __intrinsic_stringify_ignore_table!($agg_query),
    __intrinsic_stringify!($agg_columns)
  ) AS result
);

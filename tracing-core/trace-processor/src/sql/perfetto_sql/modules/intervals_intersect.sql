-- Written for zerotrace: the `intervals.intersect` module. It intersects
-- tables of intervals by partition with the native operator
-- `__intrinsic_interval_intersect` (src/sql/intervals/), fed by the
-- aggregate `__intrinsic_interval_tree_intervals_agg` over each table's
-- rows, so tables, views, CTEs and subqueries all work. Macros:
-- `_interval_intersect!((t0, t1, ...), (partition columns))` (columns
-- ts, dur, id_0 ... id_<n-1>, then the partition columns),
-- `_interval_intersect_single!(ts, dur, t)`,
-- `_interval_intersect_with_col_names!(...)`, `_interval_rename_cols!`,
-- `_interval_agg!(t, cols)`, `_interval_agg_with_col_names!` and
-- `interval_self_intersect!(t)`.

-- A partition column as the aggregate takes it: the name of `x`, then the
-- value of column `y` (called with the same column twice; the name and
-- signature are upstream's, which other SQL may call).
CREATE PERFETTO MACRO _ii_df_agg(x ColumnName, y ColumnName)
RETURNS _ProjectionFragment
AS __intrinsic_stringify!($x), input.$y;

-- The first of two arguments.
CREATE PERFETTO MACRO _zt_ii_first(keep Expr, drop Expr)
RETURNS Expr
AS $keep;

-- Operator column `op_col` under the name `name`.
CREATE PERFETTO MACRO _zt_ii_rename(op_col ColumnName, name ColumnName)
RETURNS _ProjectionFragment
AS $op_col AS $name;

-- The encoded set of a table's intervals (`id`, `ts`, `dur` and the
-- partition columns `agg_columns`), as one value.
CREATE PERFETTO MACRO _interval_agg(tab TableOrSubquery, agg_columns ColumnNameList)
RETURNS Expr
AS (
  SELECT __intrinsic_interval_tree_intervals_agg(
    input.id, input.ts, input.dur
    __intrinsic_token_apply_prefix!(_ii_df_agg, $agg_columns, $agg_columns)
  )
  FROM $tab AS input
);

-- `_interval_agg!` of a table whose id, ts and dur columns have other
-- names.
CREATE PERFETTO MACRO _interval_agg_with_col_names(
  tab TableOrSubquery,
  agg_columns ColumnNameList,
  id_col ColumnName,
  ts_col ColumnName,
  dur_col ColumnName
)
RETURNS Expr
AS (
  SELECT __intrinsic_interval_tree_intervals_agg(
    input.$id_col, input.$ts_col, input.$dur_col
    __intrinsic_token_apply_prefix!(_ii_df_agg, $agg_columns, $agg_columns)
  )
  FROM $tab AS input
);

-- Intersects up to 15 tables of intervals (each with `id`, `ts`, `dur`
-- and the partition columns), partitioned by up to 4 columns: a row for
-- each span where an interval of every table overlaps, within one
-- partition. Columns: ts, dur, id_0 ... (the id in each table, in the
-- order given), then the partition columns.
CREATE PERFETTO MACRO _interval_intersect(tabs _TableNameList, agg_columns ColumnNameList)
RETURNS TableOrSubquery
AS (
  SELECT
    ts,
    dur
    __intrinsic_token_apply_prefix!(
      _zt_ii_first,
      (id_0, id_1, id_2, id_3, id_4, id_5, id_6, id_7, id_8, id_9, id_10,
       id_11, id_12, id_13, id_14),
      $tabs
    )
    __intrinsic_token_apply_prefix!(
      _zt_ii_rename, (part_0, part_1, part_2, part_3), $agg_columns
    )
  FROM __intrinsic_interval_intersect(
    __intrinsic_stringify!($agg_columns)
    __intrinsic_token_apply_prefix!(
      _interval_agg,
      $tabs,
      ($agg_columns, $agg_columns, $agg_columns, $agg_columns, $agg_columns,
       $agg_columns, $agg_columns, $agg_columns, $agg_columns, $agg_columns,
       $agg_columns, $agg_columns, $agg_columns, $agg_columns, $agg_columns)
    )
  )
);

-- The intervals of `t` (`id`, `ts`, `dur`) cut to the one interval
-- (`ts`, `dur`): columns id, ts, dur.
CREATE PERFETTO MACRO _interval_intersect_single(ts Expr, dur Expr, t TableOrSubquery)
RETURNS TableOrSubquery
AS (
  SELECT id_0 AS id, ts, dur
  FROM _interval_intersect!(($t, (SELECT 0 AS id, $ts AS ts, $dur AS dur)), ())
);

-- A table's id, ts, dur and partition columns under the standard names.
CREATE PERFETTO MACRO _interval_rename_cols(
  tab TableOrSubquery,
  agg_columns ColumnNameList,
  id_col ColumnName,
  ts_col ColumnName,
  dur_col ColumnName
)
RETURNS TableOrSubquery
AS (
  SELECT $id_col AS id, $ts_col AS ts, $dur_col AS dur
    __intrinsic_token_apply_prefix!(_zt_ii_rename, $agg_columns, $agg_columns)
  FROM $tab
);

-- `_interval_intersect!` of two tables whose id, ts and dur columns have
-- other names (each its own), partitioned by `agg_columns`.
CREATE PERFETTO MACRO _interval_intersect_with_col_names(
  tab1 TableOrSubquery,
  id_col1 ColumnName,
  ts_col1 ColumnName,
  dur_col1 ColumnName,
  tab2 TableOrSubquery,
  id_col2 ColumnName,
  ts_col2 ColumnName,
  dur_col2 ColumnName,
  agg_columns ColumnNameList
)
RETURNS TableOrSubquery
AS _interval_intersect!(
  (
    _interval_rename_cols!($tab1, $agg_columns, $id_col1, $ts_col1, $dur_col1),
    _interval_rename_cols!($tab2, $agg_columns, $id_col2, $ts_col2, $dur_col2)
  ),
  $agg_columns
);

-- Cuts the intervals of a table (`id`, `ts`, `dur`) at every start and
-- end of any of them. The points, sorted, make consecutive segments
-- (`group_id` counts them from 1; the last point's segment lasts 0). A
-- row for each interval covering a segment of some length
-- (`interval_ends_at_ts` 0), and a row for each interval's end, with the
-- segment starting there (`interval_ends_at_ts` 1). Columns: ts, dur,
-- group_id, id, interval_ends_at_ts.
CREATE PERFETTO MACRO interval_self_intersect(intervals TableOrSubquery)
RETURNS TableOrSubquery
AS (
  WITH
    _zt_points AS (
      SELECT ts AS p FROM $intervals
      UNION
      SELECT ts + dur AS p FROM $intervals
    ),
    _zt_segments AS (
      SELECT
        row_number() OVER (ORDER BY p) AS id,
        p AS ts,
        coalesce(lead(p) OVER (ORDER BY p) - p, 0) AS dur
      FROM _zt_points
    ),
    _zt_ends AS (
      SELECT DISTINCT id, ts + dur AS end_ts FROM $intervals
    )
  SELECT ii.ts, ii.dur, ii.id_0 AS group_id, ii.id_1 AS id, 0 AS interval_ends_at_ts
  FROM _interval_intersect!((_zt_segments, $intervals), ()) AS ii
  WHERE ii.dur > 0
  UNION ALL
  SELECT e.end_ts AS ts, s.dur, s.id AS group_id, e.id, 1 AS interval_ends_at_ts
  FROM _zt_ends AS e
  JOIN _zt_segments AS s ON s.ts = e.end_ts
);

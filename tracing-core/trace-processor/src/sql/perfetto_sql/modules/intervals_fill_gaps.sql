-- Written for zerotrace: the `intervals.fill_gaps` module.
-- `_intervals_fill_gaps!(group_cols, data_cols, data)` completes a table
-- of non-overlapping intervals (`ts`, `dur`, the columns of `group_cols`
-- and `data_cols`) so that every group covers the trace from
-- `trace_start()` to `trace_end()`: the gaps before, between and after a
-- group's intervals come as rows with NULL data columns; a group whose
-- intervals have no time gets one row for the whole trace, and so does
-- a NULL group when the table has no rows. `(NULL)` as `group_cols` is
-- one group. Rows of positive duration only, sorted by ts.

-- A list's element as it is.
CREATE PERFETTO MACRO _zt_ifg_same(x Expr)
RETURNS Expr
AS $x;

-- NULL in place of a list's element.
CREATE PERFETTO MACRO _zt_ifg_null(x Expr)
RETURNS Expr
AS NULL;

CREATE PERFETTO MACRO _intervals_fill_gaps(
  group_cols ColumnNameList,
  data_cols ColumnNameList,
  data TableOrSubquery
)
RETURNS TableOrSubquery
AS (
  WITH
    _zt_rows AS (
      SELECT
        ts,
        dur,
        __intrinsic_token_apply!(_zt_ifg_same, $group_cols),
        __intrinsic_token_apply!(_zt_ifg_same, $data_cols)
      FROM $data
    ),
    _zt_extent AS (
      SELECT
        __intrinsic_token_apply!(_zt_ifg_same, $group_cols),
        min(ts) AS first_ts,
        max(ts + dur) AS last_end
      FROM _zt_rows
      GROUP BY __intrinsic_token_apply!(_zt_ifg_same, $group_cols)
    ),
    _zt_all AS (
      SELECT
        ts,
        dur,
        __intrinsic_token_apply!(_zt_ifg_same, $group_cols),
        __intrinsic_token_apply!(_zt_ifg_same, $data_cols)
      FROM _zt_rows
      UNION ALL
      SELECT
        trace_start(),
        first_ts - trace_start(),
        __intrinsic_token_apply!(_zt_ifg_same, $group_cols),
        __intrinsic_token_apply!(_zt_ifg_null, $data_cols)
      FROM _zt_extent
      UNION ALL
      SELECT
        last_end,
        trace_end() - last_end,
        __intrinsic_token_apply!(_zt_ifg_same, $group_cols),
        __intrinsic_token_apply!(_zt_ifg_null, $data_cols)
      FROM _zt_extent
      UNION ALL
      SELECT
        trace_start(),
        trace_dur(),
        __intrinsic_token_apply!(_zt_ifg_same, $group_cols),
        __intrinsic_token_apply!(_zt_ifg_null, $data_cols)
      FROM _zt_extent
      WHERE first_ts IS NULL AND last_end IS NULL
      UNION ALL
      SELECT
        trace_start(),
        trace_dur(),
        __intrinsic_token_apply!(_zt_ifg_null, $group_cols),
        __intrinsic_token_apply!(_zt_ifg_null, $data_cols)
      WHERE NOT EXISTS (SELECT 1 FROM _zt_rows)
      UNION ALL
      SELECT
        ts + dur,
        lead(ts) OVER (
          PARTITION BY __intrinsic_token_apply!(_zt_ifg_same, $group_cols)
          ORDER BY ts
        ) - (ts + dur),
        __intrinsic_token_apply!(_zt_ifg_same, $group_cols),
        __intrinsic_token_apply!(_zt_ifg_null, $data_cols)
      FROM _zt_rows
    )
  SELECT * FROM _zt_all
  WHERE coalesce(dur, 0) > 0
  ORDER BY ts
);

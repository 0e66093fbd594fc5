-- Written for zerotrace: the `intervals.overlap` module. How many
-- intervals are open over time (`intervals_overlap_count!`, by group
-- `intervals_overlap_count_by_group!`), whether a table's intervals
-- overlap (`_intervals_overlap_in_table!`), merging overlapping intervals
-- (`interval_merge_overlapping!`, by partition
-- `interval_merge_overlapping_partitioned!`), and flattening a hierarchy
-- of intervals under roots into the leaf open at each time
-- (`_intervals_merge_root_and_children!`,
-- `_intervals_merge_root_and_children_by_intersection!`,
-- `_intervals_flatten!`).

INCLUDE PERFETTO MODULE intervals.intersect;

-- A list's element as it is.
CREATE PERFETTO MACRO _zt_io_same(x Expr)
RETURNS Expr
AS $x;

-- The elements of a parenthesised list, comma-separated.
CREATE PERFETTO MACRO _zt_io_unwrap(cols ColumnNameList)
RETURNS _ProjectionFragment
AS __intrinsic_token_apply!(_zt_io_same, $cols);

-- The number of intervals open from each time on (ts TIMESTAMP, value
-- LONG): a row at each time the count changes, or where intervals start
-- or end, sorted by ts. An interval of duration -1 never ends.
CREATE PERFETTO MACRO intervals_overlap_count(
  segments TableOrSubquery,
  ts_column ColumnName,
  dur_column ColumnName
)
RETURNS TableOrSubquery
AS (
  WITH _zt_steps AS (
    SELECT at_ts AS ts, sum(step) AS step
    FROM (
      SELECT $ts_column AS at_ts, 1 AS step FROM $segments
      UNION ALL
      SELECT $ts_column + $dur_column AS at_ts, -1 AS step
      FROM $segments
      WHERE $dur_column != -1
    )
    GROUP BY at_ts
  )
  SELECT
    ts,
    sum(step) OVER (ORDER BY ts ROWS UNBOUNDED PRECEDING) AS value
  FROM _zt_steps
  ORDER BY ts
);

-- `intervals_overlap_count!` within each group of `group_column`:
-- columns ts, value, group_name, sorted by ts.
CREATE PERFETTO MACRO intervals_overlap_count_by_group(
  segments TableOrSubquery,
  ts_column ColumnName,
  dur_column ColumnName,
  group_column ColumnName
)
RETURNS TableOrSubquery
AS (
  WITH _zt_steps AS (
    SELECT at_ts AS ts, sum(step) AS step, grp AS group_name
    FROM (
      SELECT $ts_column AS at_ts, 1 AS step, $group_column AS grp FROM $segments
      UNION ALL
      SELECT $ts_column + $dur_column AS at_ts, -1 AS step, $group_column AS grp
      FROM $segments
      WHERE $dur_column != -1
    )
    GROUP BY at_ts, grp
  )
  SELECT
    ts,
    sum(step) OVER (
      PARTITION BY group_name ORDER BY ts ROWS UNBOUNDED PRECEDING
    ) AS value,
    group_name
  FROM _zt_steps
  ORDER BY ts
);

-- 1 when some interval of the table (`ts`, `dur`; duration -1 left out)
-- ends after the next one by start begins, else 0.
CREATE PERFETTO MACRO _intervals_overlap_in_table(intervals TableOrSubquery)
RETURNS Expr
AS (
  SELECT count() AS has_overlaps
  FROM (
    SELECT 1
    FROM (
      SELECT ts + dur AS end_ts, lead(ts) OVER (ORDER BY ts) AS next_start
      FROM $intervals
      WHERE dur != -1
    )
    WHERE end_ts > next_start
    LIMIT 1
  )
);

-- Roots (`id`, `ts`, `dur`) and their children (`root_id`, `id`,
-- `parent_id`, `ts`, `dur`) in one table, as `_intervals_flatten!`
-- takes it: root_id, root_ts, root_dur, id, parent_id, ts, dur; a root
-- no child names as its parent comes once with NULL child columns.
-- Intervals without a positive duration are left out.
CREATE PERFETTO MACRO _intervals_merge_root_and_children(
  roots_table TableOrSubquery,
  children_table TableOrSubquery
)
RETURNS TableOrSubquery
AS (
  WITH
    _zt_roots AS (
      SELECT id AS root_id, ts AS root_ts, dur AS root_dur
      FROM ($roots_table)
      WHERE dur > 0
    ),
    _zt_children AS (
      SELECT * FROM ($children_table) WHERE dur > 0
    )
  SELECT r.root_id, r.root_ts, r.root_dur, c.id, c.parent_id, c.ts, c.dur
  FROM _zt_children AS c
  JOIN _zt_roots AS r USING (root_id)
  UNION ALL
  SELECT r.root_id, r.root_ts, r.root_dur, NULL, NULL, NULL, NULL
  FROM _zt_roots AS r
  WHERE r.root_id NOT IN (
    SELECT parent_id FROM _zt_children WHERE parent_id IS NOT NULL
  )
);

-- Like `_intervals_merge_root_and_children!`, a child's root found by
-- intersecting children and roots within each value of column `key`:
-- a row for each overlap of a child with a root: ts, dur (the overlap),
-- id, parent_id (the root's id when the child has none), root_id,
-- root_ts, root_dur and `key`.
CREATE PERFETTO MACRO _intervals_merge_root_and_children_by_intersection(
  roots_table TableOrSubquery,
  children_table TableOrSubquery,
  key ColumnName
)
RETURNS TableOrSubquery
AS (
  WITH
    _zt_roots AS (SELECT * FROM $roots_table WHERE dur > 0),
    _zt_children AS (SELECT * FROM $children_table WHERE dur > 0)
  SELECT
    ii.ts,
    ii.dur,
    c.id,
    coalesce(c.parent_id, ii.id_1) AS parent_id,
    r.id AS root_id,
    r.ts AS root_ts,
    r.dur AS root_dur,
    ii.$key
  FROM _interval_intersect!((_zt_children, _zt_roots), ($key)) AS ii
  JOIN _zt_children AS c ON c.id = ii.id_0
  JOIN _zt_roots AS r ON r.id = ii.id_1
);

-- Flattens each root's hierarchy of intervals (rows of
-- `_intervals_merge_root_and_children!`) into the interval open deepest
-- at each time: between consecutive start or end times within a root,
-- the interval that starts there, or the parent (the root for a top
-- child) of the one that ends there, a start winning over an end at the
-- same time; the root itself before its first and after its last child,
-- and all along when it has none. Columns: root_id, id, ts, dur.
-- Children must lie within their ancestors.
CREATE PERFETTO MACRO _intervals_flatten(children_with_roots_table TableOrSubquery)
RETURNS TableOrSubquery
AS (
  WITH
    _zt_rows AS (
      SELECT * FROM ($children_with_roots_table)
      WHERE root_dur > 0 AND (dur IS NULL OR dur > 0)
    ),
    _zt_points AS (
      SELECT root_id, root_ts, root_dur, id, ts, 1 AS wins FROM _zt_rows
      UNION ALL
      SELECT root_id, root_ts, root_dur, coalesce(parent_id, root_id), ts + dur, 0
      FROM _zt_rows
      WHERE id IS NOT NULL
    ),
    _zt_winners AS (
      SELECT root_id, root_ts, root_dur, id, ts, max(wins) AS wins
      FROM _zt_points
      GROUP BY root_id, ts
    ),
    _zt_pieces AS (
      SELECT
        root_id, root_ts, root_dur, id, ts,
        lead(ts) OVER (PARTITION BY root_id ORDER BY ts) - ts AS dur
      FROM _zt_winners
    ),
    _zt_middle AS (SELECT * FROM _zt_pieces WHERE dur > 0),
    _zt_head AS (
      SELECT root_id, root_id AS id, root_ts AS ts, min(ts) - root_ts AS dur
      FROM _zt_middle
      GROUP BY root_id
    ),
    _zt_tail AS (
      SELECT
        root_id,
        root_id AS id,
        max(ts + dur) AS ts,
        root_ts + root_dur - max(ts + dur) AS dur
      FROM _zt_middle
      GROUP BY root_id
    ),
    _zt_alone AS (
      SELECT root_id, root_id AS id, root_ts AS ts, root_dur AS dur
      FROM _zt_rows
      WHERE id IS NULL
      GROUP BY root_id
    )
  SELECT root_id, id, ts, dur FROM _zt_middle
  UNION ALL
  SELECT root_id, id, ts, dur FROM _zt_head WHERE dur > 0
  UNION ALL
  SELECT root_id, id, ts, dur FROM _zt_tail WHERE dur > 0
  UNION ALL
  SELECT root_id, id, ts, dur FROM _zt_alone
);

-- Merges intervals (`ts`, `dur`) that overlap, or whose gap is at most
-- `epsilon`, into the fewest covering intervals: columns ts, dur. Worked
-- on the open count of the intervals each lengthened by `epsilon`: a
-- merged interval starts where the count leaves 0 and ends (less
-- `epsilon`) where it returns to 0.
CREATE PERFETTO MACRO interval_merge_overlapping(intervals TableOrSubquery, epsilon Expr)
RETURNS TableOrSubquery
AS (
  WITH
    _zt_counts AS (
      SELECT ts, value, lag(value, 1, 0) OVER (ORDER BY ts) AS before
      FROM intervals_overlap_count!($intervals, ts, (dur + $epsilon))
    ),
    _zt_edges AS (
      SELECT
        iif(value = 0, ts - $epsilon, ts) AS ts,
        value,
        lag(ts) OVER (ORDER BY ts) AS last_ts
      FROM _zt_counts
      WHERE before = 0 OR value = 0
    )
  SELECT last_ts AS ts, ts - last_ts AS dur
  FROM _zt_edges
  WHERE value = 0
);

-- `interval_merge_overlapping!` within each partition (the columns of
-- `partition_columns`), without epsilon; intervals of negative duration
-- are left out. Columns: ts, dur, then the partition columns.
CREATE PERFETTO MACRO interval_merge_overlapping_partitioned(
  intervals TableOrSubquery,
  partition_columns ColumnNameList
)
RETURNS TableOrSubquery
AS (
  WITH
    _zt_reach AS (
      SELECT
        ts,
        dur,
        _zt_io_unwrap!($partition_columns),
        max(ts + dur) OVER (
          PARTITION BY _zt_io_unwrap!($partition_columns)
          ORDER BY ts
          ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING
        ) AS reach
      FROM $intervals
      WHERE dur >= 0
    ),
    _zt_grouped AS (
      SELECT
        *,
        sum(coalesce(ts > reach, 1)) OVER (
          PARTITION BY _zt_io_unwrap!($partition_columns) ORDER BY ts
        ) AS island
      FROM _zt_reach
    )
  SELECT
    min(ts) AS ts,
    max(ts + dur) - min(ts) AS dur,
    _zt_io_unwrap!($partition_columns)
  FROM _zt_grouped
  GROUP BY _zt_io_unwrap!($partition_columns), island
);

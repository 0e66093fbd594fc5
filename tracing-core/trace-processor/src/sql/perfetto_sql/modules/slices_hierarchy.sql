-- slices.hierarchy, written for zerotrace: walks of the slice tree that
-- keep the starting slice, and pruning a tree while keeping it connected.
--   _slice_ancestor_and_self(slice_id)    the slice, then its ancestors
--                                         (root first, as ancestor_slice)
--   _slice_descendant_and_self(slice_id)  the slice, then its descendants
--                                         (as descendant_slice)
--   _slice_remove_nulls_and_reparent!(slice_table, column_name)
--                                         the rows whose column is not
--                                         NULL, each re-hung under its
--                                         nearest kept ancestor

-- The slice `slice_id` followed by every slice enclosing it.
CREATE PERFETTO FUNCTION _slice_ancestor_and_self(slice_id JOINID(slice.id))
RETURNS TABLE(
  id JOINID(slice.id),
  ts TIMESTAMP,
  dur DURATION,
  track_id JOINID(track.id),
  category STRING,
  name STRING,
  depth LONG,
  parent_id JOINID(slice.id),
  arg_set_id ARGSETID,
  thread_ts TIMESTAMP,
  thread_dur LONG
) AS
SELECT id, ts, dur, track_id, category, name, depth, parent_id, arg_set_id,
  thread_ts, thread_dur
FROM slice WHERE id = $slice_id
UNION ALL
SELECT id, ts, dur, track_id, category, name, depth, parent_id, arg_set_id,
  thread_ts, thread_dur
FROM ancestor_slice($slice_id);

-- The slice `slice_id` followed by every slice it encloses.
CREATE PERFETTO FUNCTION _slice_descendant_and_self(slice_id JOINID(slice.id))
RETURNS TABLE(
  id JOINID(slice.id),
  ts TIMESTAMP,
  dur DURATION,
  track_id JOINID(track.id),
  category STRING,
  name STRING,
  depth LONG,
  parent_id JOINID(slice.id),
  arg_set_id ARGSETID,
  thread_ts TIMESTAMP,
  thread_dur LONG
) AS
SELECT id, ts, dur, track_id, category, name, depth, parent_id, arg_set_id,
  thread_ts, thread_dur
FROM slice WHERE id = $slice_id
UNION ALL
SELECT id, ts, dur, track_id, category, name, depth, parent_id, arg_set_id,
  thread_ts, thread_dur
FROM descendant_slice($slice_id);

-- Keeps the rows of `slice_table` (columns id, parent_id, depth and
-- `column_name`) whose `column_name` is not NULL. A kept root (depth 0)
-- stays as it is. Every other kept row takes as parent its deepest kept
-- ancestor and that ancestor's depth in the slice table; with no kept
-- ancestor it hangs off its root ancestor at depth 0. Roots come first,
-- then the others in id order.
CREATE PERFETTO MACRO _slice_remove_nulls_and_reparent(
  slice_table TableOrSubquery,
  column_name ColumnName
)
RETURNS TableOrSubquery
AS (
  WITH
    _kept AS (
      SELECT * FROM $slice_table WHERE $column_name IS NOT NULL
    ),
    _rehung AS (
      SELECT
        k.id,
        coalesce(
          (SELECT a.id FROM ancestor_slice(k.id) AS a
            WHERE a.id IN (SELECT id FROM _kept)
            ORDER BY a.depth DESC LIMIT 1),
          (SELECT a.id FROM ancestor_slice(k.id) AS a
            ORDER BY a.depth LIMIT 1)
        ) AS parent_id,
        coalesce(
          (SELECT max(a.depth) FROM ancestor_slice(k.id) AS a
            WHERE a.id IN (SELECT id FROM _kept)),
          0
        ) AS depth,
        k.$column_name
      FROM _kept AS k
      WHERE k.depth != 0
      ORDER BY k.id
    )
  SELECT id, parent_id, depth, $column_name FROM _kept WHERE depth = 0
  UNION ALL
  SELECT * FROM _rehung
);

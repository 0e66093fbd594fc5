-- Written for zerotrace: the `chrome.scroll_jank.scroll_jank_v3_cause`
-- module.
-- `_direct_children_slice(parent_id)`: the slices whose parent is
-- `parent_id`, with the slice table's columns.
-- `chrome_get_v3_jank_cause_id(janky_slice_id, prev_slice_id)`: the child of
-- the janky slice that grew most against the child of the same name of the
-- previous slice (a child with no namesake there grew by its whole
-- duration); NULL when the janky slice has no children.

CREATE PERFETTO FUNCTION _direct_children_slice(parent_id LONG)
RETURNS TABLE(
  id LONG,
  ts TIMESTAMP,
  dur DURATION,
  category LONG,
  name STRING,
  track_id LONG,
  depth LONG,
  parent_id LONG,
  arg_set_id LONG,
  thread_ts TIMESTAMP,
  thread_dur LONG
)
AS
SELECT id, ts, dur, category, name, track_id, depth, parent_id, arg_set_id, thread_ts, thread_dur
FROM slice
WHERE parent_id = $parent_id;

CREATE PERFETTO FUNCTION chrome_get_v3_jank_cause_id(janky_slice_id LONG, prev_slice_id LONG)
RETURNS LONG
AS
SELECT breakdown_id
FROM (
  SELECT cur.id AS breakdown_id, max(cur.dur - coalesce(prev.dur, 0)) AS growth
  FROM _direct_children_slice($janky_slice_id) AS cur
  LEFT JOIN _direct_children_slice($prev_slice_id) AS prev ON prev.name = cur.name
);

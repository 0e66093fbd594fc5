-- Written for zerotrace: the `viz.slices` module, what the UI's slice
-- aggregations read.

INCLUDE PERFETTO MODULE graphs.scan;
INCLUDE PERFETTO MODULE slices.with_context;

-- The slices of `inits` and every ancestor of theirs in `nodes` (rows id,
-- parent_id, name, dur), each with the time it spends outside the
-- children that lead to it from `inits` and how many of `inits` it is.
-- Columns id, parentId (the parent's id), name, self_dur (an init's
-- whole dur; an ancestor's dur less the dur of its children on the way
-- up), self_count (1 for a row of `inits`, 0 for an ancestor) and
-- simple_count (always 1).
CREATE PERFETTO MACRO _viz_slice_ancestor_agg(
  inits TableOrSubquery,
  nodes TableOrSubquery
)
RETURNS TableOrSubquery
AS (
  SELECT
    up.id,
    n.parent_id AS parentId,
    n.name,
    up.self_dur,
    up.self_count,
    1 AS simple_count
  FROM _graph_aggregating_scan!(
    (
      SELECT id AS source_node_id, parent_id AS dest_node_id
      FROM $nodes
      WHERE parent_id IS NOT NULL
    ),
    (SELECT id, dur, dur AS self_dur, 1 AS self_count FROM $inits),
    (dur, self_dur, self_count),
    (
      WITH below AS (
        SELECT step.id, sum(step.dur) AS children_dur
        FROM $table AS step
        GROUP BY step.id
      )
      SELECT below.id, n.dur, n.dur - below.children_dur AS self_dur, 0 AS self_count
      FROM below
      JOIN $nodes AS n USING (id)
    )
  ) AS up
  JOIN $nodes AS n USING (id)
);

-- Every slice with its track's name and, on a thread or process track,
-- its thread's and process's identity (NULL elsewhere); the columns of
-- thread_or_process_slice.
CREATE PERFETTO VIEW _viz_slices_for_ui_table AS
SELECT * FROM thread_or_process_slice
UNION ALL
SELECT
  s.id,
  s.ts,
  s.dur,
  s.category,
  s.name,
  s.track_id,
  t.name AS track_name,
  NULL AS thread_name,
  NULL AS utid,
  NULL AS tid,
  NULL AS process_name,
  NULL AS upid,
  NULL AS pid,
  s.depth,
  s.parent_id,
  s.arg_set_id
FROM slice AS s
JOIN track AS t ON t.id = s.track_id
WHERE s.track_id NOT IN (SELECT id FROM process_track)
  AND s.track_id NOT IN (SELECT id FROM thread_track);

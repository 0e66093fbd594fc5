-- viz.summary.track_event, written for zerotrace: the track event tracks
-- as the UI lays them out at load: each track's place among its siblings
-- by its parent's child ordering (lexicographic, the default: by name;
-- explicit: by sibling rank; chronological: by first event), and tracks
-- of one track group merged into one row.
--   _track_event_tracks_unordered       track event tracks with their
--                                       parent's ordering, rank, description
--   _min_ts_per_track                   each one's first event
--   _track_event_has_children           the parents of track event tracks
--   _track_event_tracks_ordered_groups  the rows the UI builds tracks from

INCLUDE PERFETTO MODULE viz.track_event_callstacks;

-- Every track event track: its name and parent, its parent's child
-- ordering (when the parent is a track event track), its sibling rank
-- (0 without one) and its description.
CREATE PERFETTO TABLE _track_event_tracks_unordered AS
WITH
  te AS (
    SELECT
      id,
      name,
      parent_id,
      extract_arg(source_arg_set_id, 'child_ordering') AS child_ordering,
      extract_arg(source_arg_set_id, 'sibling_order_rank') AS sibling_rank,
      extract_arg(source_arg_set_id, 'description') AS description
    FROM track
    WHERE type GLOB '*_track_event'
  )
SELECT
  c.id,
  c.name,
  c.parent_id,
  p.child_ordering AS parent_ordering,
  ifnull(c.sibling_rank, 0) AS rank,
  c.description
FROM te AS c
LEFT JOIN te AS p ON p.id = c.parent_id;

-- Each track's earliest slice (min(ts) of slice grouped by track_id),
-- built as columns in one pass over the slices by the native source
-- __intrinsic_slice_min_ts_per_track (src/sql/slices/track_summary.rs).
CREATE PERFETTO TABLE _zt_slice_min_ts_per_track AS
SELECT * FROM __intrinsic_slice_min_ts_per_track;

-- The first timestamp of each track event track's counters, slices or
-- states.
CREATE PERFETTO TABLE _min_ts_per_track AS
SELECT c.track_id AS id, min(c.ts) AS min_ts
FROM counter AS c
JOIN _track_event_tracks_unordered AS u ON u.id = c.track_id
GROUP BY c.track_id
UNION ALL
SELECT s.id, s.min_ts
FROM _zt_slice_min_ts_per_track AS s
JOIN _track_event_tracks_unordered AS u ON u.id = s.id
UNION ALL
SELECT st.track_id AS id, min(st.ts) AS min_ts
FROM state AS st
JOIN _track_event_tracks_unordered AS u ON u.id = st.track_id
GROUP BY st.track_id;

-- The tracks that are the parent of a track event track.
CREATE PERFETTO TABLE _track_event_has_children AS
SELECT DISTINCT parent_id AS id
FROM track
WHERE type GLOB '*_track_event' AND parent_id IS NOT NULL;

-- Each track event track's place among its siblings, then one row per
-- track group (a track in none is a group of its own): the group's
-- process and thread, kind, name, description, unit and counter
-- settings, whether any of its tracks has data, children or callstacks,
-- its smallest track id, all its track ids (comma-separated) and its
-- first place. By parent, then place.
CREATE PERFETTO TABLE _track_event_tracks_ordered_groups AS
WITH
  placed AS (
    SELECT
      u.id,
      row_number() OVER (
        PARTITION BY u.parent_id, ifnull(u.parent_ordering, 'lexicographic')
        ORDER BY
          CASE u.parent_ordering
            WHEN 'explicit' THEN u.rank
            WHEN 'chronological' THEN m.min_ts
            ELSE u.name
          END
      ) AS order_id
    FROM _track_event_tracks_unordered AS u
    LEFT JOIN _min_ts_per_track AS m ON m.id = u.id
    WHERE u.parent_ordering IS NULL
      OR u.parent_ordering IN ('lexicographic', 'explicit', 'chronological')
  )
SELECT
  extract_arg(t.dimension_arg_set_id, 'upid') AS upid,
  extract_arg(t.dimension_arg_set_id, 'utid') AS utid,
  t.parent_id,
  t.type GLOB '*counter*' AS is_counter,
  t.type GLOB '*state*' AS is_state,
  t.name,
  min(extract_arg(t.source_arg_set_id, 'description')) AS description,
  min(ct.unit) AS unit,
  min(extract_arg(t.source_arg_set_id, 'builtin_counter_type')) AS builtin_counter_type,
  min(extract_arg(t.source_arg_set_id, 'y_axis_share_key')) AS y_axis_share_key,
  max(m.id IS NOT NULL) AS has_data,
  max(hc.id IS NOT NULL) AS has_children,
  max(cs.track_id IS NOT NULL) AS has_callstacks,
  min(pl.id) AS min_track_id,
  group_concat(pl.id) AS track_ids,
  min(pl.order_id) AS order_id
FROM placed AS pl
JOIN track AS t ON t.id = pl.id
LEFT JOIN counter_track AS ct ON ct.id = pl.id
LEFT JOIN _track_event_has_children AS hc ON hc.id = pl.id
LEFT JOIN _min_ts_per_track AS m ON m.id = pl.id
LEFT JOIN _track_event_tracks_with_callstacks AS cs ON cs.track_id = pl.id
GROUP BY t.track_group_id, ifnull(t.track_group_id, t.id)
ORDER BY t.parent_id, pl.order_id;

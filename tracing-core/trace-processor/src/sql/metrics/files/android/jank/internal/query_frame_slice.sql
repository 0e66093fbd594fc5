-- Written for zerotrace: the v1 metric file
-- android/jank/internal/query_frame_slice.sql, run by
-- android_jank_correlate_frame_slice_impl. Relates the slices of
-- {{relevant_slice_table_name}} (a selection from {{slice_table_name}}) to
-- the CUJ frames of {{frame_table_name}}, cutting each slice to every frame
-- boundary of {{frame_boundary_table_name}} it overlaps:
--   {{table_name_prefix}}_query_slice          the selected slices that are
--                                              CUJ slices of that thread set
--   {{table_name_prefix}}_slice_in_frame       each frame's columns and one
--                                              slice's part inside its boundary
--   {{table_name_prefix}}_slice_in_frame_agg   per frame: the parts' total and
--                                              longest duration, and the
--                                              total over the expected frame
--                                              duration

-- A table (not a view) so a selection lacking a needed column fails here.
DROP TABLE IF EXISTS {{table_name_prefix}}_query_slice;
CREATE PERFETTO TABLE {{table_name_prefix}}_query_slice AS
SELECT DISTINCT s.cuj_id, s.utid, s.id, s.name, s.ts, s.dur, s.ts_end
FROM {{relevant_slice_table_name}} AS s
WHERE EXISTS (
  SELECT 1
  FROM {{slice_table_name}} AS t
  WHERE t.cuj_id = s.cuj_id AND t.id = s.id
);

DROP VIEW IF EXISTS {{table_name_prefix}}_slice_in_frame;
CREATE PERFETTO VIEW {{table_name_prefix}}_slice_in_frame AS
SELECT
  f.*,
  q.id AS slice_id,
  q.utid AS slice_utid,
  q.name AS slice_name,
  MAX(q.ts, b.ts) AS slice_ts,
  MIN(q.ts_end, b.ts_end) AS slice_ts_end,
  MIN(q.ts_end, b.ts_end) - MAX(q.ts, b.ts) AS slice_dur,
  q.ts_end AS ts_end_original
FROM {{frame_table_name}} AS f
JOIN {{frame_boundary_table_name}} AS b
  ON b.cuj_id = f.cuj_id AND b.vsync = f.vsync
JOIN {{table_name_prefix}}_query_slice AS q
  ON q.cuj_id = b.cuj_id
  AND android_jank_cuj_slice_overlaps(b.ts, b.dur, q.ts, q.dur);

DROP VIEW IF EXISTS {{table_name_prefix}}_slice_in_frame_agg;
CREATE PERFETTO VIEW {{table_name_prefix}}_slice_in_frame_agg AS
SELECT
  cuj_id,
  frame_number,
  vsync,
  dur_expected,
  app_missed,
  sf_missed,
  SUM(slice_dur) * 1.0 / dur_expected AS slice_dur_div_frame_dur_expected,
  SUM(slice_dur) AS slice_dur_sum,
  MAX(slice_dur) AS slice_dur_max
FROM {{table_name_prefix}}_slice_in_frame
GROUP BY cuj_id, frame_number, vsync, dur_expected, app_missed, sf_missed;

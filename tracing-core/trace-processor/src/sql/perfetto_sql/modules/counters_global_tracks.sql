-- Written for zerotrace: the `counters.global_tracks` module. It provides
-- `_counter_track_is_only_name_dimension(track_id)`: whether the counter
-- track has no dimension other than its name.

CREATE PERFETTO FUNCTION _counter_track_is_only_name_dimension(track_id LONG)
RETURNS BOOL AS
SELECT NOT EXISTS (
  SELECT 1
  FROM counter_track AS t
  JOIN args AS a ON a.arg_set_id = t.dimension_arg_set_id
  WHERE t.id = $track_id AND a.key != 'name'
);

-- viz.summary.slices, written for zerotrace: what the UI reads at load
-- about each track that holds slices.
--   _slice_track_summary  (id, cnt, min_dur, max_dur, max_depth) per track

-- Per slice track: its slice count, shortest and longest duration and
-- deepest nesting.
CREATE PERFETTO TABLE _slice_track_summary AS
SELECT
  track_id AS id,
  count(*) AS cnt,
  min(dur) AS min_dur,
  max(dur) AS max_dur,
  max(depth) AS max_depth
FROM slice
GROUP BY track_id;

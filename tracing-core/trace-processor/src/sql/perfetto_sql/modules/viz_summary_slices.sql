-- viz.summary.slices, written for zerotrace: what the UI reads at load
-- about each track that holds slices.
--   _slice_track_summary  (id, cnt, min_dur, max_dur, max_depth) per track

-- Per slice track: its slice count, shortest and longest duration and
-- deepest nesting (count(*), min(dur), max(dur), max(depth) of the
-- slices grouped by track_id), built as columns in one pass over the
-- slices by the native source __intrinsic_slice_track_summary
-- (src/sql/slices/track_summary.rs).
CREATE PERFETTO TABLE _slice_track_summary AS
SELECT * FROM __intrinsic_slice_track_summary;

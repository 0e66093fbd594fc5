-- viz.summary.counters, written for zerotrace: the counter tracks that
-- hold at least one value, for the UI at load.
--   _counter_track_summary  (id) per counter track with values

-- Each track at least one counter value is on.
CREATE PERFETTO TABLE _counter_track_summary AS
SELECT DISTINCT track_id AS id FROM counter;

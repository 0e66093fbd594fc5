-- viz.track_event_callstacks, written for zerotrace: which track event
-- tracks carry callstacks (the UI shows callstack tabs for them).
--   _track_event_tracks_with_callstacks  (track_id)

-- Each track with at least one track event callstack.
CREATE PERFETTO TABLE _track_event_tracks_with_callstacks AS
SELECT DISTINCT track_id FROM __intrinsic_track_event_callstacks;

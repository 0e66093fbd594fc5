-- Written for zerotrace: the `android.input` module, its part over the
-- input events Winscope records (the dispatcher's motion and key events
-- and their dispatch to windows, with their fields as args). Upstream's
-- tables that follow an event through the app's slices and frames
-- (`android_input_events`, ...) need the frame timeline modules and are
-- not here yet.

CREATE PERFETTO VIEW android_key_events(
  -- The event's row.
  id LONG,
  -- The event's id.
  event_id LONG,
  -- When it was traced.
  ts TIMESTAMP,
  -- Its fields.
  arg_set_id ARGSETID,
  -- The input source.
  source LONG,
  -- The action.
  action LONG,
  -- The device.
  device_id LONG,
  -- The display.
  display_id LONG,
  -- The key.
  key_code LONG
) AS
SELECT id, event_id, ts, arg_set_id, source, action, device_id, display_id, key_code
FROM __intrinsic_android_key_events;

CREATE PERFETTO VIEW android_motion_events(
  -- The event's row.
  id LONG,
  -- The event's id.
  event_id LONG,
  -- When it was traced.
  ts TIMESTAMP,
  -- Its fields.
  arg_set_id ARGSETID,
  -- The input source.
  source LONG,
  -- The action.
  action LONG,
  -- The device.
  device_id LONG,
  -- The display.
  display_id LONG
) AS
SELECT id, event_id, ts, arg_set_id, source, action, device_id, display_id
FROM __intrinsic_android_motion_events;

CREATE PERFETTO VIEW android_input_event_dispatch(
  -- The dispatch's row.
  id LONG,
  -- The event's id.
  event_id LONG,
  -- Its fields.
  arg_set_id ARGSETID,
  -- The vsync of the window's frame.
  vsync_id LONG,
  -- The window.
  window_id LONG
) AS
SELECT id, event_id, arg_set_id, vsync_id, window_id
FROM __intrinsic_android_input_event_dispatch;

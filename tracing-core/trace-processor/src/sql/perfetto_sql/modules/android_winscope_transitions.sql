-- Written for zerotrace: the `android.winscope.transitions` module.
-- WindowManager's shell transitions as Winscope records them: the windows
-- and layers each transition changed, and the raw protos each transition
-- was written in.

CREATE PERFETTO VIEW android_window_manager_shell_transition_participants(
  -- The transition.
  transition_id LONG,
  -- The layer changed.
  layer_id LONG,
  -- The window changed.
  window_id LONG,
  -- The change's mode.
  mode LONG,
  -- The change's flags.
  flags LONG,
  -- The display it starts on.
  start_display_id LONG,
  -- The display it ends on.
  end_display_id LONG,
  -- Its rotation at the start.
  start_rotation LONG,
  -- Its rotation at the end.
  end_rotation LONG,
  -- Its bounds at the start (an `android_winscope_rect` row).
  start_abs_bounds_rect_id LONG,
  -- Its bounds at the end (an `android_winscope_rect` row).
  end_abs_bounds_rect_id LONG
) AS
SELECT
  transition_id,
  layer_id,
  window_id,
  mode,
  flags,
  start_display_id,
  end_display_id,
  start_rotation,
  end_rotation,
  start_abs_bounds_rect_id,
  end_abs_bounds_rect_id
FROM __intrinsic_window_manager_shell_transition_participants;

CREATE PERFETTO VIEW android_window_manager_shell_transition_protos(
  -- The transition.
  transition_id LONG,
  -- The string id of one of its protos, base64-encoded.
  base64_proto_id LONG
) AS
SELECT transition_id, base64_proto_id
FROM __intrinsic_window_manager_shell_transition_protos;

-- Written for zerotrace: the `android.winscope.windowmanager` module.
-- WindowManager's state as Winscope dumps it: one row per dump, its
-- fields (but the window container tree) as args, and one row per window
-- container of each dump's tree.

CREATE PERFETTO VIEW android_windowmanager(
  -- The dump's row.
  id LONG,
  -- When it was taken.
  ts TIMESTAMP,
  -- Its fields, the window container tree left out.
  arg_set_id ARGSETID,
  -- Its proto without the tree, base64-encoded (a string id).
  base64_proto_id LONG,
  -- The focused display.
  focused_display_id LONG,
  -- Whether the dump lacked its elapsed time.
  has_invalid_elapsed_ts BOOL
) AS
SELECT id, ts, arg_set_id, base64_proto_id, focused_display_id, has_invalid_elapsed_ts
FROM __intrinsic_windowmanager;


CREATE PERFETTO VIEW android_windowmanager_windowcontainer(
  -- The container's row.
  id LONG,
  -- The dump it belongs to (an `android_windowmanager` row).
  snapshot_id LONG,
  -- Its fields, its children left out.
  arg_set_id ARGSETID,
  -- Its proto without children, base64-encoded (a string id).
  base64_proto_id LONG,
  -- Its title.
  title STRING,
  -- Its token.
  token LONG,
  -- Its parent's token (NULL for the root).
  parent_token LONG,
  -- Its place among its parent's children.
  child_index LONG,
  -- Whether it is visible.
  is_visible BOOL,
  -- Its rect (an `android_winscope_trace_rect` row), for displays and
  -- windows.
  window_rect_id LONG,
  -- Its kind: DisplayContent, TaskFragment, WindowState, ...
  container_type STRING,
  -- A name shown instead of the title (tasks, starting windows).
  name_override STRING
) AS
SELECT
  id,
  snapshot_id,
  arg_set_id,
  base64_proto_id,
  title,
  token,
  parent_token,
  child_index,
  is_visible,
  window_rect_id,
  container_type,
  name_override
FROM __intrinsic_windowmanager_windowcontainer;

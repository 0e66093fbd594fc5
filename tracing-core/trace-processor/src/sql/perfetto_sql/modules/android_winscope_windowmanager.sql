-- Written for zerotrace: the `android.winscope.windowmanager` module.
-- WindowManager's state as Winscope dumps it: one row per dump, its
-- fields (but the window container tree) as args. The window containers'
-- own rows are not imported yet.

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

-- Written for zerotrace: the `android.winscope.viewcapture` module. The
-- captures of app windows' view trees Winscope records: one row per
-- capture, and one per view of each capture with what the importer
-- computed of it (visibility, its rectangle in android.winscope.rect).

CREATE PERFETTO VIEW android_viewcapture(
  -- The capture's row.
  id LONG,
  -- When the views were captured.
  ts TIMESTAMP,
  -- The capture's fields, interned strings resolved.
  arg_set_id ARGSETID,
  -- The app's package.
  package_name STRING,
  -- The window.
  window_name STRING
) AS
SELECT id, ts, arg_set_id, package_name, window_name FROM __intrinsic_viewcapture;

CREATE PERFETTO VIEW android_viewcapture_view(
  -- The view's row.
  id LONG,
  -- The capture it belongs to.
  snapshot_id LONG,
  -- The view's fields, interned strings resolved.
  arg_set_id ARGSETID,
  -- The view's id in its capture.
  node_id LONG,
  -- Its hash code.
  hashcode LONG,
  -- Whether it is seen (its flags, its ancestors' and its size).
  is_visible LONG,
  -- Its parent's id in the capture.
  parent_id LONG,
  -- Its view id.
  view_id STRING,
  -- Its class.
  class_name STRING,
  -- Its rectangle (android_winscope_trace_rect).
  trace_rect_id LONG
) AS
SELECT id, snapshot_id, arg_set_id, node_id, hashcode, is_visible, parent_id,
  view_id, class_name, trace_rect_id
FROM __intrinsic_viewcapture_view;

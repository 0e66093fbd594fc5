-- Written for zerotrace: the `android.winscope.surfaceflinger` module.
-- SurfaceFlinger as Winscope records it: each change of a committed
-- transaction and the flags naming what it changed.

CREATE PERFETTO VIEW android_surfaceflinger_transaction(
  -- The change's row.
  id LONG,
  -- The commit it belongs to (a `surfaceflinger_transactions` row).
  snapshot_id LONG,
  -- The change's fields.
  arg_set_id ARGSETID,
  -- The transaction.
  transaction_id LONG,
  -- The process that sent it.
  pid LONG,
  -- Its uid.
  uid LONG,
  -- The layer changed, added or destroyed.
  layer_id LONG,
  -- The display changed, added or removed.
  display_id LONG,
  -- The flag set naming what changed.
  flags_id LONG,
  -- What kind of change (`LAYER_CHANGED`, `NOOP`, ...).
  transaction_type STRING
) AS
SELECT
  id,
  snapshot_id,
  arg_set_id,
  transaction_id,
  pid,
  uid,
  layer_id,
  display_id,
  flags_id,
  transaction_type
FROM __intrinsic_surfaceflinger_transaction;

CREATE PERFETTO VIEW android_surfaceflinger_transaction_flag(
  -- The flag set.
  flags_id LONG,
  -- One flag of it.
  flag STRING
) AS
SELECT flags_id, flag FROM __intrinsic_surfaceflinger_transaction_flag;

CREATE PERFETTO VIEW android_surfaceflinger_display(
  -- The display's row.
  id LONG,
  -- The layers snapshot it belongs to.
  snapshot_id LONG,
  -- Whether it is on.
  is_on LONG,
  -- Whether it is virtual.
  is_virtual LONG,
  -- Its rect (an `android_winscope_trace_rect` row).
  trace_rect_id LONG,
  -- Its id.
  display_id LONG,
  -- Its name.
  display_name STRING
) AS
SELECT id, snapshot_id, is_on, is_virtual, trace_rect_id, display_id, display_name
FROM __intrinsic_surfaceflinger_display;

CREATE PERFETTO VIEW android_winscope_fill_region(
  -- The region rectangle's row.
  id LONG,
  -- The trace rect it fills.
  trace_rect_id LONG,
  -- The rectangle.
  rect_id LONG
) AS
SELECT id, trace_rect_id, rect_id FROM __intrinsic_winscope_fill_region;

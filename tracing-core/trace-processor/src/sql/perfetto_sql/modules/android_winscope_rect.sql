-- Written for zerotrace: the `android.winscope.rect` module. The
-- rectangles Winscope entries are drawn with: each distinct rectangle and
-- transform once, and each use of one by an entry (its group, depth,
-- visibility, opacity and border).

CREATE PERFETTO VIEW android_winscope_rect(
  -- The rectangle's row.
  id LONG,
  -- Left.
  x DOUBLE,
  -- Top.
  y DOUBLE,
  -- Width.
  w DOUBLE,
  -- Height.
  h DOUBLE
) AS
SELECT id, x, y, w, h FROM __intrinsic_winscope_rect;

CREATE PERFETTO VIEW android_winscope_transform(
  -- The transform's row.
  id LONG,
  -- Scale x.
  dsdx DOUBLE,
  -- Skew x.
  dtdx DOUBLE,
  -- Translation x.
  tx DOUBLE,
  -- Skew y.
  dtdy DOUBLE,
  -- Scale y.
  dsdy DOUBLE,
  -- Translation y.
  ty DOUBLE
) AS
SELECT id, dsdx, dtdx, tx, dtdy, dsdy, ty FROM __intrinsic_winscope_transform;

CREATE PERFETTO VIEW android_winscope_trace_rect(
  -- The trace rect's row.
  id LONG,
  -- The rectangle.
  rect_id LONG,
  -- Its group.
  group_id LONG,
  -- Its depth.
  depth LONG,
  -- Whether it is a spy window's.
  is_spy LONG,
  -- Whether it is visible.
  is_visible LONG,
  -- Its opacity.
  opacity DOUBLE,
  -- Its transform.
  transform_id LONG,
  -- Its border's width.
  border_width DOUBLE,
  -- Its border's colour.
  border_color LONG
) AS
SELECT
  id,
  rect_id,
  group_id,
  depth,
  is_spy,
  is_visible,
  opacity,
  transform_id,
  border_width,
  border_color
FROM __intrinsic_winscope_trace_rect;

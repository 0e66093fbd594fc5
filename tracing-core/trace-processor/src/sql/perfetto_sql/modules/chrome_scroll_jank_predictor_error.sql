-- Written for zerotrace: the `chrome.scroll_jank.predictor_error` module,
-- jank from the scroll predictor: a presented frame whose vertical delta
-- is out of proportion to its neighbours' within the scroll.
-- `chrome_predictor_error`: each presented frame with a frame before and
-- after it in its scroll (`chrome_presented_scroll_offsets`), the three
-- deltas, the threshold (1.4 for a slow scroll, all three deltas at most
-- 7 px, else 1.2) and by how much the ratio of its delta to the larger
-- neighbour's, or of the smaller neighbour's to its own, passes it (0 when
-- neither does).

INCLUDE PERFETTO MODULE chrome.scroll_jank.scroll_offsets;

-- The largest delta (px) of a slow scroll.
CREATE PERFETTO FUNCTION _get_slow_scroll_delta_threshold()
RETURNS DOUBLE
AS
SELECT 7.0;

-- The janky ratio of a slow scroll.
CREATE PERFETTO FUNCTION _get_slow_scroll_janky_threshold()
RETURNS DOUBLE
AS
SELECT 1.4;

-- The janky ratio of a fast scroll.
CREATE PERFETTO FUNCTION _get_fast_scroll_janky_threshold()
RETURNS DOUBLE
AS
SELECT 1.2;

-- The janky ratio for three successive deltas.
CREATE PERFETTO FUNCTION _get_scroll_jank_threshold(d1 DOUBLE, d2 DOUBLE, d3 DOUBLE)
RETURNS DOUBLE
AS
SELECT iif(
  max($d1, $d2, $d3) <= _get_slow_scroll_delta_threshold(),
  _get_slow_scroll_janky_threshold(),
  _get_fast_scroll_janky_threshold()
);

-- How far the middle delta's ratio to its neighbours passes `threshold`.
CREATE PERFETTO FUNCTION _get_predictor_jank(
  d1 DOUBLE,
  d2 DOUBLE,
  d3 DOUBLE,
  threshold DOUBLE
)
RETURNS DOUBLE
AS
SELECT CASE
  WHEN $d2 / max($d1, $d3) >= $threshold THEN $d2 / max($d1, $d3) - $threshold
  WHEN min($d1, $d3) / $d2 >= $threshold THEN min($d1, $d3) / $d2 - $threshold
  ELSE 0.0
END;

-- Each presented frame with its scroll neighbours' deltas (0 for none).
CREATE PERFETTO TABLE _deltas_and_neighbors AS
SELECT
  scroll_id,
  scroll_update_id,
  ts,
  delta_y,
  relative_offset_y,
  lag(coalesce(delta_y, 0.0)) OVER w AS prev_delta,
  lead(coalesce(delta_y, 0.0)) OVER w AS next_delta
FROM chrome_presented_scroll_offsets
WINDOW w AS (PARTITION BY scroll_id ORDER BY ts);

-- Those with both neighbours, with their threshold.
CREATE PERFETTO TABLE _deltas_and_neighbors_with_threshold AS
SELECT
  *,
  _get_scroll_jank_threshold(abs(prev_delta), abs(delta_y), abs(next_delta)) AS delta_threshold
FROM _deltas_and_neighbors
WHERE delta_y IS NOT NULL AND prev_delta IS NOT NULL AND next_delta IS NOT NULL;

CREATE PERFETTO TABLE chrome_predictor_error(
  scroll_id LONG,
  scroll_update_id LONG,
  present_ts TIMESTAMP,
  delta_y DOUBLE,
  relative_offset_y DOUBLE,
  prev_delta DOUBLE,
  next_delta DOUBLE,
  predictor_jank DOUBLE,
  delta_threshold DOUBLE
)
AS
SELECT
  scroll_id,
  scroll_update_id,
  ts AS present_ts,
  delta_y,
  relative_offset_y,
  prev_delta,
  next_delta,
  _get_predictor_jank(abs(prev_delta), abs(delta_y), abs(next_delta), delta_threshold)
    AS predictor_jank,
  delta_threshold
FROM _deltas_and_neighbors_with_threshold;

-- Written for zerotrace: the `pixel.touch` module.
-- `pixel_touch_events`: one row per touch frame that Pixel's touch stack
-- (Twoshay, the Google touch interface driver) processed, joining the
-- frame's processing slice (`algo->processFrame: … IN_TS=<hw ts>…`) to
-- the IRQ bottom half that read that hardware timestamp
-- (`gti_irq_thread_fn: IRQ_IDX=<n>…` with a child
-- `goog_offload_populate_frame: … IN_TS=<hw ts>…`) and to the top half
-- (`IRQ (…)` slices) during which the `gti_th_irq_index` counter took the
-- same IRQ index; with the `Resample latency offset` counter's value
-- during the frame's processing (0 without one).

INCLUDE PERFETTO MODULE intervals.intersect;

-- The integer after `key` in `name`, up to the next '.'.
CREATE PERFETTO FUNCTION _pixel_touch_field(name STRING, key STRING)
RETURNS LONG AS
SELECT cast_int!(str_split(str_split($name, $key, 1), '.', 0));

CREATE PERFETTO TABLE _pixel_touch_twoshay_events AS
SELECT
  s.id AS twoshay_slice_id,
  s.ts AS twoshay_ts,
  s.dur AS twoshay_dur,
  _pixel_touch_field(s.name, 'IN_TS=') AS in_ts,
  cast_int!(COALESCE(
    (
      SELECT c.value
      FROM counter AS c
      WHERE c.track_id = (SELECT id FROM track WHERE name = 'Resample latency offset' LIMIT 1)
        AND c.ts BETWEEN s.ts AND s.ts + s.dur
      LIMIT 1
    ),
    0
  )) AS resample_latency_offset
FROM slice AS s
WHERE s.name GLOB 'algo->processFrame:*';

CREATE PERFETTO TABLE _pixel_touch_bottom_half_events AS
SELECT
  b.id AS bh_slice_id,
  b.ts AS bh_start_ts,
  b.dur AS bh_dur,
  b.track_id,
  _pixel_touch_field(b.name, 'IRQ_IDX=') AS irq_idx,
  (
    SELECT _pixel_touch_field(c.name, 'IN_TS=')
    FROM slice AS c
    WHERE c.parent_id = b.id AND c.name GLOB 'goog_offload_populate_frame:*'
    LIMIT 1
  ) AS in_ts
FROM slice AS b
WHERE b.name GLOB 'gti_irq_thread_fn: IRQ_IDX=*';

CREATE PERFETTO TABLE _pixel_touch_top_half_events AS
WITH
  irq_index AS (
    SELECT id, ts, 0 AS dur, value
    FROM counter
    WHERE track_id = (SELECT id FROM track WHERE name = 'gti_th_irq_index' LIMIT 1)
  ),
  irqs AS (
    SELECT id, ts, dur, track_id FROM slice WHERE name GLOB 'IRQ (*)' AND dur > 0
  )
SELECT
  s.id AS th_slice_id,
  s.ts AS th_start_ts,
  s.dur AS th_dur,
  s.track_id AS th_track_id,
  c.value AS irq_idx
FROM _interval_intersect!((irqs, irq_index), ()) AS ii
JOIN irqs AS s ON s.id = ii.id_0
JOIN irq_index AS c ON c.id = ii.id_1;

CREATE PERFETTO TABLE pixel_touch_events(
  in_ts LONG,
  ts_pixel_touch_th TIMESTAMP,
  dur_pixel_touch_th DURATION,
  id_pixel_touch_th LONG,
  track_pixel_touch_th JOINID(track.id),
  ts_pixel_touch_bh TIMESTAMP,
  dur_pixel_touch_bh DURATION,
  id_pixel_touch_bh LONG,
  track_pixel_touch_bh JOINID(track.id),
  ts_pixel_touch TIMESTAMP,
  dur_pixel_touch DURATION,
  id_pixel_touch LONG,
  track_pixel_touch JOINID(track.id),
  resample_latency_offset LONG
) AS
SELECT
  t.in_ts,
  th.th_start_ts AS ts_pixel_touch_th,
  th.th_dur AS dur_pixel_touch_th,
  th.th_slice_id AS id_pixel_touch_th,
  th.th_track_id AS track_pixel_touch_th,
  bh.bh_start_ts AS ts_pixel_touch_bh,
  bh.bh_dur AS dur_pixel_touch_bh,
  bh.bh_slice_id AS id_pixel_touch_bh,
  bh.track_id AS track_pixel_touch_bh,
  t.twoshay_ts AS ts_pixel_touch,
  t.twoshay_dur AS dur_pixel_touch,
  t.twoshay_slice_id AS id_pixel_touch,
  s.track_id AS track_pixel_touch,
  t.resample_latency_offset
FROM _pixel_touch_twoshay_events AS t
LEFT JOIN _pixel_touch_bottom_half_events AS bh ON bh.in_ts = t.in_ts
LEFT JOIN _pixel_touch_top_half_events AS th ON th.irq_idx = bh.irq_idx
LEFT JOIN slice AS s ON s.id = t.twoshay_slice_id;

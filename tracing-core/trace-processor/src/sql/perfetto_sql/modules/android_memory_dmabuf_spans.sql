-- android.memory.dmabuf_spans, written for zerotrace: each process's
-- DMA-BUF resident bytes (its `mem.dmabuf_rss` counter) as spans that
-- last until the next reading.
--   _dmabuf_spans  (upid, ts, dur, dmabuf_rss)

INCLUDE PERFETTO MODULE counters.intervals;

CREATE PERFETTO TABLE _dmabuf_spans AS
WITH readings AS (
  SELECT c.*
  FROM counter c
  JOIN counter_track t ON t.id = c.track_id
  WHERE t.name = 'mem.dmabuf_rss'
)
SELECT pct.upid, r.ts, r.dur, CAST(r.value AS INTEGER) AS dmabuf_rss
FROM counter_leading_intervals!(readings) r
JOIN process_counter_track pct ON pct.id = r.track_id;

-- Written for zerotrace: the `android.memory.dmabuf` module. Each change
-- of a DMA-BUF heap (the `mem.dma_heap_change` counters of the emitting
-- threads, the buffer's inode as arg) is attributed to the process that
-- asked for the buffer: an allocation made by a gralloc allocator thread
-- while it served a binder transaction goes to the transaction's client
-- thread; a free goes to whoever the buffer's allocation went to.
-- `android_dmabuf_allocs` lists the changes so attributed (size negative
-- for frees) and `android_memory_cumulative_dmabuf` each process's (or
-- process-less thread's) running total.

CREATE PERFETTO TABLE _raw_dmabuf_events AS
SELECT
  extract_arg(c.arg_set_id, 'inode') AS inode,
  t.utid,
  c.ts,
  cast_int!(c.value) AS buf_size
FROM thread_counter_track AS t
JOIN counter AS c ON c.track_id = t.id
WHERE t.name = 'mem.dma_heap_change';

-- Binder replies of gralloc allocator threads and the client slice each
-- answers.
CREATE PERFETTO TABLE _gralloc_binders AS
WITH
  allocator_threads AS (
    SELECT thread.utid
    FROM thread
    JOIN process USING (upid)
    WHERE process.name GLOB '/vendor/bin/hw/android.hardware.graphics.allocator*'
      OR process.name GLOB '/vendor/bin/hw/*gralloc.allocator*'
  )
SELECT f.slice_out AS client_slice_id, s.ts, s.dur, tt.utid
FROM slice AS s
JOIN thread_track AS tt ON tt.id = s.track_id
JOIN allocator_threads AS a ON a.utid = tt.utid
JOIN flow AS f ON f.slice_in = s.id
WHERE s.name = 'binder reply';

CREATE PERFETTO TABLE _attributed_dmabufs AS
SELECT
  r.inode,
  r.ts,
  r.buf_size,
  coalesce(client.utid, r.utid) AS attr_utid
FROM _raw_dmabuf_events AS r
LEFT JOIN _gralloc_binders AS g
  ON g.utid = r.utid AND r.ts BETWEEN g.ts AND g.ts + g.dur
LEFT JOIN slice AS cs ON cs.id = g.client_slice_id
LEFT JOIN thread_track AS client ON client.id = cs.track_id
ORDER BY r.inode, r.ts;

-- The thread a change is charged to: an allocation's own, a free's that of
-- the buffer's latest earlier change.
CREATE PERFETTO FUNCTION _alloc_source(is_alloc BOOL, inode LONG, ts TIMESTAMP)
RETURNS LONG AS
SELECT attr_utid
FROM _attributed_dmabufs
WHERE inode = $inode AND (($is_alloc AND ts = $ts) OR (NOT $is_alloc AND ts < $ts))
ORDER BY ts DESC
LIMIT 1;

CREATE PERFETTO TABLE android_dmabuf_allocs(
  ts TIMESTAMP,
  buf_size LONG,
  inode LONG,
  utid JOINID(thread.id),
  tid LONG,
  thread_name STRING,
  upid JOINID(process.id),
  pid LONG,
  process_name STRING
) AS
WITH
  charged AS (
    SELECT inode, ts, buf_size, _alloc_source(buf_size > 0, inode, ts) AS utid
    FROM _attributed_dmabufs
  )
SELECT
  a.ts,
  a.buf_size,
  a.inode,
  a.utid,
  thread.tid,
  thread.name AS thread_name,
  thread.upid,
  process.pid,
  process.name AS process_name
FROM charged AS a
JOIN thread USING (utid)
LEFT JOIN process USING (upid)
ORDER BY a.ts;

CREATE PERFETTO TABLE android_memory_cumulative_dmabuf(
  upid JOINID(process.id),
  process_name STRING,
  utid JOINID(thread.id),
  thread_name STRING,
  ts TIMESTAMP,
  value LONG
) AS
SELECT
  upid,
  process_name,
  utid,
  thread_name,
  ts,
  sum(buf_size) OVER (PARTITION BY coalesce(upid, utid) ORDER BY ts) AS value
FROM android_dmabuf_allocs;

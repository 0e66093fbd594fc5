-- android.garbage_collection, written for zerotrace: ART's garbage
-- collections (the top-level thread slices named `*concurrent*GC`,
-- stretched over a `CompactionPhase` or `Background concurrent copying
-- GC` slice that directly follows on the same track), the Java heap
-- around them (the process counter `Heap size (KB)`), where their time
-- went by thread state, and heap and GC statistics per process and for
-- the device.
--   _gc_slice                          the GCs
--   _gc_heap_counter                   the heap samples as spans
--   _gc_slice_with_final_heap          each GC with the first heap
--                                      sample at or after its end
--   _gc_slice_heap                     each GC's type and heap range
--   android_garbage_collection_events  GCs with their time by state
--   _gc_stats_window                   the span with heap samples
--   _gc_heap_allocated                 heap growth between samples
--   _gc_during_android_startup         GC time inside app startups
--   _gc_heap_utilization               live and total heap MB-seconds
--   _android_garbage_collection_process_stats  statistics per process
--   _android_garbage_collection_stats  statistics for the device

INCLUDE PERFETTO MODULE android.startup.startups;
INCLUDE PERFETTO MODULE intervals.intersect;
INCLUDE PERFETTO MODULE slices.with_context;

-- The GCs with their thread and process. An unfinished slice lasts to
-- the trace's end.
CREATE PERFETTO VIEW _gc_slice AS
WITH top AS (
  SELECT
    id,
    name,
    ts,
    iif(dur = -1, trace_end() - ts, dur) AS own_dur,
    lead(name) OVER (PARTITION BY track_id ORDER BY ts) AS next_name,
    lead(dur) OVER (PARTITION BY track_id ORDER BY ts) AS next_dur,
    utid, tid, upid, pid, thread_name, process_name
  FROM thread_slice
  WHERE depth = 0
),
stretched AS (
  SELECT
    *,
    own_dur + iif(
      next_name IN ('CompactionPhase', 'Background concurrent copying GC'),
      next_dur,
      0
    ) AS full_dur
  FROM top
  WHERE name GLOB '*concurrent*GC'
)
SELECT
  id AS gc_id,
  name AS gc_name,
  ts AS gc_ts,
  ts,
  full_dur AS gc_dur,
  full_dur AS dur,
  utid, tid, upid, pid, thread_name, process_name
FROM stretched;

-- The `Heap size (KB)` samples, each lasting to the next on its track
-- (the last to the trace's end).
CREATE PERFETTO VIEW _gc_heap_counter AS
SELECT
  c.ts,
  coalesce(lead(c.ts) OVER (PARTITION BY c.track_id ORDER BY c.ts), trace_end())
    - c.ts AS dur,
  t.upid,
  cast_int!(c.value) AS value
FROM counter AS c
JOIN process_counter_track AS t ON t.id = c.track_id
JOIN process AS p ON p.upid = t.upid
WHERE t.name = 'Heap size (KB)';

-- Each GC with `last_value`, the heap sample that comes next in its
-- process after the GC ends (NULL when another GC ends first or no
-- sample follows): the best guess at the heap left after it.
CREATE PERFETTO VIEW _gc_slice_with_final_heap AS
WITH timeline AS (
  SELECT upid, gc_id, gc_ts + gc_dur AS ts, NULL AS value FROM _gc_slice
  UNION ALL
  SELECT upid, NULL, ts, value FROM _gc_heap_counter
),
with_next AS (
  SELECT
    gc_id,
    lead(value) OVER (PARTITION BY upid ORDER BY ts) AS last_value
  FROM timeline
)
SELECT g.*, n.last_value
FROM _gc_slice AS g
LEFT JOIN with_next AS n ON n.gc_id = g.gc_id;

-- The GCs cut by the heap samples of their process.
CREATE VIRTUAL TABLE _gc_slice_heap_sp
USING SPAN_JOIN(_gc_slice_with_final_heap PARTITIONED upid,
  _gc_heap_counter PARTITIONED upid);

-- One row per GC that overlaps a heap sample: its type from its name,
-- whether it is mark-compact, and the smallest and largest heap (MB)
-- seen during it or right after it.
CREATE PERFETTO TABLE _gc_slice_heap AS
SELECT
  gc_ts AS ts,
  gc_dur AS dur,
  upid,
  gc_id,
  gc_name,
  gc_ts,
  gc_dur,
  utid,
  tid,
  pid,
  thread_name,
  process_name,
  last_value,
  value,
  CASE
    WHEN gc_name GLOB '*NativeAlloc*' THEN 'native_alloc'
    WHEN gc_name GLOB '*Alloc*' THEN 'alloc'
    WHEN gc_name GLOB '*young*' THEN 'young'
    WHEN gc_name GLOB '*CollectorTransition*' THEN 'collector_transition'
    WHEN gc_name GLOB '*Explicit*' THEN 'explicit'
    ELSE 'full'
  END AS gc_type,
  iif(gc_name GLOB '*mark compact*', 1, 0) AS is_mark_compact,
  max(max(value, last_value)) / 1e3 AS max_heap_mb,
  min(min(value, last_value)) / 1e3 AS min_heap_mb
FROM _gc_slice_heap_sp
GROUP BY gc_id;

-- The GCs cut by the thread states of the collecting thread.
CREATE VIRTUAL TABLE _gc_slice_heap_thread_state_sp
USING SPAN_LEFT_JOIN(_gc_slice_heap PARTITIONED utid,
  thread_state PARTITIONED utid);

-- One row per GC: who ran it, its type, the heap it reclaimed (largest
-- less smallest, MB), and its wall time split into running, runnable,
-- uninterruptible sleep on IO and otherwise, and interruptible sleep.
CREATE PERFETTO TABLE android_garbage_collection_events(
  tid LONG,
  pid LONG,
  utid JOINID(thread.id),
  upid JOINID(process.id),
  thread_name STRING,
  process_name STRING,
  gc_type STRING,
  is_mark_compact LONG,
  reclaimed_mb DOUBLE,
  min_heap_mb DOUBLE,
  max_heap_mb DOUBLE,
  gc_id LONG,
  gc_ts TIMESTAMP,
  gc_dur DURATION,
  gc_running_dur DURATION,
  gc_runnable_dur DURATION,
  gc_unint_io_dur DURATION,
  gc_unint_non_io_dur DURATION,
  gc_int_dur LONG
) AS
SELECT
  tid,
  pid,
  utid,
  upid,
  thread_name,
  process_name,
  gc_type,
  is_mark_compact,
  max_heap_mb - min_heap_mb AS reclaimed_mb,
  min_heap_mb,
  max_heap_mb,
  gc_id,
  gc_ts,
  gc_dur,
  sum(iif(state = 'Running', dur, 0)) AS gc_running_dur,
  sum(iif(state IN ('R', 'R+'), dur, 0)) AS gc_runnable_dur,
  sum(iif(state = 'D' AND io_wait = 1, dur, 0)) AS gc_unint_io_dur,
  sum(iif(state = 'D' AND io_wait != 1, dur, 0)) AS gc_unint_non_io_dur,
  sum(iif(state = 'S', dur, 0)) AS gc_int_dur
FROM _gc_slice_heap_thread_state_sp
GROUP BY gc_id;

-- The window the statistics cover: from the first to the last heap
-- sample of any process (the trace's own bounds often reach far beyond
-- the data).
CREATE PERFETTO TABLE _gc_stats_window AS
SELECT
  min(c.ts) AS gc_stats_window_start,
  max(c.ts) AS gc_stats_window_end,
  max(c.ts) - min(c.ts) AS gc_stats_window_dur
FROM counter AS c
JOIN process_counter_track AS t ON t.id = c.track_id
WHERE t.name = 'Heap size (KB)';

-- Each heap sample with the time since the process's previous one and
-- the heap it grew by since then (0 when it shrank or stayed).
CREATE PERFETTO TABLE _gc_heap_allocated AS
WITH samples AS (
  SELECT
    t.upid,
    c.ts,
    c.value,
    lag(c.ts) OVER (PARTITION BY t.upid ORDER BY c.ts) AS prev_ts,
    lag(c.value) OVER (PARTITION BY t.upid ORDER BY c.ts) AS prev_value
  FROM counter AS c
  JOIN process_counter_track AS t ON t.id = c.track_id
  WHERE t.name = 'Heap size (KB)'
)
SELECT
  upid,
  ts,
  ts - prev_ts AS dur,
  value,
  iif(prev_value < value, value - prev_value, 0) AS allocated
FROM samples;

-- The startups (of positive duration) and the GCs, as intervals.
CREATE PERFETTO VIEW _gc_startups_for_intersect AS
SELECT ts, dur, startup_id AS id FROM android_startups WHERE dur > 0;

CREATE PERFETTO VIEW _gc_events_for_intersect AS
SELECT gc_ts AS ts, gc_dur AS dur, gc_id AS id
FROM android_garbage_collection_events;

-- The parts of GCs that fall inside app startups.
CREATE PERFETTO TABLE _gc_during_android_startup AS
SELECT ts, dur, id_0 AS startup_id, id_1 AS gc_id
FROM _interval_intersect!(
  (_gc_startups_for_intersect, _gc_events_for_intersect),
  ()
);

-- Per process with GCs: the smallest (live) and largest (total) heap of
-- each GC weighted by the time since the process's previous GC ended
-- (for the first, since the process started or the window began), in
-- MB-seconds.
CREATE PERFETTO TABLE _gc_heap_utilization AS
WITH starts AS (
  SELECT
    p.upid,
    iif(p.start_ts IS NULL, w.gc_stats_window_start,
      max(p.start_ts, w.gc_stats_window_start)) AS gc_ts,
    0 AS gc_dur,
    0 AS min_heap_mb,
    0 AS max_heap_mb
  FROM process AS p, _gc_stats_window AS w
),
gcs AS (
  SELECT upid, gc_ts, gc_dur, min_heap_mb, max_heap_mb
  FROM android_garbage_collection_events
  UNION
  SELECT * FROM starts
),
periods AS (
  SELECT
    upid,
    gc_ts + gc_dur
      - lag(gc_ts + gc_dur) OVER (PARTITION BY upid ORDER BY gc_ts) AS gc_period,
    min_heap_mb,
    max_heap_mb
  FROM gcs
)
SELECT
  upid,
  sum(gc_period * min_heap_mb) / 1e9 AS heap_live_mbs,
  sum(gc_period * max_heap_mb) / 1e9 AS heap_total_mbs
FROM periods
WHERE min_heap_mb IS NOT NULL
GROUP BY upid;

-- Per process with heap samples: heap size and allocation, heap
-- utilisation, GC CPU time and GC time during startups, as totals, as
-- rates over the window, and as efficiencies (allocation rate times
-- utilisation over GC rate times the free fraction; larger is better).
CREATE PERFETTO TABLE _android_garbage_collection_process_stats(
  upid JOINID(process.id),
  ts TIMESTAMP,
  dur DURATION,
  heap_size_mbs DOUBLE,
  heap_size_mb DOUBLE,
  heap_allocated_mb DOUBLE,
  heap_allocation_rate DOUBLE,
  heap_live_mbs DOUBLE,
  heap_total_mbs DOUBLE,
  heap_utilization DOUBLE,
  gc_running_dur DURATION,
  gc_running_rate DOUBLE,
  gc_running_efficiency DOUBLE,
  gc_during_android_startup_dur DURATION,
  total_android_startup_dur DURATION,
  gc_during_android_startup_rate DOUBLE,
  gc_during_android_startup_efficiency DOUBLE
) AS
WITH running AS (
  SELECT upid, sum(gc_running_dur) AS gc_running_dur
  FROM android_garbage_collection_events
  GROUP BY upid
),
heap AS (
  SELECT
    upid,
    sum(allocated) / 1e3 AS heap_allocated_mb,
    sum(value * dur) / (1e3 * 1e9) AS heap_size_mbs
  FROM _gc_heap_allocated
  GROUP BY upid
),
in_startup AS (
  SELECT e.upid, sum(s.dur) AS gc_during_android_startup_dur
  FROM _gc_during_android_startup AS s
  LEFT JOIN android_garbage_collection_events AS e USING (gc_id)
  GROUP BY e.upid
),
startup_total AS (
  SELECT sum(dur) AS total_android_startup_dur FROM android_startups
),
joined AS (
  SELECT *
  FROM heap
  LEFT JOIN running USING (upid)
  LEFT JOIN in_startup USING (upid)
  LEFT JOIN _gc_heap_utilization USING (upid), _gc_stats_window, startup_total
),
rates AS (
  SELECT
    *,
    gc_running_dur * 1.0 / gc_stats_window_dur AS gc_running_rate,
    gc_during_android_startup_dur * 1.0 / total_android_startup_dur
      AS gc_during_android_startup_rate,
    heap_allocated_mb * 1e9 / gc_stats_window_dur AS heap_allocation_rate,
    heap_size_mbs * 1e9 / gc_stats_window_dur AS heap_size_mb,
    heap_live_mbs / heap_total_mbs AS heap_utilization
  FROM joined
)
SELECT
  upid,
  gc_stats_window_start AS ts,
  gc_stats_window_dur AS dur,
  heap_size_mbs,
  heap_size_mb,
  heap_allocated_mb,
  heap_allocation_rate,
  heap_live_mbs,
  heap_total_mbs,
  heap_utilization,
  gc_running_dur,
  gc_running_rate,
  heap_allocation_rate * heap_utilization
    / (gc_running_rate * (1 - heap_utilization)) AS gc_running_efficiency,
  gc_during_android_startup_dur,
  total_android_startup_dur,
  gc_during_android_startup_rate,
  heap_allocation_rate * heap_utilization
    / (gc_during_android_startup_rate * (1 - heap_utilization))
    AS gc_during_android_startup_efficiency
FROM rates;

-- The process statistics summed over the device (utilisation as total
-- live over total heap), one row.
CREATE PERFETTO TABLE _android_garbage_collection_stats(
  ts TIMESTAMP,
  dur DURATION,
  heap_size_mbs DOUBLE,
  heap_size_mb DOUBLE,
  heap_allocated_mb DOUBLE,
  heap_allocation_rate DOUBLE,
  heap_live_mbs DOUBLE,
  heap_total_mbs DOUBLE,
  heap_utilization DOUBLE,
  gc_running_dur DURATION,
  gc_running_rate DOUBLE,
  gc_during_android_startup_dur DURATION,
  total_android_startup_dur DURATION,
  gc_during_android_startup_rate DOUBLE,
  gc_running_efficiency DOUBLE,
  gc_during_android_startup_efficiency DOUBLE
) AS
WITH device AS (
  SELECT
    ts,
    dur,
    sum(heap_size_mbs) AS heap_size_mbs,
    sum(heap_size_mb) AS heap_size_mb,
    sum(heap_allocated_mb) AS heap_allocated_mb,
    sum(heap_allocation_rate) AS heap_allocation_rate,
    sum(heap_live_mbs) AS heap_live_mbs,
    sum(heap_total_mbs) AS heap_total_mbs,
    sum(heap_live_mbs) / sum(heap_total_mbs) AS heap_utilization,
    sum(gc_running_dur) AS gc_running_dur,
    sum(gc_running_rate) AS gc_running_rate,
    sum(gc_during_android_startup_dur) AS gc_during_android_startup_dur,
    total_android_startup_dur,
    sum(gc_during_android_startup_rate) AS gc_during_android_startup_rate
  FROM _android_garbage_collection_process_stats
)
SELECT
  *,
  heap_allocation_rate * heap_utilization
    / (gc_running_rate * (1 - heap_utilization)) AS gc_running_efficiency,
  heap_allocation_rate * heap_utilization
    / (gc_during_android_startup_rate * (1 - heap_utilization))
    AS gc_during_android_startup_efficiency
FROM device;

-- android.memory.heap_graph.heap_graph_stats, written for zerotrace: one
-- row per Java heap dump with its totals (all objects and the reachable
-- ones), the process's memory state nearest the dump (OOM score, anon RSS
-- and swap, DMA-BUF: the reading spanning the dump, else one starting at
-- most 500 ms after it, nearest first) and its OutOfMemoryError details.
--   android_heap_graph_stats  (upid, graph_sample_ts, process_uptime,
--     total_heap_size, total_native_alloc_registry_size, total_obj_count,
--     reachable_heap_size, reachable_native_alloc_registry_size,
--     reachable_obj_count, oom_score_adj, anon_rss_and_swap_size,
--     dmabuf_rss_size, art_bytes_allocated, is_out_of_memory_error,
--     oome_failing_allocation_size, oome_remaining_art_free_bytes)

INCLUDE PERFETTO MODULE linux.memory.process;
INCLUDE PERFETTO MODULE android.oom_adjuster;
INCLUDE PERFETTO MODULE android.memory.dmabuf_spans;
INCLUDE PERFETTO MODULE android.memory.heap_graph.oome;

-- The value of `col` in `spans` (ts, dur, upid) for process `upid` nearest
-- `at`: a span holding it, or one starting within 500 ms after it.
CREATE PERFETTO MACRO _heap_graph_stats_near(
  upid Expr,
  at Expr,
  spans TableOrSubquery,
  col ColumnName
)
RETURNS Expr
AS (
  SELECT v FROM (
    SELECT s.$col AS v, s.ts AS a, s.ts + s.dur AS b, abs(s.ts - $at) AS d
    FROM $spans s
    WHERE s.upid = $upid
  )
  WHERE $at BETWEEN a AND b OR (a > $at AND d <= 500 * 1e6)
  ORDER BY d
  LIMIT 1
);

CREATE PERFETTO TABLE android_heap_graph_stats(
  upid JOINID(process.id),
  graph_sample_ts TIMESTAMP,
  process_uptime LONG,
  total_heap_size LONG,
  total_native_alloc_registry_size LONG,
  total_obj_count LONG,
  reachable_heap_size LONG,
  reachable_native_alloc_registry_size LONG,
  reachable_obj_count LONG,
  oom_score_adj LONG,
  anon_rss_and_swap_size LONG,
  dmabuf_rss_size LONG,
  art_bytes_allocated LONG,
  is_out_of_memory_error BOOL,
  oome_failing_allocation_size LONG,
  oome_remaining_art_free_bytes LONG
) AS
WITH dumps AS (
  SELECT
    upid,
    graph_sample_ts,
    sum(self_size) AS total_heap_size,
    sum(native_size) AS total_native_alloc_registry_size,
    count(*) AS total_obj_count,
    sum(CASE WHEN reachable THEN self_size ELSE 0 END) AS reachable_heap_size,
    sum(CASE WHEN reachable THEN native_size ELSE 0 END) AS reachable_native_alloc_registry_size,
    sum(CASE WHEN reachable THEN 1 ELSE 0 END) AS reachable_obj_count
  FROM heap_graph_object
  GROUP BY upid, graph_sample_ts
)
SELECT
  d.upid,
  d.graph_sample_ts,
  d.graph_sample_ts - p.start_ts AS process_uptime,
  d.total_heap_size,
  d.total_native_alloc_registry_size,
  d.total_obj_count,
  d.reachable_heap_size,
  d.reachable_native_alloc_registry_size,
  d.reachable_obj_count,
  _heap_graph_stats_near!(d.upid, d.graph_sample_ts, android_oom_adj_intervals, score)
    AS oom_score_adj,
  _heap_graph_stats_near!(d.upid, d.graph_sample_ts, memory_rss_and_swap_per_process,
    anon_rss_and_swap) AS anon_rss_and_swap_size,
  _heap_graph_stats_near!(d.upid, d.graph_sample_ts, _dmabuf_spans, dmabuf_rss)
    AS dmabuf_rss_size,
  g.heap_size AS art_bytes_allocated,
  (g.dump_reason = 'OOME'
    OR (SELECT str_value FROM metadata WHERE name = 'trace_trigger')
      = 'com.android.telemetry.art-outofmemory') AS is_out_of_memory_error,
  o.allocation_size_bytes AS oome_failing_allocation_size,
  o.free_bytes_until_oom AS oome_remaining_art_free_bytes
FROM dumps d
JOIN process p USING (upid)
LEFT JOIN heap_graph g ON g.upid = d.upid AND g.ts = d.graph_sample_ts
LEFT JOIN android_heap_graph_java_oome_details o ON o.heap_graph_id = g.id;

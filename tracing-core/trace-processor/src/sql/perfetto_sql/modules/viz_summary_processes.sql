-- viz.summary.processes, written for zerotrace: per process, what the UI
-- shows at load (its threads' figures summed, its own slices, heap
-- profile allocations and heap graph objects).
--   _process_track_summary             per process: slices on its tracks
--   _heap_profile_allocation_summary   per process: heap profile rows
--   _heap_profile_graph_summary        per process: heap graph objects
--   _thread_process_grouped_summary    per process: its threads' summary
--   _process_available_info_summary    every process with any of these,
--                                      or with counter, state or smaps data

INCLUDE PERFETTO MODULE viz.summary.slices;
INCLUDE PERFETTO MODULE viz.summary.threads;

-- The slices on each process's tracks.
CREATE PERFETTO TABLE _process_track_summary AS
SELECT pt.upid, sum(s.cnt) AS slice_count
FROM process_track AS pt
JOIN _slice_track_summary AS s ON s.id = pt.id
GROUP BY pt.upid;

-- The heap profile allocation rows of each process.
CREATE PERFETTO TABLE _heap_profile_allocation_summary AS
SELECT upid, count(*) AS allocation_count
FROM heap_profile_allocation
GROUP BY upid;

-- The heap graph objects of each process. zerotrace reads no heap graphs
-- (it has no heap_graph_object table), so no process has any: the table
-- has upstream's columns and no rows. Count heap_graph_object by upid
-- here once the loader reads them.
CREATE PERFETTO TABLE _heap_profile_graph_summary AS
SELECT CAST(NULL AS INT) AS upid, 0 AS graph_object_count
WHERE 0;

-- The thread summaries of each process: the longest running time, and
-- the sums of the rest.
CREATE PERFETTO TABLE _thread_process_grouped_summary AS
SELECT
  t.upid,
  max(s.max_running_dur) AS max_running_dur,
  sum(s.sum_running_dur) AS sum_running_dur,
  sum(s.running_count) AS running_count,
  sum(s.slice_count) AS slice_count,
  sum(s.stack_sample_count) AS stack_sample_count
FROM _thread_available_info_summary AS s
JOIN thread AS t ON t.utid = s.utid
WHERE t.upid IS NOT NULL
GROUP BY t.upid;

-- Every process with thread figures, slices, allocations or graph
-- objects, or with a counter track, a state track or smaps rows; its
-- figures (0 for none).
CREATE PERFETTO TABLE _process_available_info_summary AS
WITH
  per_process AS (
    SELECT
      p.upid,
      g.upid AS grouped_upid,
      g.max_running_dur,
      g.sum_running_dur,
      g.running_count,
      g.slice_count AS thread_slice_count,
      g.stack_sample_count,
      (SELECT slice_count FROM _process_track_summary AS x WHERE x.upid = p.upid)
        AS process_slice_count,
      (SELECT allocation_count FROM _heap_profile_allocation_summary AS x
        WHERE x.upid = p.upid) AS allocation_count,
      (SELECT graph_object_count FROM _heap_profile_graph_summary AS x
        WHERE x.upid = p.upid) AS graph_object_count
    FROM process AS p
    LEFT JOIN _thread_process_grouped_summary AS g ON g.upid = p.upid
  )
SELECT
  upid,
  ifnull(max_running_dur, 0) AS max_running_dur,
  ifnull(sum_running_dur, 0) AS sum_running_dur,
  ifnull(running_count, 0) AS running_count,
  ifnull(thread_slice_count, 0) AS thread_slice_count,
  ifnull(stack_sample_count, 0) AS stack_sample_count,
  ifnull(process_slice_count, 0) AS process_slice_count,
  ifnull(allocation_count, 0) AS allocation_count,
  ifnull(graph_object_count, 0) AS graph_object_count
FROM per_process
WHERE grouped_upid IS NOT NULL
  OR process_slice_count IS NOT NULL
  OR allocation_count IS NOT NULL
  OR graph_object_count IS NOT NULL
  OR upid IN (SELECT upid FROM process_counter_track)
  OR upid IN (SELECT upid FROM process_state_track)
  OR upid IN (SELECT upid FROM profiler_smaps);

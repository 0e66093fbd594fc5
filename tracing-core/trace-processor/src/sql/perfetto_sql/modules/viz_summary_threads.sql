-- viz.summary.threads, written for zerotrace: per thread, what the UI
-- shows at load (scheduling, slices and stack samples).
--   _sched_summary                   per thread: longest and total running
--                                    time and the count of sched slices
--   _thread_track_summary            per thread: slices on its tracks
--   _stack_sample_summary            per thread: stack samples
--   _thread_available_info_summary   every thread with any of these, or
--                                    with a counter track

INCLUDE PERFETTO MODULE viz.summary.slices;

-- The finished sched slices of each thread that is not an idle thread.
CREATE PERFETTO TABLE _sched_summary AS
SELECT
  utid,
  max(dur) AS max_running_dur,
  sum(dur) AS sum_running_dur,
  count(*) AS running_count
FROM sched
WHERE dur != -1
  AND utid NOT IN (SELECT utid FROM thread WHERE is_idle)
GROUP BY utid;

-- The slices on each thread's tracks.
CREATE PERFETTO TABLE _thread_track_summary AS
SELECT tt.utid, sum(s.cnt) AS slice_count
FROM thread_track AS tt
JOIN _slice_track_summary AS s ON s.id = tt.id
GROUP BY tt.utid;

-- The stack samples taken on each thread.
CREATE PERFETTO TABLE _stack_sample_summary AS
SELECT c.utid, count(*) AS sample_count
FROM stack_sample AS ss
JOIN stack_sample_task_context AS c ON c.id = ss.task_context_id
WHERE c.utid IS NOT NULL
GROUP BY c.utid;

-- Every thread with sched slices, slices, stack samples or a counter
-- track, with those figures (0 for none).
CREATE PERFETTO TABLE _thread_available_info_summary AS
WITH
  per_thread AS (
    SELECT
      t.utid,
      ss.max_running_dur,
      ss.sum_running_dur,
      ss.running_count,
      (SELECT slice_count FROM _thread_track_summary AS x WHERE x.utid = t.utid)
        AS slice_count,
      (SELECT sample_count FROM _stack_sample_summary AS x WHERE x.utid = t.utid)
        AS stack_sample_count
    FROM thread AS t
    LEFT JOIN _sched_summary AS ss ON ss.utid = t.utid
  )
SELECT
  utid,
  ifnull(max_running_dur, 0) AS max_running_dur,
  ifnull(sum_running_dur, 0) AS sum_running_dur,
  ifnull(running_count, 0) AS running_count,
  ifnull(slice_count, 0) AS slice_count,
  ifnull(stack_sample_count, 0) AS stack_sample_count
FROM per_thread
WHERE max_running_dur IS NOT NULL
  OR sum_running_dur IS NOT NULL
  OR running_count IS NOT NULL
  OR slice_count IS NOT NULL
  OR stack_sample_count IS NOT NULL
  OR utid IN (SELECT utid FROM thread_counter_track);

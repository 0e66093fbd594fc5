-- android.memory.heap_profile.intervals, written for zerotrace: each heap
-- profile dump of a process and heap as an interval (its profiling window;
-- for producers that record no window start, from just after the previous
-- dump of the heap, or the trace start), with the bytes allocated in it,
-- those still live at the dump (callsites whose net count is positive) and
-- the net change.
--   _android_heap_profile_intervals  (id, upid, heap_name, ts, dur,
--     retained, allocated, delta)

CREATE PERFETTO TABLE _android_heap_profile_intervals AS
WITH
  per_callsite AS (
    SELECT
      upid,
      heap_name,
      ts,
      min(id) AS first_id,
      sum(count) AS count_net,
      sum(size) AS size_net,
      sum(CASE WHEN size > 0 THEN size ELSE 0 END) AS size_allocated
    FROM heap_profile_allocation
    GROUP BY upid, heap_name, ts, callsite_id
  ),
  per_dump AS (
    SELECT
      min(c.first_id) AS id,
      c.upid,
      c.heap_name,
      c.ts AS ts_end,
      sum(CASE WHEN c.count_net > 0 THEN c.size_net ELSE 0 END) AS retained,
      sum(c.size_allocated) AS allocated,
      sum(c.size_net) AS delta
    FROM per_callsite AS c
    WHERE EXISTS (
      SELECT 1 FROM heap_profile AS p WHERE p.upid = c.upid AND p.ts_end = c.ts
    )
    GROUP BY c.upid, c.heap_name, c.ts
  ),
  windows AS (
    SELECT
      d.*,
      (
        SELECT min(p.ts) FROM heap_profile AS p
        WHERE p.upid = d.upid AND p.ts_end = d.ts_end
      ) AS window_start,
      lag(d.ts_end) OVER (PARTITION BY d.upid, d.heap_name ORDER BY d.ts_end) AS previous_end
    FROM per_dump AS d
  ),
  bounded AS (
    SELECT
      *,
      CASE
        WHEN window_start < ts_end THEN window_start
        ELSE min(coalesce(previous_end, trace_start()) + 1, ts_end)
      END AS start_ts
    FROM windows
  )
SELECT
  id,
  upid,
  heap_name,
  start_ts AS ts,
  ts_end - start_ts AS dur,
  retained,
  allocated,
  delta
FROM bounded;

-- Written for zerotrace: the `linux.memory.general` module. It provides
-- `_all_counters_per_process`: every sample of every process counter
-- track, with its process, its track's name, and a duration reaching the
-- track's next sample, or for the last one just past the process's end
-- (the trace's end when the process outlived it).

CREATE PERFETTO VIEW _all_counters_per_process AS
SELECT
  c.ts,
  lead(c.ts, 1, (
    SELECT coalesce(p.end_ts, trace_end()) FROM process AS p WHERE p.upid = t.upid
  ) + 1) OVER (PARTITION BY c.track_id ORDER BY c.ts) - c.ts AS dur,
  t.upid,
  c.value,
  c.track_id,
  t.name
FROM counter AS c
JOIN process_counter_track AS t ON t.id = c.track_id
WHERE t.upid IS NOT NULL;

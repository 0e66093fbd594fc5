-- Written for zerotrace: the `linux.cpu.utilization.slice` module. It
-- provides `cpu_cycles_per_thread_slice` (for each thread slice, the CPU
-- cycles its thread ran during it, in millicycles and megacycles; NULL
-- unless the frequency is known for the whole time the slice's thread
-- ran within it) and `cpu_cycles_per_thread_slice_in_interval(ts, dur)`,
-- the same over the slices' parts inside the interval.

INCLUDE PERFETTO MODULE linux.cpu.utilization.general;
INCLUDE PERFETTO MODULE intervals.intersect;
INCLUDE PERFETTO MODULE slices.with_context;

-- The cycles of each thread slice its thread ran in at a known frequency,
-- by slice id (a table, so that the join below finds a slice's row by id).
CREATE PERFETTO TABLE _zt_cycles_per_thread_slice AS
WITH sliced AS (
  SELECT * FROM thread_slice WHERE dur > 0 AND utid > 0
)
SELECT
  ii.id_0 AS id,
  sum(ii.dur) AS dur,
  cast(sum(ii.dur * f.freq / 1000) AS INT) AS millicycles,
  cast(sum(ii.dur * f.freq / 1000) / 1e9 AS INT) AS megacycles
FROM _interval_intersect!((sliced, _cpu_freq_per_thread), (utid)) AS ii
JOIN _cpu_freq_per_thread AS f ON f.id = ii.id_1
WHERE f.freq IS NOT NULL
GROUP BY ii.id_0;

CREATE PERFETTO TABLE cpu_cycles_per_thread_slice(
  id JOINID(slice.id),
  name STRING,
  utid JOINID(thread.id),
  thread_name STRING,
  upid JOINID(process.id),
  process_name STRING,
  millicycles LONG,
  megacycles LONG
) AS
SELECT
  s.id,
  s.name,
  s.utid,
  s.thread_name,
  s.upid,
  s.process_name,
  c.millicycles,
  c.megacycles
FROM thread_slice AS s
LEFT JOIN _zt_cycles_per_thread_slice AS c ON c.id = s.id AND c.dur = s.dur;

CREATE PERFETTO FUNCTION cpu_cycles_per_thread_slice_in_interval(
  ts TIMESTAMP,
  dur DURATION
)
RETURNS TABLE(
  id JOINID(slice.id),
  name STRING,
  utid JOINID(thread.id),
  thread_name STRING,
  upid JOINID(process.id),
  process_name STRING,
  millicycles LONG,
  megacycles LONG
) AS
WITH
  cut AS (
    SELECT s.id, ii.ts, ii.dur, s.utid, s.name, s.thread_name, s.upid, s.process_name
    FROM _interval_intersect_single!($ts, $dur, (
      SELECT * FROM thread_slice WHERE dur > 0 AND utid > 0
    )) AS ii
    JOIN thread_slice AS s USING (id)
  ),
  cycles AS (
    SELECT
      ii.id_0 AS slice_id,
      sum(ii.dur) AS dur,
      cast(sum(ii.dur * f.freq / 1000) AS INT) AS millicycles,
      cast(sum(ii.dur * f.freq / 1000) / 1e9 AS INT) AS megacycles
    FROM _interval_intersect!((cut, _cpu_freq_per_thread), (utid)) AS ii
    JOIN _cpu_freq_per_thread AS f ON f.id = ii.id_1
    WHERE f.freq IS NOT NULL
    GROUP BY ii.id_0
  )
SELECT
  c2.id,
  c2.name,
  c2.utid,
  c2.thread_name,
  c2.upid,
  c2.process_name,
  cycles.millicycles,
  cycles.megacycles
FROM cut AS c2
LEFT JOIN cycles ON cycles.slice_id = c2.id AND c2.dur = cycles.dur;

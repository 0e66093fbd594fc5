-- Written for zerotrace: the `linux.cpu.utilization.slice` module. It
-- provides `cpu_cycles_per_thread_slice` (for each thread slice, the CPU
-- cycles its thread ran during it, in millicycles and megacycles; NULL
-- unless the frequency is known for the whole time the slice's thread
-- ran within it) and `cpu_cycles_per_thread_slice_in_interval(ts, dur)`,
-- the same over the slices' parts inside the interval.

INCLUDE PERFETTO MODULE linux.cpu.utilization.general;
INCLUDE PERFETTO MODULE intervals.intersect;
INCLUDE PERFETTO MODULE slices.with_context;

-- Built by the native source __intrinsic_cpu_cycles_per_thread_slice
-- (src/sql/thread_slice_time/): every thread slice with its thread
-- context as thread_slice gives it and, when its thread's pieces of
-- known frequency in _cpu_freq_per_thread cover the whole slice (a
-- slice of a real thread with a length), the cycles run in it; by id.
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
SELECT * FROM __intrinsic_cpu_cycles_per_thread_slice;

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

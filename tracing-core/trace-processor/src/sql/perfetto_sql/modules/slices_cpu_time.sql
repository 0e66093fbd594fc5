-- slices.cpu_time, written for zerotrace: how long each thread slice ran
-- on a CPU, and the CPU cycles it used (needs scheduling data, and CPU
-- frequencies for the cycles).
--   thread_slice_cpu_time    per thread slice: time running
--   thread_slice_cpu_cycles  per thread slice: milli- and megacycles

INCLUDE PERFETTO MODULE intervals.intersect;
INCLUDE PERFETTO MODULE linux.cpu.utilization.slice;
INCLUDE PERFETTO MODULE slices.with_context;

-- The overlap of each thread slice (of a real thread, with a length)
-- with its thread's sched slices, summed: its time on a CPU, by slice id
-- (a table, so that the join below finds a slice's row by id). Slices
-- that never ran have no row.
CREATE PERFETTO TABLE _zt_thread_slice_running AS
SELECT id_0 AS id, sum(dur) AS cpu_time
FROM _interval_intersect!(
  (
    (SELECT id, ts, dur, utid FROM thread_slice WHERE utid > 0 AND dur > 0),
    (SELECT id, ts, dur, utid FROM sched WHERE dur > 0)
  ),
  (utid)
)
GROUP BY id_0;

CREATE PERFETTO TABLE thread_slice_cpu_time(
  id JOINID(slice.id),
  name STRING,
  utid JOINID(thread.id),
  thread_name STRING,
  upid JOINID(process.id),
  process_name STRING,
  cpu_time LONG
) AS
SELECT
  r.id,
  s.name,
  s.utid,
  s.thread_name,
  s.upid,
  s.process_name,
  r.cpu_time
FROM thread_slice AS s
JOIN _zt_thread_slice_running AS r ON r.id = s.id
ORDER BY r.id;

CREATE PERFETTO VIEW thread_slice_cpu_cycles(
  id JOINID(slice.id),
  name STRING,
  utid JOINID(thread.id),
  thread_name STRING,
  upid JOINID(process.id),
  process_name STRING,
  millicycles LONG,
  megacycles LONG
) AS
SELECT id, name, utid, thread_name, upid, process_name, millicycles, megacycles
FROM cpu_cycles_per_thread_slice;

-- slices.cpu_time, written for zerotrace: how long each thread slice ran
-- on a CPU, and the CPU cycles it used (needs scheduling data, and CPU
-- frequencies for the cycles).
--   thread_slice_cpu_time    per thread slice: time running
--   thread_slice_cpu_cycles  per thread slice: milli- and megacycles

INCLUDE PERFETTO MODULE intervals.intersect;
INCLUDE PERFETTO MODULE linux.cpu.utilization.slice;
INCLUDE PERFETTO MODULE slices.with_context;

-- Built by the native source __intrinsic_thread_slice_cpu_time
-- (src/sql/thread_slice_time/): for each thread slice of a real thread
-- with a length, its overlaps with the thread's sched slices (of a
-- length) summed, with the slice's thread context as thread_slice gives
-- it, by slice id; slices that never ran have no row.
CREATE PERFETTO TABLE thread_slice_cpu_time(
  id JOINID(slice.id),
  name STRING,
  utid JOINID(thread.id),
  thread_name STRING,
  upid JOINID(process.id),
  process_name STRING,
  cpu_time LONG
) AS
SELECT * FROM __intrinsic_thread_slice_cpu_time;

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

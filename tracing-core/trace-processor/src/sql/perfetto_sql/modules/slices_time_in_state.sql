-- slices.time_in_state, written for zerotrace: how long each thread slice
-- spent in each scheduling state of its thread (needs thread states in
-- the trace).
--   thread_slice_time_in_state  per thread slice and (state, io_wait,
--                               blocked_function): the time spent so

INCLUDE PERFETTO MODULE intervals.intersect;
INCLUDE PERFETTO MODULE slices.with_context;

-- Built by the native source __intrinsic_thread_slice_time_in_state
-- (src/sql/thread_slice_time/): for each thread slice of a real thread
-- with a length, its overlaps with the thread's states (of a length)
-- summed per state, I/O wait and blocking function, with the slice's
-- thread context as thread_slice gives it, by slice id and then that key.
CREATE PERFETTO TABLE thread_slice_time_in_state(
  id JOINID(slice.id),
  name STRING,
  utid JOINID(thread.id),
  thread_name STRING,
  upid JOINID(process.id),
  process_name STRING,
  state STRING,
  io_wait BOOL,
  blocked_function STRING,
  dur DURATION
) AS
SELECT * FROM __intrinsic_thread_slice_time_in_state;

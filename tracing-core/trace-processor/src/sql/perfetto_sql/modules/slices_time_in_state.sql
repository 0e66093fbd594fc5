-- slices.time_in_state, written for zerotrace: how long each thread slice
-- spent in each scheduling state of its thread (needs thread states in
-- the trace).
--   thread_slice_time_in_state  per thread slice and (state, io_wait,
--                               blocked_function): the time spent so

INCLUDE PERFETTO MODULE intervals.intersect;
INCLUDE PERFETTO MODULE slices.with_context;

-- The overlap of each thread slice (of a real thread, with a length)
-- with its thread's states, summed per state, I/O wait and blocking
-- function.
-- Each overlap of a thread slice with one of its thread's states, by
-- slice id (a table, so that the join below finds a slice's rows by id).
CREATE PERFETTO TABLE _zt_thread_slice_state_overlap AS
SELECT id_0 AS id, id_1 AS state_id, dur
FROM _interval_intersect!(
  (
    (SELECT id, ts, dur, utid FROM thread_slice WHERE utid > 0 AND dur > 0),
    (SELECT id, ts, dur, utid FROM thread_state WHERE dur > 0)
  ),
  (utid)
);

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
SELECT
  o.id,
  s.name,
  s.utid,
  s.thread_name,
  s.upid,
  s.process_name,
  st.state,
  st.io_wait,
  st.blocked_function,
  sum(o.dur) AS dur
FROM thread_slice AS s
JOIN _zt_thread_slice_state_overlap AS o ON o.id = s.id
JOIN thread_state AS st ON st.id = o.state_id
GROUP BY o.id, st.state, st.io_wait, st.blocked_function
ORDER BY o.id;

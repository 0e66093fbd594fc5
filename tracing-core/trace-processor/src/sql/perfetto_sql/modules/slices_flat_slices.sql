-- slices.flat_slices, written for zerotrace: the slices of thread tracks
-- with their nesting removed. At every instant of a stack the one slice
-- that holds it stands for the whole stack, so a thread's time reads as
-- one sequence of slices (self times, joins with thread states at any
-- depth). Stretches no slice covers give no rows. The flattening is the
-- native operator of src/sql/slices/flatten.rs.
--   _slice_flattened  (slice_id, ts, dur, depth, name, root_id, track_id,
--                      utid, tid, thread_name, upid, pid, process_name)

INCLUDE PERFETTO MODULE slices.with_context;

-- Each stretch of a thread's slice stacks and the slice holding it: its
-- depth and name, the stack's root, and the thread and process, by root
-- then start; built as columns by the native source
-- __intrinsic_thread_slice_flattened (src/sql/thread_slice_time/), the
-- rows of __intrinsic_slice_flattened on thread tracks with their
-- thread_slice context.
CREATE PERFETTO TABLE _slice_flattened AS
SELECT * FROM __intrinsic_thread_slice_flattened;

CREATE PERFETTO INDEX _slice_flattened_id_idx ON _slice_flattened(slice_id);

CREATE PERFETTO INDEX _slice_flattened_ts_idx ON _slice_flattened(ts);

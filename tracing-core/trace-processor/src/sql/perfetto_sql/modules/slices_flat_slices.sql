-- slices.flat_slices, written for zerotrace: the slices of thread tracks
-- with their nesting removed. At every instant of a stack the one slice
-- that holds it stands for the whole stack, so a thread's time reads as
-- one sequence of slices (self times, joins with thread states at any
-- depth). Stretches no slice covers give no rows. The flattening is the
-- native operator __intrinsic_slice_flattened (src/sql/slices/flatten.rs).
--   _slice_flattened  (slice_id, ts, dur, depth, name, root_id, track_id,
--                      utid, tid, thread_name, upid, pid, process_name)

INCLUDE PERFETTO MODULE slices.with_context;

-- Each stretch of a thread's slice stacks and the slice holding it: its
-- depth and name, the stack's root, and the thread and process.
CREATE PERFETTO TABLE _slice_flattened AS
SELECT
  f.slice_id,
  f.ts,
  f.dur,
  t.depth,
  t.name,
  f.root_id,
  t.track_id,
  t.utid,
  t.tid,
  t.thread_name,
  t.upid,
  t.pid,
  t.process_name
FROM __intrinsic_slice_flattened AS f
JOIN thread_slice AS t ON t.id = f.slice_id
ORDER BY f.root_id, f.ts;

CREATE PERFETTO INDEX _slice_flattened_id_idx ON _slice_flattened(slice_id);

CREATE PERFETTO INDEX _slice_flattened_ts_idx ON _slice_flattened(ts);

-- slices.stack, written for zerotrace: stack ids, which name a slice by
-- the categories and names on its path from its root (slices reached the
-- same way share one), and the walks from every slice of a stack id.
--   slice_with_stack_id               every slice with stack_id and
--                                     parent_stack_id
--   ancestor_slice_by_stack(hash)     the slices of that stack id and
--                                     their ancestors
--   descendant_slice_by_stack(hash)   the slices of that stack id and
--                                     their descendants
-- The ids are computed natively (__intrinsic_slice_stack_id, see
-- src/sql/slices/stack_id.rs) for every slice at once.

INCLUDE PERFETTO MODULE slices.hierarchy;

-- Every slice, its stack id, and its parent's (0 for a root).
CREATE PERFETTO VIEW slice_with_stack_id(
  id ID(slice.id),
  ts TIMESTAMP,
  dur DURATION,
  track_id JOINID(track.id),
  category STRING,
  name STRING,
  depth LONG,
  parent_id JOINID(slice.id),
  arg_set_id ARGSETID,
  thread_ts TIMESTAMP,
  thread_dur LONG,
  thread_instruction_count LONG,
  thread_instruction_delta LONG,
  stack_id LONG,
  parent_stack_id LONG
) AS
SELECT
  id, ts, dur, track_id, category, name, depth, parent_id, arg_set_id,
  thread_ts, thread_dur, thread_instruction_count, thread_instruction_delta,
  __intrinsic_slice_stack_id(id) AS stack_id,
  ifnull(__intrinsic_slice_stack_id(parent_id), 0) AS parent_stack_id
FROM slice;

-- The slices whose stack id is `stack_hash`, with all their ancestors,
-- each once, by start.
CREATE PERFETTO FUNCTION ancestor_slice_by_stack(stack_hash LONG)
RETURNS TABLE(
  id JOINID(slice.id),
  ts TIMESTAMP,
  dur DURATION,
  track_id JOINID(track.id),
  category STRING,
  name STRING,
  depth LONG,
  parent_id JOINID(slice.id),
  arg_set_id ARGSETID,
  thread_ts TIMESTAMP,
  thread_dur LONG
) AS
SELECT DISTINCT
  a.id, a.ts, a.dur, a.track_id, a.category, a.name, a.depth, a.parent_id,
  a.arg_set_id, a.thread_ts, a.thread_dur
FROM slice_with_stack_id AS m
JOIN _slice_ancestor_and_self(m.id) AS a
WHERE m.stack_id = $stack_hash
ORDER BY a.ts;

-- The slices whose stack id is `stack_hash`, with all their descendants,
-- each once, by start.
CREATE PERFETTO FUNCTION descendant_slice_by_stack(stack_hash LONG)
RETURNS TABLE(
  id JOINID(slice.id),
  ts TIMESTAMP,
  dur DURATION,
  track_id JOINID(track.id),
  category STRING,
  name STRING,
  depth LONG,
  parent_id JOINID(slice.id),
  arg_set_id ARGSETID,
  thread_ts TIMESTAMP,
  thread_dur LONG
) AS
SELECT DISTINCT
  d.id, d.ts, d.dur, d.track_id, d.category, d.name, d.depth, d.parent_id,
  d.arg_set_id, d.thread_ts, d.thread_dur
FROM slice_with_stack_id AS m
JOIN _slice_descendant_and_self(m.id) AS d
WHERE m.stack_id = $stack_hash
ORDER BY d.ts;

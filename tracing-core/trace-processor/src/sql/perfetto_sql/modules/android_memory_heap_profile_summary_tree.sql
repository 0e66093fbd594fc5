-- android.memory.heap_profile.summary_tree, written for zerotrace: every
-- heapprofd allocation of every process as one callstack tree, each node
-- with the net bytes (allocations less frees) and the allocated bytes at
-- it and below it.
--   android_heap_profile_summary_tree  (id, parent_id, name, mapping_name,
--     source_file, line_number, self_size, cumulative_size,
--     self_alloc_size, cumulative_alloc_size)

INCLUDE PERFETTO MODULE callstacks.stack_profile;

CREATE PERFETTO TABLE _android_heap_profile_raw_callstacks AS
WITH per_callsite AS MATERIALIZED (
  SELECT
    callsite_id,
    sum(size) AS self_size,
    sum(CASE WHEN size > 0 THEN size ELSE 0 END) AS self_alloc_size
  FROM heap_profile_allocation
  GROUP BY callsite_id
)
SELECT
  f.id,
  f.parent_id,
  f.name,
  f.mapping_name,
  f.source_file,
  f.line_number,
  coalesce(t.self_size, 0) AS self_size,
  coalesce(t.self_alloc_size, 0) AS self_alloc_size
FROM _callstacks_for_stack_profile_samples!(per_callsite) AS f
LEFT JOIN per_callsite AS t USING (callsite_id);

-- Each node's totals over itself and every node below it.
CREATE PERFETTO TABLE _android_heap_profile_cumulatives AS
WITH RECURSIVE climb(id, size, alloc_size) AS (
  SELECT id, self_size, self_alloc_size FROM _android_heap_profile_raw_callstacks
  UNION ALL
  SELECT n.parent_id, c.size, c.alloc_size
  FROM climb AS c
  JOIN _android_heap_profile_raw_callstacks AS n ON n.id = c.id
  WHERE n.parent_id IS NOT NULL
)
SELECT id, sum(size) AS cumulative_size, sum(alloc_size) AS cumulative_alloc_size
FROM climb
GROUP BY id;

-- The callstacks of every native heap profile, all processes together.
CREATE PERFETTO TABLE android_heap_profile_summary_tree(
  id LONG,
  parent_id LONG,
  name STRING,
  mapping_name STRING,
  source_file STRING,
  line_number LONG,
  self_size LONG,
  cumulative_size LONG,
  self_alloc_size LONG,
  cumulative_alloc_size LONG
) AS
SELECT
  r.id,
  r.parent_id,
  r.name,
  r.mapping_name,
  r.source_file,
  r.line_number,
  r.self_size,
  c.cumulative_size,
  r.self_alloc_size,
  c.cumulative_alloc_size
FROM _android_heap_profile_raw_callstacks AS r
JOIN _android_heap_profile_cumulatives AS c USING (id);

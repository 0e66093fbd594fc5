-- android.memory.heap_profile.callstacks, written for zerotrace: the
-- callstack forest of some heapprofd allocations, each node with the
-- totals of the allocations made at its callsite.
--   _android_heap_profile_callstacks_for_allocations!(allocations with
--     callsite_id, size, count, alloc_size, alloc_count): (id, parent_id,
--     name, mapping_name, source_file, line_number, self_size, self_count,
--     self_alloc_size, self_alloc_count)

INCLUDE PERFETTO MODULE callstacks.stack_profile;

CREATE PERFETTO MACRO _android_heap_profile_callstacks_for_allocations(
  allocations TableOrSubquery
)
RETURNS TableOrSubquery
AS (
  WITH per_callsite AS MATERIALIZED (
    SELECT
      callsite_id,
      sum(size) AS self_size,
      sum(count) AS self_count,
      sum(alloc_size) AS self_alloc_size,
      sum(alloc_count) AS self_alloc_count
    FROM $allocations
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
    coalesce(t.self_count, 0) AS self_count,
    coalesce(t.self_alloc_size, 0) AS self_alloc_size,
    coalesce(t.self_alloc_count, 0) AS self_alloc_count
  FROM _callstacks_for_stack_profile_samples!(per_callsite) AS f
  LEFT JOIN per_callsite AS t USING (callsite_id)
);

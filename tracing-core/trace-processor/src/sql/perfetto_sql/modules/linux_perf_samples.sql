-- linux.perf.samples, written for zerotrace: the tree of the callstacks
-- of every perf sample, with self and cumulative counts.
--   linux_perf_samples_summary_tree  (id, parent_id, name, mapping_name,
--     source_file, line_number, self_count, cumulative_count)

INCLUDE PERFETTO MODULE callstacks.stack_profile;

CREATE PERFETTO TABLE _linux_perf_raw_callstacks AS
SELECT *
FROM _callstacks_for_callsites!((SELECT callsite_id FROM perf_sample)) AS c
ORDER BY c.id;

-- The callstacks of every perf sample as one tree.
CREATE PERFETTO TABLE linux_perf_samples_summary_tree(
  id LONG,
  parent_id LONG,
  name STRING,
  mapping_name STRING,
  source_file STRING,
  line_number LONG,
  self_count LONG,
  cumulative_count LONG
) AS
SELECT
  r.id,
  r.parent_id,
  r.name,
  r.mapping_name,
  r.source_file,
  r.line_number,
  r.self_count,
  c.cumulative_count
FROM _linux_perf_raw_callstacks AS r
JOIN _callstacks_self_to_cumulative!((
  SELECT id, parent_id, self_count FROM _linux_perf_raw_callstacks
)) AS c USING (id)
ORDER BY r.id;

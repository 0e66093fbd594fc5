-- appleos.instruments.samples, written for zerotrace: the callstacks of
-- every sample of an Apple Instruments (Time Profiler) export as one
-- tree, each node a distinct path of frames from a root.
--   appleos_instruments_samples_summary_tree  (id, parent_id, name,
--     mapping_name, source_file, line_number, self_count,
--     cumulative_count): self_count is the samples whose leaf is the
--     node, cumulative_count those whose stack passes through it.

INCLUDE PERFETTO MODULE callstacks.stack_profile;

CREATE PERFETTO TABLE _appleos_instruments_raw_callstacks AS
SELECT *
FROM _callstacks_for_callsites!((SELECT callsite_id FROM instruments_sample)) AS c
ORDER BY c.id;

-- The callstacks of every Instruments sample as one tree, with the
-- samples ending at each node and passing through it.
CREATE PERFETTO TABLE appleos_instruments_samples_summary_tree(
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
FROM _appleos_instruments_raw_callstacks AS r
JOIN _callstacks_self_to_cumulative!((
  SELECT id, parent_id, self_count FROM _appleos_instruments_raw_callstacks
)) AS c USING (id)
ORDER BY r.id;

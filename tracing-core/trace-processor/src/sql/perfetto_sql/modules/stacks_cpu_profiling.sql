-- stacks.cpu_profiling, written for zerotrace: the CPU profiling samples
-- of every profiler (those of sessions sampling on time, cycles or
-- instructions, or of unknown timebase), with their thread and CPU, and
-- the tree of their callstacks with self and cumulative counts.
--   cpu_profiling_samples  (id, ts, utid, tid, thread_name, ucpu, cpu,
--     callsite_id, source)
--   cpu_profiling_summary_tree  (id, parent_id, name, mapping_name,
--     source_file, line_number, self_count, cumulative_count)

INCLUDE PERFETTO MODULE callstacks.stack_profile;

-- Every CPU profiling sample, by time.
CREATE PERFETTO TABLE cpu_profiling_samples(
  id LONG,
  ts TIMESTAMP,
  utid JOINID(thread.id),
  tid LONG,
  thread_name STRING,
  ucpu LONG,
  cpu LONG,
  callsite_id LONG,
  source STRING
) AS
SELECT
  sample.id,
  sample.ts,
  task.utid,
  thread.tid,
  thread.name AS thread_name,
  exec.ucpu,
  cpu.cpu,
  sample.callsite_id,
  sample.source
FROM stack_sample AS sample
LEFT JOIN stack_sample_session AS session ON session.id = sample.session_id
LEFT JOIN stack_sample_task_context AS task ON task.id = sample.task_context_id
LEFT JOIN stack_sample_execution_context AS exec ON exec.id = sample.execution_context_id
LEFT JOIN thread USING (utid)
LEFT JOIN cpu ON cpu.id = exec.ucpu
WHERE session.timebase_unit IS NULL
  OR session.timebase_unit IN ('ns', 'cycles', 'instructions')
ORDER BY sample.ts;

CREATE PERFETTO TABLE _cpu_profiling_self_callsites AS
SELECT *
FROM _callstacks_for_callsites!((SELECT callsite_id FROM cpu_profiling_samples))
ORDER BY id;

-- The callstacks of every CPU profiling sample as one tree.
CREATE PERFETTO TABLE cpu_profiling_summary_tree(
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
  s.id,
  s.parent_id,
  s.name,
  s.mapping_name,
  s.source_file,
  s.line_number,
  s.self_count,
  c.cumulative_count
FROM _cpu_profiling_self_callsites AS s
JOIN _callstacks_self_to_cumulative!((
  SELECT id, parent_id, self_count FROM _cpu_profiling_self_callsites
)) AS c USING (id)
ORDER BY s.id;

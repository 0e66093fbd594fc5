//! The public profiling views over the profiling tables (declared in
//! `tables/profiling.rs`) that are more than a projection of one table,
//! as upstream's prelude views: `perf_sample`, `cpu_profile_stack_sample`,
//! `instruments_sample`,
//! `perf_counter_track`, `stack_sample`'s async context and counter
//! tables, and the `SELECT *` ones. Those that project one table
//! (`heap_profile`, `heap_graph`, `stack_sample` and its session and
//! contexts, ...) take their column lists from the declarations
//! (`tables/views.rs`).

/// The public profiling views, created after [`super::views::VIEWS`].
pub const PROFILING_VIEWS: &str = r#"
CREATE VIEW stack_profile_mapping AS SELECT * FROM __intrinsic_stack_profile_mapping;
CREATE VIEW stack_profile_frame AS SELECT * FROM __intrinsic_stack_profile_frame;
CREATE VIEW stack_profile_callsite AS SELECT * FROM __intrinsic_stack_profile_callsite;
CREATE VIEW stack_profile_symbol AS SELECT * FROM __intrinsic_stack_profile_symbol;
CREATE VIEW heap_profile_allocation AS SELECT * FROM __intrinsic_heap_profile_allocation;
CREATE VIEW heap_graph_java_oome_details AS SELECT * FROM __intrinsic_heap_graph_java_oome_details;
CREATE VIEW profiler_smaps AS SELECT * FROM __intrinsic_profiler_smaps;
CREATE VIEW perf_sample AS SELECT ps.id, ps.ts, tc.utid, c.cpu AS cpu,
  COALESCE(ec.cpu_mode, 'unknown') AS cpu_mode, ps.callsite_id, ps.unwind_error,
  ps.session_id AS perf_session_id
  FROM __intrinsic_profiler_sample AS ps
  LEFT JOIN __intrinsic_profiler_task_context AS tc ON tc.id = ps.task_context_id
  LEFT JOIN __intrinsic_profiler_execution_context AS ec ON ec.id = ps.execution_context_id
  LEFT JOIN __intrinsic_cpu AS c ON c.id = ec.ucpu
  WHERE ps.source = 'linux.perf';
CREATE VIEW cpu_profile_stack_sample AS SELECT ps.id, ps.ts, ps.callsite_id, tc.utid,
  coalesce(x.process_priority, 0) AS process_priority
  FROM __intrinsic_profiler_sample AS ps
  LEFT JOIN __intrinsic_profiler_task_context AS tc ON tc.id = ps.task_context_id
  LEFT JOIN __intrinsic_chrome_stack_sample_extras AS x ON x.profiler_sample_id = ps.id
  WHERE ps.source IN ('chrome', 'legacy_v8', 'gecko', 'simpleperf', 'perf_text');
CREATE VIEW instruments_sample AS SELECT ps.id, ps.ts, tc.utid, ps.callsite_id, c.cpu
  FROM __intrinsic_profiler_sample AS ps
  LEFT JOIN __intrinsic_profiler_task_context AS tc ON tc.id = ps.task_context_id
  LEFT JOIN __intrinsic_profiler_execution_context AS ec ON ec.id = ps.execution_context_id
  LEFT JOIN __intrinsic_cpu AS c ON c.id = ec.ucpu
  WHERE ps.source = 'instruments';
CREATE VIEW perf_counter_track AS SELECT ct.id, ct.name, ct.type, ct.parent_id,
  ct.source_arg_set_id, ct.machine_id, ct.unit, ct.description,
  extract_arg(ct.dimension_arg_set_id, 'perf_session_id') AS perf_session_id,
  extract_arg(ct.dimension_arg_set_id, 'cpu') AS cpu,
  extract_arg(ct.source_arg_set_id, 'is_timebase') AS is_timebase
  FROM counter_track AS ct WHERE ct.type IN ('perf_cpu_counter', 'perf_global_counter');
CREATE VIEW stack_sample_async_context AS WITH RECURSIVE referenced(id) AS (
    SELECT tc.async_context_id FROM __intrinsic_profiler_sample AS ps
    JOIN __intrinsic_profiler_task_context AS tc ON tc.id = ps.task_context_id
    WHERE ps.callsite_id IS NOT NULL AND tc.async_context_id IS NOT NULL
    UNION
    SELECT ac.parent_id FROM __intrinsic_profiler_async_context AS ac
    JOIN referenced AS r ON ac.id = r.id WHERE ac.parent_id IS NOT NULL)
  SELECT id, name, kind, parent_id FROM __intrinsic_profiler_async_context
  WHERE id IN (SELECT id FROM referenced);
CREATE VIEW stack_sample_counter_track AS SELECT ct.id, ct.name, ct.type, ct.parent_id,
  ct.source_arg_set_id, ct.machine_id, ct.unit, ct.description,
  coalesce(extract_arg(ct.dimension_arg_set_id, 'session_id'),
    extract_arg(ct.dimension_arg_set_id, 'perf_session_id')) AS session_id,
  extract_arg(ct.dimension_arg_set_id, 'cpu') AS cpu,
  extract_arg(ct.source_arg_set_id, 'is_timebase') AS is_timebase
  FROM counter_track AS ct
  WHERE ct.id IN (SELECT DISTINCT c.track_id FROM __intrinsic_profiler_sample AS ps
    JOIN __intrinsic_profiler_counter_set AS pcs ON pcs.counter_set_id = ps.counter_set_id
    JOIN counter AS c ON c.id = pcs.counter_id WHERE ps.callsite_id IS NOT NULL);
CREATE VIEW stack_sample_counter AS SELECT c.id, ps.id AS stack_sample_id, c.track_id,
  c.value FROM __intrinsic_profiler_sample AS ps
  JOIN __intrinsic_profiler_counter_set AS pcs ON pcs.counter_set_id = ps.counter_set_id
  JOIN __intrinsic_counter AS c ON c.id = pcs.counter_id
  WHERE ps.callsite_id IS NOT NULL;
"#;

//! The profiling rows into columnar tables, with upstream's intrinsic
//! table names and columns, and the public views over them (upstream's
//! prelude views: `perf_sample`, `stack_sample` and its context, session
//! and counter tables, `perf_counter_track`, `heap_profile*`, ...).

use std::sync::Arc;

use crate::storage::profiling_rows::ProfilingRows;
use crate::storage::strings::StringPool;

use super::table::{Column, Table};

fn ids(n: usize) -> Vec<i64> {
    (0..n as i64).collect()
}

fn opt(v: Option<u32>) -> Option<i64> {
    v.map(i64::from)
}

/// Builds the profiling tables.
pub fn build(r: &ProfilingRows, strings: &Arc<StringPool>) -> Vec<Table> {
    let table = |name: &'static str, columns: Vec<Column>, len: usize| Table {
        name,
        columns,
        len,
        has_id: true,
        sorted_by: None,
        strings: strings.clone(),
        orders: Default::default(),
    };
    let mut out = Vec::new();
    let m = &r.mappings;
    out.push(table(
        "__intrinsic_stack_profile_mapping",
        vec![
            Column::int("id", ids(m.len())),
            Column::str("build_id", m.iter().map(|x| x.build_id).collect()),
            Column::int("exact_offset", m.iter().map(|x| x.exact_offset).collect()),
            Column::int("start_offset", m.iter().map(|x| x.start_offset).collect()),
            Column::int("start", m.iter().map(|x| x.start).collect()),
            Column::int("end", m.iter().map(|x| x.end).collect()),
            Column::int("load_bias", m.iter().map(|x| x.load_bias).collect()),
            Column::str("name", m.iter().map(|x| x.name).collect()),
        ],
        m.len(),
    ));
    let f = &r.frames;
    out.push(table(
        "__intrinsic_stack_profile_frame",
        vec![
            Column::int("id", ids(f.len())),
            Column::str("name", f.iter().map(|x| x.name).collect()),
            Column::int("mapping", f.iter().map(|x| i64::from(x.mapping)).collect()),
            Column::int("rel_pc", f.iter().map(|x| x.rel_pc).collect()),
            Column::opt_int(
                "symbol_set_id",
                f.iter().map(|x| opt(x.symbol_set_id)).collect(),
            ),
            Column::str(
                "deobfuscated_name",
                f.iter().map(|x| x.deobfuscated_name).collect(),
            ),
            Column::str("type", f.iter().map(|x| x.frame_type).collect()),
        ],
        f.len(),
    ));
    let c = &r.callsites;
    out.push(table(
        "__intrinsic_stack_profile_callsite",
        vec![
            Column::int("id", ids(c.len())),
            Column::int("depth", c.iter().map(|x| i64::from(x.depth)).collect()),
            Column::opt_int("parent_id", c.iter().map(|x| opt(x.parent_id)).collect()),
            Column::int(
                "frame_id",
                c.iter().map(|x| i64::from(x.frame_id)).collect(),
            ),
        ],
        c.len(),
    ));
    let s = &r.symbols;
    out.push(table(
        "__intrinsic_stack_profile_symbol",
        vec![
            Column::int("id", ids(s.len())),
            Column::int(
                "symbol_set_id",
                s.iter().map(|x| i64::from(x.symbol_set_id)).collect(),
            ),
            Column::str("name", s.iter().map(|x| x.name).collect()),
            Column::str("source_file", s.iter().map(|x| x.source_file).collect()),
            Column::opt_int(
                "line_number",
                s.iter().map(|x| opt(x.line_number)).collect(),
            ),
            Column::opt_int("inlined", vec![None; s.len()]),
        ],
        s.len(),
    ));
    let h = &r.heap_profiles;
    out.push(table(
        "__intrinsic_heap_profile",
        vec![
            Column::int("id", ids(h.len())),
            Column::int("ts", h.iter().map(|x| x.ts).collect()),
            Column::int("ts_end", h.iter().map(|x| x.ts_end).collect()),
            Column::int("dur", h.iter().map(|x| x.ts_end - x.ts).collect()),
            Column::int("upid", h.iter().map(|x| i64::from(x.upid)).collect()),
            Column::str("heap_name", h.iter().map(|x| x.heap_name).collect()),
        ],
        h.len(),
    ));
    let a = &r.heap_allocations;
    out.push(table(
        "__intrinsic_heap_profile_allocation",
        vec![
            Column::int("id", ids(a.len())),
            Column::int("ts", a.iter().map(|x| x.ts).collect()),
            Column::int("upid", a.iter().map(|x| i64::from(x.upid)).collect()),
            Column::str("heap_name", a.iter().map(|x| x.heap_name).collect()),
            Column::int(
                "callsite_id",
                a.iter().map(|x| i64::from(x.callsite_id)).collect(),
            ),
            Column::int("count", a.iter().map(|x| x.count).collect()),
            Column::int("size", a.iter().map(|x| x.size).collect()),
        ],
        a.len(),
    ));
    let se = &r.sessions;
    out.push(table(
        "__intrinsic_profiler_session",
        vec![
            Column::int("id", ids(se.len())),
            Column::str("source", se.iter().map(|x| x.source).collect()),
            Column::str(
                "timebase_unit",
                se.iter().map(|x| x.timebase_unit).collect(),
            ),
            Column::str("cmdline", se.iter().map(|x| x.cmdline).collect()),
        ],
        se.len(),
    ));
    let tc = &r.task_contexts;
    out.push(table(
        "__intrinsic_profiler_task_context",
        vec![
            Column::int("id", ids(tc.len())),
            Column::opt_int("upid", tc.iter().map(|x| opt(x.upid)).collect()),
            Column::opt_int("utid", tc.iter().map(|x| opt(x.utid)).collect()),
            Column::opt_int(
                "async_context_id",
                tc.iter().map(|x| opt(x.async_context_id)).collect(),
            ),
        ],
        tc.len(),
    ));
    let ec = &r.execution_contexts;
    out.push(table(
        "__intrinsic_profiler_execution_context",
        vec![
            Column::int("id", ids(ec.len())),
            Column::opt_int("ucpu", ec.iter().map(|x| opt(x.ucpu)).collect()),
            Column::str("cpu_mode", ec.iter().map(|x| x.cpu_mode).collect()),
        ],
        ec.len(),
    ));
    let ac = &r.async_contexts;
    out.push(table(
        "__intrinsic_profiler_async_context",
        vec![
            Column::int("id", ids(ac.len())),
            Column::str("name", ac.iter().map(|x| x.name).collect()),
            Column::str("kind", ac.iter().map(|x| x.kind).collect()),
            Column::opt_int("parent_id", ac.iter().map(|x| opt(x.parent_id)).collect()),
        ],
        ac.len(),
    ));
    let sa = &r.samples;
    out.push(table(
        "__intrinsic_profiler_sample",
        vec![
            Column::int("id", ids(sa.len())),
            Column::int("ts", sa.iter().map(|x| x.ts).collect()),
            Column::str("source", sa.iter().map(|x| x.source).collect()),
            Column::opt_int(
                "task_context_id",
                sa.iter().map(|x| opt(x.task_context_id)).collect(),
            ),
            Column::opt_int(
                "execution_context_id",
                sa.iter().map(|x| opt(x.execution_context_id)).collect(),
            ),
            Column::opt_int(
                "callsite_id",
                sa.iter().map(|x| opt(x.callsite_id)).collect(),
            ),
            Column::str("unwind_error", sa.iter().map(|x| x.unwind_error).collect()),
            Column::opt_int("session_id", sa.iter().map(|x| opt(x.session_id)).collect()),
            Column::opt_int(
                "counter_set_id",
                sa.iter().map(|x| opt(x.counter_set_id)).collect(),
            ),
        ],
        sa.len(),
    ));
    let cs = &r.counter_sets;
    out.push(table(
        "__intrinsic_profiler_counter_set",
        vec![
            Column::int("id", ids(cs.len())),
            Column::int(
                "counter_set_id",
                cs.iter().map(|x| i64::from(x.0)).collect(),
            ),
            Column::int("counter_id", cs.iter().map(|x| i64::from(x.1)).collect()),
        ],
        cs.len(),
    ));
    let x = &r.chrome_sample_extras;
    out.push(table(
        "__intrinsic_chrome_stack_sample_extras",
        vec![
            Column::int("id", ids(x.len())),
            Column::int(
                "profiler_sample_id",
                x.iter().map(|v| i64::from(v.0)).collect(),
            ),
            Column::int(
                "process_priority",
                x.iter().map(|v| i64::from(v.1)).collect(),
            ),
        ],
        x.len(),
    ));
    let hg = &r.heap_graphs;
    out.push(table(
        "__intrinsic_heap_graph",
        vec![
            Column::int("id", ids(hg.len())),
            Column::int("ts", hg.iter().map(|x| x.ts).collect()),
            Column::int("upid", hg.iter().map(|x| i64::from(x.upid)).collect()),
            Column::str("dump_reason", hg.iter().map(|x| x.dump_reason).collect()),
            Column::opt_int("heap_size", hg.iter().map(|x| x.heap_size).collect()),
            Column::opt_int(
                "truncated",
                hg.iter().map(|x| x.truncated.map(i64::from)).collect(),
            ),
        ],
        hg.len(),
    ));
    let tcs = &r.heap_graph_thread_callsites;
    out.push(table(
        "__intrinsic_heap_graph_thread_callsite",
        vec![
            Column::int("id", ids(tcs.len())),
            Column::int(
                "heap_graph_id",
                tcs.iter().map(|x| i64::from(x.heap_graph_id)).collect(),
            ),
            Column::int("utid", tcs.iter().map(|x| i64::from(x.utid)).collect()),
            Column::opt_int(
                "callsite_id",
                tcs.iter().map(|x| opt(x.callsite_id)).collect(),
            ),
        ],
        tcs.len(),
    ));
    let od = &r.oome_details;
    out.push(table(
        "__intrinsic_heap_graph_java_oome_details",
        vec![
            Column::int("id", ids(od.len())),
            Column::int(
                "heap_graph_id",
                od.iter().map(|x| i64::from(x.heap_graph_id)).collect(),
            ),
            Column::int(
                "allocation_size_bytes",
                od.iter().map(|x| x.allocation_size_bytes).collect(),
            ),
            Column::int(
                "total_bytes_free",
                od.iter().map(|x| x.total_bytes_free).collect(),
            ),
            Column::int(
                "free_bytes_until_oom",
                od.iter().map(|x| x.free_bytes_until_oom).collect(),
            ),
            Column::str("error_msg", od.iter().map(|x| x.error_msg).collect()),
        ],
        od.len(),
    ));
    let sm = &r.smaps;
    out.push(table(
        "__intrinsic_profiler_smaps",
        vec![
            Column::int("id", ids(sm.len())),
            Column::int("upid", sm.iter().map(|x| i64::from(x.upid)).collect()),
            Column::int("ts", sm.iter().map(|x| x.ts).collect()),
            Column::str("path", sm.iter().map(|x| x.path).collect()),
            Column::str("path_trimmed", sm.iter().map(|x| x.path_trimmed).collect()),
            Column::int(
                "aggregate_count",
                sm.iter().map(|x| i64::from(x.aggregate_count)).collect(),
            ),
            Column::int(
                "is_deleted",
                sm.iter().map(|x| i64::from(x.is_deleted)).collect(),
            ),
            Column::int("size_kb", sm.iter().map(|x| x.size_kb).collect()),
            Column::int(
                "private_dirty_kb",
                sm.iter().map(|x| x.private_dirty_kb).collect(),
            ),
            Column::int("swap_kb", sm.iter().map(|x| x.swap_kb).collect()),
            Column::str("file_name", sm.iter().map(|x| x.file_name).collect()),
            Column::int(
                "start_address",
                sm.iter().map(|x| x.start_address).collect(),
            ),
            Column::int(
                "module_timestamp",
                sm.iter().map(|x| x.module_timestamp).collect(),
            ),
            Column::str(
                "module_debugid",
                sm.iter().map(|x| x.module_debugid).collect(),
            ),
            Column::str(
                "module_debug_path",
                sm.iter().map(|x| x.module_debug_path).collect(),
            ),
            Column::int(
                "protection_flags",
                sm.iter().map(|x| x.protection_flags).collect(),
            ),
            Column::int(
                "private_clean_resident_kb",
                sm.iter().map(|x| x.private_clean_resident_kb).collect(),
            ),
            Column::int(
                "shared_dirty_resident_kb",
                sm.iter().map(|x| x.shared_dirty_resident_kb).collect(),
            ),
            Column::int(
                "shared_clean_resident_kb",
                sm.iter().map(|x| x.shared_clean_resident_kb).collect(),
            ),
            Column::int("locked_kb", sm.iter().map(|x| x.locked_kb).collect()),
            Column::int(
                "proportional_resident_kb",
                sm.iter().map(|x| x.proportional_resident_kb).collect(),
            ),
            Column::int("rss_kb", sm.iter().map(|x| x.rss_kb).collect()),
            Column::int("anonymous_kb", sm.iter().map(|x| x.anonymous_kb).collect()),
            Column::int("pss_dirty_kb", sm.iter().map(|x| x.pss_dirty_kb).collect()),
            Column::int("swap_pss_kb", sm.iter().map(|x| x.swap_pss_kb).collect()),
        ],
        sm.len(),
    ));
    out
}

/// The public profiling views, created after [`super::views::VIEWS`].
pub const PROFILING_VIEWS: &str = r#"
CREATE VIEW stack_profile_mapping AS SELECT * FROM __intrinsic_stack_profile_mapping;
CREATE VIEW stack_profile_frame AS SELECT * FROM __intrinsic_stack_profile_frame;
CREATE VIEW stack_profile_callsite AS SELECT * FROM __intrinsic_stack_profile_callsite;
CREATE VIEW stack_profile_symbol AS SELECT * FROM __intrinsic_stack_profile_symbol;
CREATE VIEW heap_profile AS SELECT id, ts, ts_end, dur, upid, heap_name
  FROM __intrinsic_heap_profile;
CREATE VIEW heap_profile_allocation AS SELECT * FROM __intrinsic_heap_profile_allocation;
CREATE VIEW heap_graph AS SELECT id, ts, upid, dump_reason, heap_size, truncated
  FROM __intrinsic_heap_graph;
CREATE VIEW heap_graph_thread_callsite AS SELECT id, heap_graph_id, utid, callsite_id
  FROM __intrinsic_heap_graph_thread_callsite;
CREATE VIEW heap_graph_java_oome_details AS SELECT * FROM __intrinsic_heap_graph_java_oome_details;
CREATE VIEW profiler_smaps AS SELECT * FROM __intrinsic_profiler_smaps;
CREATE VIEW perf_session AS SELECT id, cmdline FROM __intrinsic_profiler_session
  WHERE source = 'linux.perf';
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
CREATE VIEW perf_counter_track AS SELECT ct.id, ct.name, ct.type, ct.parent_id,
  ct.source_arg_set_id, ct.machine_id, ct.unit, ct.description,
  extract_arg(ct.dimension_arg_set_id, 'perf_session_id') AS perf_session_id,
  extract_arg(ct.dimension_arg_set_id, 'cpu') AS cpu,
  extract_arg(ct.source_arg_set_id, 'is_timebase') AS is_timebase
  FROM counter_track AS ct WHERE ct.type IN ('perf_cpu_counter', 'perf_global_counter');
CREATE VIEW stack_sample_session AS SELECT s.id, s.source, s.timebase_unit, s.cmdline
  FROM __intrinsic_profiler_session AS s
  WHERE s.id IN (SELECT DISTINCT session_id FROM __intrinsic_profiler_sample
    WHERE callsite_id IS NOT NULL AND session_id IS NOT NULL);
CREATE VIEW stack_sample_async_context AS WITH RECURSIVE referenced(id) AS (
    SELECT tc.async_context_id FROM __intrinsic_profiler_sample AS ps
    JOIN __intrinsic_profiler_task_context AS tc ON tc.id = ps.task_context_id
    WHERE ps.callsite_id IS NOT NULL AND tc.async_context_id IS NOT NULL
    UNION
    SELECT ac.parent_id FROM __intrinsic_profiler_async_context AS ac
    JOIN referenced AS r ON ac.id = r.id WHERE ac.parent_id IS NOT NULL)
  SELECT id, name, kind, parent_id FROM __intrinsic_profiler_async_context
  WHERE id IN (SELECT id FROM referenced);
CREATE VIEW stack_sample_task_context AS SELECT id, upid, utid, async_context_id
  FROM __intrinsic_profiler_task_context
  WHERE id IN (SELECT DISTINCT task_context_id FROM __intrinsic_profiler_sample
    WHERE callsite_id IS NOT NULL);
CREATE VIEW stack_sample_execution_context AS SELECT id, ucpu, cpu_mode
  FROM __intrinsic_profiler_execution_context
  WHERE id IN (SELECT DISTINCT execution_context_id FROM __intrinsic_profiler_sample
    WHERE callsite_id IS NOT NULL);
CREATE VIEW stack_sample AS SELECT id, ts, source, task_context_id, execution_context_id,
  callsite_id, session_id FROM __intrinsic_profiler_sample WHERE callsite_id IS NOT NULL;
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

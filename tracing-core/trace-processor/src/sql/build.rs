//! Storage rows into frozen columnar tables, one per intrinsic table, with
//! Perfetto's column names and types.

use std::sync::Arc;

use crate::storage::Storage;
use crate::storage::args::ArgValue;
use crate::storage::stats::STATS;
use crate::storage::strings::StrId;
use crate::tables::core::{
    ClockSnapshotRow, CounterRow, CpuFreqRow, CpuRow, FlowRow, MachineRow, MetadataRow, ProcessRow,
    SliceRow, StateRow, ThreadRow, TrackEventCallstackRow, TrackRow,
};
use crate::tables::profiling::{
    AsyncContextRow, CallsiteRow, ChromeSampleExtrasRow, CounterSetRow, ExecutionContextRow,
    FrameRow, HeapAllocationRow, HeapGraphRow, HeapGraphThreadCallsiteRow, HeapProfileRow,
    MappingRow, OomeDetailsRow, ProfilerSampleRow, ProfilerSessionRow, SmapsRow, SymbolRow,
    TaskContextRow,
};
use crate::tables::sched::{FtraceEventRow, SchedSliceRow, ThreadStateRow};

use super::table::{Column, Table};

fn ids(n: usize) -> Vec<i64> {
    (0..n as i64).collect()
}

/// The sorted column of a table, when its values ascend.
fn ascending(table: &Table, col: usize) -> Option<usize> {
    let c = table.columns.get(col)?;
    c.ascends().then_some(col)
}

/// Builds every intrinsic table from the storage.
pub fn build(mut s: Storage) -> Vec<Table> {
    // Strings the tables need beyond the storage's own.
    let stat_names: Vec<StrId> = STATS.iter().map(|d| s.strings.intern(d.0)).collect();
    let severities: Vec<StrId> = STATS
        .iter()
        .map(|d| s.strings.intern(d.2.as_str()))
        .collect();
    let sources: Vec<StrId> = STATS
        .iter()
        .map(|d| s.strings.intern(d.3.as_str()))
        .collect();
    let value_types: Vec<StrId> = s
        .args
        .rows
        .iter()
        .map(|(_, a)| a.value.type_name())
        .collect::<Vec<_>>()
        .into_iter()
        .map(|t| s.strings.intern(t))
        .collect();
    let stats_rows = s.stats.rows();
    let strings = Arc::new(std::mem::take(&mut s.strings));
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

    // The largest tables are given back as soon as their columns exist, so
    // the rows and the columns of all of them are never held at once.
    let sl = std::mem::take(&mut s.slices);
    out.push(SliceRow::freeze(&sl, &strings));
    drop(sl);
    out.push(TrackRow::freeze(&s.tracks, &strings));
    out.push(ThreadRow::freeze(&s.threads, &strings));
    out.push(ProcessRow::freeze(&s.processes, &strings));
    let co = std::mem::take(&mut s.counters);
    out.push(CounterRow::freeze(&co, &strings));
    drop(co);
    out.push(StateRow::freeze(&s.states, &strings));
    out.push(FlowRow::freeze(&s.flows, &strings));
    out.push(TrackEventCallstackRow::freeze(
        &s.track_event_callstacks,
        &strings,
    ));

    let ar = std::mem::take(&mut s.args.rows);
    let int_of = |v: &ArgValue| match *v {
        ArgValue::Int(x) => Some(x),
        ArgValue::Uint(x) | ArgValue::Pointer(x) => Some(x as i64),
        ArgValue::Bool(b) => Some(i64::from(b)),
        _ => None,
    };
    let str_of = |v: &ArgValue| match *v {
        ArgValue::String(s) | ArgValue::Json(s) => s,
        _ => StrId::NULL,
    };
    let real_of = |v: &ArgValue| match *v {
        ArgValue::Real(x) => Some(x),
        _ => None,
    };
    let mut t = table(
        "__intrinsic_args",
        vec![
            Column::int("id", ids(ar.len())),
            Column::int(
                "arg_set_id",
                ar.iter().map(|(s, _)| i64::from(*s)).collect(),
            ),
            Column::str("flat_key", ar.iter().map(|(_, a)| a.flat_key).collect()),
            Column::str("key", ar.iter().map(|(_, a)| a.key).collect()),
            Column::opt_int(
                "int_value",
                ar.iter().map(|(_, a)| int_of(&a.value)).collect(),
            ),
            Column::str(
                "string_value",
                ar.iter().map(|(_, a)| str_of(&a.value)).collect(),
            ),
            Column::opt_real(
                "real_value",
                ar.iter().map(|(_, a)| real_of(&a.value)).collect(),
            ),
            Column::str("value_type", value_types),
        ],
        ar.len(),
    );
    t.sorted_by = ascending(&t, 1);
    out.push(t);
    drop(ar);

    out.push(table(
        "__intrinsic_stats",
        vec![
            Column::int("id", ids(stats_rows.len())),
            Column::str("name", stats_rows.iter().map(|r| stat_names[r.0]).collect()),
            Column::opt_int("idx", stats_rows.iter().map(|r| r.1).collect()),
            Column::str(
                "severity",
                stats_rows.iter().map(|r| severities[r.0]).collect(),
            ),
            Column::str("source", stats_rows.iter().map(|r| sources[r.0]).collect()),
            Column::int("value", stats_rows.iter().map(|r| r.2).collect()),
            Column::str("description", vec![StrId::NULL; stats_rows.len()]),
            Column::opt_int("machine_id", vec![None; stats_rows.len()]),
            Column::opt_int("trace_id", vec![None; stats_rows.len()]),
        ],
        stats_rows.len(),
    ));

    out.push(MetadataRow::freeze(&s.metadata, &strings));
    out.push(CpuRow::freeze(&s.cpus, &strings));
    out.push(CpuFreqRow::freeze(&s.cpu_freqs, &strings));
    out.push(MachineRow::freeze(&s.machines, &strings));
    out.push(ClockSnapshotRow::freeze(&s.clock_snapshots, &strings));
    let sc = &s.sched;
    out.push(SchedSliceRow::freeze(&sc.slices, &strings));
    out.push(ThreadStateRow::freeze(&sc.thread_states, &strings));
    out.push(FtraceEventRow::freeze(&sc.ftrace_events, &strings));
    let p = &s.profiling;
    out.push(MappingRow::freeze(&p.mappings, &strings));
    out.push(FrameRow::freeze(&p.frames, &strings));
    out.push(CallsiteRow::freeze(&p.callsites, &strings));
    out.push(SymbolRow::freeze(&p.symbols, &strings));
    out.push(HeapProfileRow::freeze(&p.heap_profiles, &strings));
    out.push(HeapAllocationRow::freeze(&p.heap_allocations, &strings));
    out.push(ProfilerSessionRow::freeze(&p.sessions, &strings));
    out.push(TaskContextRow::freeze(&p.task_contexts, &strings));
    out.push(ExecutionContextRow::freeze(&p.execution_contexts, &strings));
    out.push(AsyncContextRow::freeze(&p.async_contexts, &strings));
    out.push(ProfilerSampleRow::freeze(&p.samples, &strings));
    out.push(CounterSetRow::freeze(&p.counter_sets, &strings));
    let extras: Vec<ChromeSampleExtrasRow> = p
        .chrome_sample_extras
        .iter()
        .map(
            |&(profiler_sample_id, process_priority)| ChromeSampleExtrasRow {
                profiler_sample_id,
                process_priority,
            },
        )
        .collect();
    out.push(ChromeSampleExtrasRow::freeze(&extras, &strings));
    out.push(HeapGraphRow::freeze(&p.heap_graphs, &strings));
    out.push(HeapGraphThreadCallsiteRow::freeze(
        &p.heap_graph_thread_callsites,
        &strings,
    ));
    out.push(OomeDetailsRow::freeze(&p.oome_details, &strings));
    out.push(SmapsRow::freeze(&p.smaps, &strings));
    out
}

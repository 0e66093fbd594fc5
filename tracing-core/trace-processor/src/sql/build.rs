//! Storage rows into frozen columnar tables, one per intrinsic table, with
//! Perfetto's column names and types.

use std::sync::Arc;

use crate::storage::Storage;
use crate::tables::args::ArgValue;
use crate::tables::core::{
    ClockSnapshotRow, CounterRow, CpuFreqRow, CpuRow, FlowRow, MachineRow, MetadataRow, ProcessRow,
    StatRow, StateRow, ThreadRow, TrackEventCallstackRow, TrackRow,
};
use crate::tables::heap_graph::{
    HeapGraphClassRow, HeapGraphObjectDataRow, HeapGraphObjectRow, HeapGraphPrimitiveRow,
    HeapGraphReferenceRow,
};
use crate::tables::profiling::{
    AggregateProfileRow, AggregateSampleRow, AsyncContextRow, CallsiteRow, ChromeSampleExtrasRow,
    CounterSetRow, ExecutionContextRow, FrameRow, HeapAllocationRow, HeapGraphRow,
    HeapGraphThreadCallsiteRow, HeapProfileRow, MappingRow, OomeDetailsRow, ProfilerSampleRow,
    ProfilerSessionRow, SmapsRow, SymbolRow, TaskContextRow,
};
use crate::tables::sched::{FtraceEventRow, InterruptMappingRow, SchedSliceRow, ThreadStateRow};

use crate::column_store::table::Table;

/// Builds every intrinsic table from the storage.
pub fn build(mut s: Storage) -> Vec<Table> {
    // Strings the derived columns read beyond the storage's own.
    for text in ArgValue::TYPE_NAMES.into_iter().chain(StatRow::texts()) {
        s.strings.intern(text);
    }
    let stats_rows: Vec<StatRow> = s
        .stats
        .rows_by_machine(u32::try_from(s.machines.len()).unwrap_or(u32::MAX))
        .into_iter()
        .map(|(stat, idx, value, machine)| StatRow {
            stat,
            idx,
            value,
            machine,
        })
        .collect();
    let strings = Arc::new(std::mem::take(&mut s.strings));
    let mut out = Vec::new();

    // The largest tables are given back as soon as their columns exist, so
    // the rows and the columns of all of them are never held at once.
    let sl = std::mem::take(&mut s.slices);
    let threads = std::mem::take(&mut s.slice_threads);
    out.push(crate::tables::core::freeze_slices(&sl, &threads, &strings));
    drop((sl, threads));
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

    out.push(s.args.freeze(&strings));
    s.args = Default::default();
    out.push(StatRow::freeze(&stats_rows, &strings));

    out.push(MetadataRow::freeze(&s.metadata, &strings));
    out.push(CpuRow::freeze(&s.cpus, &strings));
    out.push(CpuFreqRow::freeze(&s.cpu_freqs, &strings));
    out.push(MachineRow::freeze(&s.machines, &strings));
    out.push(crate::tables::trace_file::TraceFileRow::freeze(
        &s.trace_files,
        &strings,
    ));
    out.push(ClockSnapshotRow::freeze(&s.clock_snapshots, &strings));
    out.push(crate::tables::core::TraceDiagnosticRow::freeze(
        &s.trace_diagnostics,
        &strings,
    ));
    out.push(crate::tables::core::ImportLogRow::freeze(
        &s.import_logs,
        &strings,
    ));
    out.push(crate::tables::proto_content::ProtoPathRow::freeze(
        &s.proto_paths,
        &strings,
    ));
    out.push(crate::tables::proto_content::ProtoContentRow::freeze(
        &s.proto_contents,
        &strings,
    ));
    let sc = &s.sched;
    out.push(SchedSliceRow::freeze(&sc.slices, &strings));
    out.push(ThreadStateRow::freeze(&sc.thread_states, &strings));
    out.push(FtraceEventRow::freeze(&sc.ftrace_events, &strings));
    out.push(InterruptMappingRow::freeze(
        &sc.interrupt_mappings,
        &strings,
    ));
    let p = &s.profiling;
    out.push(MappingRow::freeze(&p.mappings, &strings));
    out.push(FrameRow::freeze(&p.frames, &strings));
    out.push(CallsiteRow::freeze(&p.callsites, &strings));
    out.push(SymbolRow::freeze(&p.symbols, &strings));
    out.push(AggregateProfileRow::freeze(&p.aggregate_profiles, &strings));
    out.push(AggregateSampleRow::freeze(&p.aggregate_samples, &strings));
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
    out.push(HeapGraphClassRow::freeze(&p.heap_graph_classes, &strings));
    out.push(HeapGraphObjectRow::freeze(&p.heap_graph_objects, &strings));
    out.push(HeapGraphObjectDataRow::freeze(
        &p.heap_graph_object_data,
        &strings,
    ));
    out.push(HeapGraphPrimitiveRow::freeze(
        &p.heap_graph_primitives,
        &strings,
    ));
    out.push(HeapGraphReferenceRow::freeze(
        &p.heap_graph_references,
        &strings,
    ));
    out.push(SmapsRow::freeze(&p.smaps, &strings));
    out.extend(s.android.freeze(&strings));
    out.push(crate::tables::chrome::MissingChromeProcessRow::freeze(
        &s.missing_chrome_processes,
        &strings,
    ));
    out.push(crate::tables::chrome::ChromeRawRow::freeze(
        &s.chrome_raw,
        &strings,
    ));
    out.push(crate::tables::logs::LogRow::freeze(&s.logs, &strings));
    out.push(
        crate::tables::android_network::AndroidNetworkPacketRow::freeze(
            &s.network_packets,
            &strings,
        ),
    );
    out.extend(s.winscope.freeze(&strings));
    out.extend(s.gpu.freeze(&strings));
    out.extend(s.memory_snapshots.freeze(&strings));
    out.extend(s.v8.freeze(&strings));
    out.extend(s.jit.freeze(&strings));
    out
}

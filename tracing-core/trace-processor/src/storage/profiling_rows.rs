//! The rows of the profiling tables while a trace loads, under the paths
//! the parsers name them by (each table is declared once, in
//! `tables/profiling.rs`), and the storage of all of them.

pub use crate::tables::heap_graph::{
    HeapGraphClassRow, HeapGraphObjectDataRow, HeapGraphObjectRow, HeapGraphPrimitiveRow,
    HeapGraphReferenceRow,
};
pub use crate::tables::profiling::{
    AggregateProfileRow, AggregateSampleRow, AsyncContextRow, CallsiteRow, CounterSetRow,
    ExecutionContextRow, FrameRow, HeapAllocationRow, HeapGraphRow, HeapGraphThreadCallsiteRow,
    HeapProfileRow, MappingRow, OomeDetailsRow, ProfilerSampleRow, ProfilerSessionRow, SmapsRow,
    SymbolRow, TaskContextRow,
};

/// Every profiling table of one trace.
#[derive(Debug, Default)]
pub struct ProfilingRows {
    /// `stack_profile_mapping`.
    pub mappings: Vec<MappingRow>,
    /// `stack_profile_frame`.
    pub frames: Vec<FrameRow>,
    /// `stack_profile_callsite`.
    pub callsites: Vec<CallsiteRow>,
    /// `stack_profile_symbol`.
    pub symbols: Vec<SymbolRow>,
    /// `__intrinsic_aggregate_profile`.
    pub aggregate_profiles: Vec<AggregateProfileRow>,
    /// `__intrinsic_aggregate_sample`.
    pub aggregate_samples: Vec<AggregateSampleRow>,
    /// `heap_profile`.
    pub heap_profiles: Vec<HeapProfileRow>,
    /// `heap_profile_allocation`.
    pub heap_allocations: Vec<HeapAllocationRow>,
    /// `__intrinsic_profiler_session`.
    pub sessions: Vec<ProfilerSessionRow>,
    /// `__intrinsic_profiler_task_context`.
    pub task_contexts: Vec<TaskContextRow>,
    /// `__intrinsic_profiler_execution_context`.
    pub execution_contexts: Vec<ExecutionContextRow>,
    /// `__intrinsic_profiler_async_context`.
    pub async_contexts: Vec<AsyncContextRow>,
    /// `__intrinsic_profiler_sample`.
    pub samples: Vec<ProfilerSampleRow>,
    /// `__intrinsic_profiler_counter_set`.
    pub counter_sets: Vec<CounterSetRow>,
    /// `profiler_smaps`.
    pub smaps: Vec<SmapsRow>,
    /// `__intrinsic_chrome_stack_sample_extras`: (sample id, process
    /// priority), made `ChromeSampleExtrasRow`s when frozen.
    pub chrome_sample_extras: Vec<(u32, i32)>,
    /// `heap_graph`.
    pub heap_graphs: Vec<HeapGraphRow>,
    /// `heap_graph_thread_callsite`.
    pub heap_graph_thread_callsites: Vec<HeapGraphThreadCallsiteRow>,
    /// `heap_graph_java_oome_details`.
    pub oome_details: Vec<OomeDetailsRow>,
    /// `heap_graph_class`.
    pub heap_graph_classes: Vec<HeapGraphClassRow>,
    /// `heap_graph_object`.
    pub heap_graph_objects: Vec<HeapGraphObjectRow>,
    /// `heap_graph_object_data`.
    pub heap_graph_object_data: Vec<HeapGraphObjectDataRow>,
    /// `heap_graph_primitive`.
    pub heap_graph_primitives: Vec<HeapGraphPrimitiveRow>,
    /// `heap_graph_reference`.
    pub heap_graph_references: Vec<HeapGraphReferenceRow>,
}

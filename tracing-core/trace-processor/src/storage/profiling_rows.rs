//! The rows of the profiling tables while a trace loads: stack profiles
//! (mappings, frames, callsites, symbols), heapprofd's dumps and
//! allocations, the generic profiler samples with their contexts, sessions
//! and counter sets, and smaps. Each row's id is its index, as upstream's.

use super::strings::StrId;

/// A row of `stack_profile_mapping`.
#[derive(Debug, Clone, Default)]
pub struct MappingRow {
    /// Hex build id ("" when none).
    pub build_id: StrId,
    /// `exact_offset`.
    pub exact_offset: i64,
    /// `start_offset`.
    pub start_offset: i64,
    /// Start address.
    pub start: i64,
    /// End address.
    pub end: i64,
    /// Load bias.
    pub load_bias: i64,
    /// Path of the binary.
    pub name: StrId,
}

/// A row of `stack_profile_frame`.
#[derive(Debug, Clone, Default)]
pub struct FrameRow {
    /// Function name ("" when unknown).
    pub name: StrId,
    /// The mapping.
    pub mapping: u32,
    /// PC relative to the mapping.
    pub rel_pc: i64,
    /// Symbols of the frame (`stack_profile_symbol.symbol_set_id`).
    pub symbol_set_id: Option<u32>,
    /// Deobfuscated name.
    pub deobfuscated_name: StrId,
    /// Kind of frame ("jit", "kernel", ...).
    pub frame_type: StrId,
}

/// A row of `stack_profile_callsite`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct CallsiteRow {
    /// Distance from the root.
    pub depth: u32,
    /// The caller's callsite.
    pub parent_id: Option<u32>,
    /// The frame.
    pub frame_id: u32,
}

/// A row of `stack_profile_symbol`.
#[derive(Debug, Clone, Default)]
pub struct SymbolRow {
    /// The set (one frame's symbols).
    pub symbol_set_id: u32,
    /// Function name.
    pub name: StrId,
    /// Source file.
    pub source_file: StrId,
    /// Line.
    pub line_number: Option<u32>,
}

/// A row of `heap_profile`.
#[derive(Debug, Clone, Default)]
pub struct HeapProfileRow {
    /// Window start.
    pub ts: i64,
    /// Window end (the dump).
    pub ts_end: i64,
    /// The process.
    pub upid: u32,
    /// The heap (NULL when not reported).
    pub heap_name: StrId,
}

/// A row of `heap_profile_allocation`.
#[derive(Debug, Clone, Copy, Default)]
pub struct HeapAllocationRow {
    /// The dump's time.
    pub ts: i64,
    /// The process.
    pub upid: u32,
    /// The heap.
    pub heap_name: StrId,
    /// The callsite.
    pub callsite_id: u32,
    /// Allocations (positive) or frees (negative) since the last dump.
    pub count: i64,
    /// Bytes, signed as `count`.
    pub size: i64,
}

/// A row of `__intrinsic_profiler_session`.
#[derive(Debug, Clone, Default)]
pub struct ProfilerSessionRow {
    /// The profiler ("linux.perf", a StackSample source).
    pub source: StrId,
    /// Unit of the timebase.
    pub timebase_unit: StrId,
    /// Command line.
    pub cmdline: StrId,
}

/// A row of `__intrinsic_profiler_task_context`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct TaskContextRow {
    /// Process.
    pub upid: Option<u32>,
    /// Thread.
    pub utid: Option<u32>,
    /// Async context.
    pub async_context_id: Option<u32>,
}

/// A row of `__intrinsic_profiler_execution_context`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct ExecutionContextRow {
    /// The CPU (ucpu).
    pub ucpu: Option<u32>,
    /// Privilege mode.
    pub cpu_mode: StrId,
}

/// A row of `__intrinsic_profiler_async_context`.
#[derive(Debug, Clone, Default)]
pub struct AsyncContextRow {
    /// Name.
    pub name: StrId,
    /// Kind ("fiber", "goroutine", ...).
    pub kind: StrId,
    /// Structural parent.
    pub parent_id: Option<u32>,
}

/// A row of `__intrinsic_profiler_sample`.
#[derive(Debug, Clone, Default)]
pub struct ProfilerSampleRow {
    /// Time.
    pub ts: i64,
    /// The profiler.
    pub source: StrId,
    /// Process / thread / async context.
    pub task_context_id: Option<u32>,
    /// CPU and mode.
    pub execution_context_id: Option<u32>,
    /// The callstack.
    pub callsite_id: Option<u32>,
    /// Unwinding error.
    pub unwind_error: StrId,
    /// The session.
    pub session_id: Option<u32>,
    /// Counter values at the sample.
    pub counter_set_id: Option<u32>,
}

/// A row of `profiler_smaps`.
#[derive(Debug, Clone, Default)]
pub struct SmapsRow {
    /// The process.
    pub upid: u32,
    /// Time.
    pub ts: i64,
    /// Path.
    pub path: StrId,
    /// Path without " (deleted)".
    pub path_trimmed: StrId,
    /// Whether the path ended in " (deleted)".
    pub is_deleted: bool,
    /// Size.
    pub size_kb: i64,
    /// Private dirty.
    pub private_dirty_kb: i64,
    /// Swap.
    pub swap_kb: i64,
    /// File name.
    pub file_name: StrId,
    /// Start address.
    pub start_address: i64,
    /// Module timestamp.
    pub module_timestamp: i64,
    /// Module debug id.
    pub module_debugid: StrId,
    /// Module debug path.
    pub module_debug_path: StrId,
    /// Protection flags.
    pub protection_flags: i64,
    /// Private clean resident.
    pub private_clean_resident_kb: i64,
    /// Shared dirty resident.
    pub shared_dirty_resident_kb: i64,
    /// Shared clean resident.
    pub shared_clean_resident_kb: i64,
    /// Locked.
    pub locked_kb: i64,
    /// Proportional resident.
    pub proportional_resident_kb: i64,
    /// Entries aggregated into this row (packed, aggregated smaps).
    pub aggregate_count: u32,
    /// Resident.
    pub rss_kb: i64,
    /// Anonymous.
    pub anonymous_kb: i64,
    /// Proportional dirty.
    pub pss_dirty_kb: i64,
    /// Proportional swap.
    pub swap_pss_kb: i64,
}

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
    /// `__intrinsic_profiler_counter_set`: (counter_set_id, counter_id).
    pub counter_sets: Vec<(u32, u32)>,
    /// `profiler_smaps`.
    pub smaps: Vec<SmapsRow>,
    /// `__intrinsic_chrome_stack_sample_extras`: (sample id, process
    /// priority).
    pub chrome_sample_extras: Vec<(u32, i32)>,
    /// `heap_graph`.
    pub heap_graphs: Vec<HeapGraphRow>,
    /// `heap_graph_thread_callsite`.
    pub heap_graph_thread_callsites: Vec<HeapGraphThreadCallsiteRow>,
    /// `heap_graph_java_oome_details`.
    pub oome_details: Vec<OomeDetailsRow>,
}

/// A row of `heap_graph`.
#[derive(Debug, Clone, Default)]
pub struct HeapGraphRow {
    /// Time of the dump.
    pub ts: i64,
    /// The process.
    pub upid: u32,
    /// Why ("OOME", ...).
    pub dump_reason: StrId,
    /// Heap size.
    pub heap_size: Option<i64>,
    /// Whether the graph was cut short.
    pub truncated: Option<bool>,
}

/// A row of `heap_graph_thread_callsite`.
#[derive(Debug, Clone, Default)]
pub struct HeapGraphThreadCallsiteRow {
    /// The graph.
    pub heap_graph_id: u32,
    /// The thread.
    pub utid: u32,
    /// Its callstack.
    pub callsite_id: Option<u32>,
}

/// A row of `heap_graph_java_oome_details`.
#[derive(Debug, Clone, Default)]
pub struct OomeDetailsRow {
    /// The graph.
    pub heap_graph_id: u32,
    /// The allocation that failed.
    pub allocation_size_bytes: i64,
    /// Free bytes.
    pub total_bytes_free: i64,
    /// Free bytes before the OOM.
    pub free_bytes_until_oom: i64,
    /// The exception's message.
    pub error_msg: StrId,
}

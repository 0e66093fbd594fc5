//! The profiling tables (upstream's `profiler_tables.py`,
//! `perf_tables.py`, `memory_tables.py`): stack profiles (mappings,
//! frames, callsites, symbols), heapprofd's dumps and allocations, the
//! generic profiler samples with their contexts, sessions and counter
//! sets, Java heap graphs and smaps. Each row's id is its index, as
//! upstream's. The public views over them are in `sql/build_profiling.rs`.

use super::table;
use crate::column_store::strings::StrId;

table! {
    /// A row of `stack_profile_mapping`.
    pub struct MappingRow in "__intrinsic_stack_profile_mapping",
        views ["stack_profile_mapping"] {
        /// Hex build id ("" when none).
        build_id: StrId,
        /// `exact_offset`.
        exact_offset: i64,
        /// `start_offset`.
        start_offset: i64,
        /// Start address.
        start: i64,
        /// End address.
        end: i64,
        /// Load bias.
        load_bias: i64,
        /// Path of the binary.
        name: StrId,
    }
}

table! {
    /// A row of `stack_profile_frame`.
    pub struct FrameRow in "__intrinsic_stack_profile_frame", views ["stack_profile_frame"] {
        /// Function name ("" when unknown).
        name: StrId,
        /// The mapping.
        mapping: u32,
        /// PC relative to the mapping.
        rel_pc: i64,
        /// Symbols of the frame (`stack_profile_symbol.symbol_set_id`).
        symbol_set_id: Option<u32>,
        /// Deobfuscated name.
        deobfuscated_name: StrId,
        /// Kind of frame ("jit", "kernel", ...).
        frame_type as "type": StrId,
    }
}

table! {
    /// A row of `stack_profile_callsite`.
    #[derive(Copy, PartialEq, Eq, Hash)]
    pub struct CallsiteRow in "__intrinsic_stack_profile_callsite",
        views ["stack_profile_callsite"] {
        /// Distance from the root.
        depth: u32,
        /// The caller's callsite.
        parent_id: Option<u32>,
        /// The frame.
        frame_id: u32,
    }
}

table! {
    /// A row of `stack_profile_symbol`.
    pub struct SymbolRow in "__intrinsic_stack_profile_symbol",
        views ["stack_profile_symbol"] {
        /// The set (one frame's symbols).
        symbol_set_id: u32,
        /// Function name.
        name: StrId,
        /// Source file.
        source_file: StrId,
        /// Line.
        line_number: Option<u32>,
        /// Whether the symbol was inlined into the next one of its set
        /// (NULL when not known).
        inlined: Option<u32>,
    }
}

table! {
    /// A row of `__intrinsic_aggregate_profile`: one sample type (metric)
    /// of an aggregated profile such as a pprof file.
    pub struct AggregateProfileRow in "__intrinsic_aggregate_profile" {
        /// Where the profile came from (`pprof_file` for a pprof input).
        scope: StrId,
        /// A readable name (`pprof cpu`).
        name: StrId,
        /// The sample type's `type` (`cpu`, `alloc_space`).
        sample_type_type: StrId,
        /// The sample type's `unit` (`nanoseconds`, `bytes`, `count`).
        sample_type_unit: StrId,
    }
}

table! {
    /// A row of `__intrinsic_aggregate_sample`: one callsite's value of
    /// one aggregated profile's sample type.
    pub struct AggregateSampleRow in "__intrinsic_aggregate_sample" {
        /// The sample type (`__intrinsic_aggregate_profile.id`).
        aggregate_profile_id: u32,
        /// The callstack's leaf (`stack_profile_callsite.id`).
        callsite_id: u32,
        /// The value.
        value: f64,
    }
}

table! {
    /// A row of `heap_profile`.
    pub struct HeapProfileRow in "__intrinsic_heap_profile", views ["heap_profile"] {
        /// Window start.
        ts: i64,
        /// Window end (the dump).
        ts_end: i64,
        /// The window's length.
        dur: i64 = |r| r.ts_end - r.ts,
        /// The process.
        upid: u32,
        /// The heap (NULL when not reported).
        heap_name: StrId,
    }
}

table! {
    /// A row of `heap_profile_allocation`.
    #[derive(Copy)]
    pub struct HeapAllocationRow in "__intrinsic_heap_profile_allocation",
        views ["heap_profile_allocation"] {
        /// The dump's time.
        ts: i64,
        /// The process.
        upid: u32,
        /// The heap.
        heap_name: StrId,
        /// The callsite.
        callsite_id: u32,
        /// Allocations (positive) or frees (negative) since the last dump.
        count: i64,
        /// Bytes, signed as `count`.
        size: i64,
    }
}

table! {
    /// A row of `__intrinsic_profiler_session`.
    pub struct ProfilerSessionRow in "__intrinsic_profiler_session",
        views ["perf_session", "stack_sample_session"] {
        /// The profiler ("linux.perf", a StackSample source).
        source: StrId,
        /// Unit of the timebase.
        timebase_unit: StrId,
        /// Command line.
        cmdline: StrId,
    }
}

table! {
    /// A row of `__intrinsic_profiler_task_context`.
    #[derive(Copy, PartialEq, Eq, Hash)]
    pub struct TaskContextRow in "__intrinsic_profiler_task_context",
        views ["stack_sample_task_context"] {
        /// Process.
        upid: Option<u32>,
        /// Thread.
        utid: Option<u32>,
        /// Async context.
        async_context_id: Option<u32>,
    }
}

table! {
    /// A row of `__intrinsic_profiler_execution_context`.
    #[derive(Copy, PartialEq, Eq, Hash)]
    pub struct ExecutionContextRow in "__intrinsic_profiler_execution_context",
        views ["stack_sample_execution_context"] {
        /// The CPU (ucpu).
        ucpu: Option<u32>,
        /// Privilege mode.
        cpu_mode: StrId,
    }
}

table! {
    /// A row of `__intrinsic_profiler_async_context`.
    pub struct AsyncContextRow in "__intrinsic_profiler_async_context",
        views ["stack_sample_async_context"] {
        /// Name.
        name: StrId,
        /// Kind ("fiber", "goroutine", ...).
        kind: StrId,
        /// Structural parent.
        parent_id: Option<u32>,
    }
}

table! {
    /// A row of `__intrinsic_profiler_sample`.
    pub struct ProfilerSampleRow in "__intrinsic_profiler_sample",
        views ["perf_sample", "cpu_profile_stack_sample", "stack_sample"] {
        /// Time.
        ts: i64,
        /// The profiler.
        source: StrId,
        /// Process / thread / async context.
        task_context_id: Option<u32>,
        /// CPU and mode.
        execution_context_id: Option<u32>,
        /// The callstack.
        callsite_id: Option<u32>,
        /// Unwinding error.
        unwind_error: StrId,
        /// The session.
        session_id: Option<u32>,
        /// Counter values at the sample.
        counter_set_id: Option<u32>,
    }
}

table! {
    /// A row of `__intrinsic_profiler_counter_set`: one counter of a set.
    pub struct CounterSetRow in "__intrinsic_profiler_counter_set" {
        /// The set.
        counter_set_id: u32,
        /// The counter's row in `counter`.
        counter_id: u32,
    }
}

table! {
    /// A row of `__intrinsic_chrome_stack_sample_extras`.
    pub struct ChromeSampleExtrasRow in "__intrinsic_chrome_stack_sample_extras" {
        /// The sample.
        profiler_sample_id: u32,
        /// The process's priority.
        process_priority: i32,
    }
}

table! {
    /// A row of `heap_graph`.
    pub struct HeapGraphRow in "__intrinsic_heap_graph", views ["heap_graph"] {
        /// Time of the dump.
        ts: i64,
        /// The process.
        upid: u32,
        /// Why ("OOME", ...).
        dump_reason: StrId,
        /// Heap size.
        heap_size: Option<i64>,
        /// Whether the graph was cut short.
        truncated: Option<bool>,
    }
}

table! {
    /// A row of `heap_graph_thread_callsite`.
    pub struct HeapGraphThreadCallsiteRow in "__intrinsic_heap_graph_thread_callsite",
        views ["heap_graph_thread_callsite"] {
        /// The graph.
        heap_graph_id: u32,
        /// The thread.
        utid: u32,
        /// Its callstack.
        callsite_id: Option<u32>,
    }
}

table! {
    /// A row of `heap_graph_java_oome_details`.
    pub struct OomeDetailsRow in "__intrinsic_heap_graph_java_oome_details",
        views ["heap_graph_java_oome_details"] {
        /// The graph.
        heap_graph_id: u32,
        /// The allocation that failed.
        allocation_size_bytes: i64,
        /// Free bytes.
        total_bytes_free: i64,
        /// Free bytes before the OOM.
        free_bytes_until_oom: i64,
        /// The exception's message.
        error_msg: StrId,
    }
}

table! {
    /// A row of `profiler_smaps`.
    pub struct SmapsRow in "__intrinsic_profiler_smaps", views ["profiler_smaps"] {
        /// The process.
        upid: u32,
        /// Time.
        ts: i64,
        /// Path.
        path: StrId,
        /// Path without " (deleted)".
        path_trimmed: StrId,
        /// Entries aggregated into this row (packed, aggregated smaps).
        aggregate_count: u32,
        /// Whether the path ended in " (deleted)".
        is_deleted: bool,
        /// Size.
        size_kb: i64,
        /// Private dirty.
        private_dirty_kb: i64,
        /// Swap.
        swap_kb: i64,
        /// File name.
        file_name: StrId,
        /// Start address.
        start_address: i64,
        /// Module timestamp.
        module_timestamp: i64,
        /// Module debug id.
        module_debugid: StrId,
        /// Module debug path.
        module_debug_path: StrId,
        /// Protection flags.
        protection_flags: i64,
        /// Private clean resident.
        private_clean_resident_kb: i64,
        /// Shared dirty resident.
        shared_dirty_resident_kb: i64,
        /// Shared clean resident.
        shared_clean_resident_kb: i64,
        /// Locked.
        locked_kb: i64,
        /// Proportional resident.
        proportional_resident_kb: i64,
        /// Resident.
        rss_kb: i64,
        /// Anonymous.
        anonymous_kb: i64,
        /// Proportional dirty.
        pss_dirty_kb: i64,
        /// Proportional swap.
        swap_pss_kb: i64,
    }
}

/// The profiling tables' declarations, in the order they are built.
pub const TABLES: &[super::TableDecl] = &[
    MappingRow::TABLE,
    FrameRow::TABLE,
    CallsiteRow::TABLE,
    SymbolRow::TABLE,
    AggregateProfileRow::TABLE,
    AggregateSampleRow::TABLE,
    HeapProfileRow::TABLE,
    HeapAllocationRow::TABLE,
    ProfilerSessionRow::TABLE,
    TaskContextRow::TABLE,
    ExecutionContextRow::TABLE,
    AsyncContextRow::TABLE,
    ProfilerSampleRow::TABLE,
    CounterSetRow::TABLE,
    ChromeSampleExtrasRow::TABLE,
    HeapGraphRow::TABLE,
    HeapGraphThreadCallsiteRow::TABLE,
    OomeDetailsRow::TABLE,
    SmapsRow::TABLE,
];

//! The public views that project one declared table, with their column
//! lists taken from the table's declaration: a view names only what it
//! does beyond its table (its leading columns in Perfetto's order, the
//! columns it leaves out, what it computes, its filter), and every other
//! declared column follows in declaration order. So adding a column to a
//! table is still one edit, and its views show it. Views that join, group
//! or read other views stay SQL in `sql/views.rs` and its siblings.

use super::TableDecl;
use super::args::ArgRow;
use super::core::{
    CounterRow, CpuFreqRow, CpuRow, FlowRow, ImportLogRow, MachineRow, MetadataRow, ProcessRow,
    SliceRow, StatRow, StateRow, ThreadRow, TrackRow,
};
use super::heap_graph::{
    HeapGraphClassRow, HeapGraphObjectDataRow, HeapGraphObjectRow, HeapGraphPrimitiveRow,
    HeapGraphReferenceRow,
};
use super::profiling::{
    ExecutionContextRow, HeapGraphRow, HeapGraphThreadCallsiteRow, HeapProfileRow,
    ProfilerSampleRow, ProfilerSessionRow, TaskContextRow,
};
use super::sched::{FtraceEventRow, SchedSliceRow, ThreadStateRow};

/// A view over one table: `SELECT first, <the rest>, then FROM table
/// filter`, where the rest is every declared column of the table not
/// named in `first` or `then` and not in `leave_out`, in declaration
/// order.
#[derive(Debug, Clone, Copy)]
pub struct Projection {
    /// The view's name.
    pub name: &'static str,
    /// The table it projects.
    pub table: &'static TableDecl,
    /// Leading select items: a column's name, or an expression `... AS x`.
    pub first: &'static [&'static str],
    /// Declared columns the view leaves out.
    pub leave_out: &'static [&'static str],
    /// Trailing select items, as `first`.
    pub then: &'static [&'static str],
    /// What follows `FROM table` (a `WHERE` clause), or nothing.
    pub filter: &'static str,
}

impl Projection {
    const fn of(name: &'static str, table: &'static TableDecl) -> Self {
        Projection {
            name,
            table,
            first: &[],
            leave_out: &[],
            then: &[],
            filter: "",
        }
    }

    /// The declared columns that fill the rest of the view.
    pub fn rest(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.table.columns.iter().map(|c| c.name).filter(|n| {
            !self.leave_out.contains(n) && !self.first.contains(n) && !self.then.contains(n)
        })
    }

    /// The view's select items, in order.
    pub fn items(&self) -> Vec<&'static str> {
        let mut out: Vec<&'static str> = self.first.to_vec();
        out.extend(self.rest());
        out.extend_from_slice(self.then);
        out
    }

    /// The statement that creates the view.
    pub fn sql(&self) -> String {
        let mut sql = format!(
            "CREATE VIEW {} AS SELECT {} FROM {}",
            self.name,
            self.items().join(", "),
            self.table.name
        );
        if !self.filter.is_empty() {
            sql.push(' ');
            sql.push_str(self.filter);
        }
        sql.push_str(";\n");
        sql
    }
}

/// The columns a track kind's view leaves out: the classification
/// columns it is selected by and the dimensions it does not show.
const TRACK_INTERNAL: [&str; 4] = ["event_type", "counter_unit", "utid", "upid"];

/// A track kind's view: a slice or state track of a thread or process.
const fn track_kind(
    name: &'static str,
    leave_out: &'static [&'static str],
    filter: &'static str,
) -> Projection {
    Projection {
        leave_out,
        then: &[],
        filter,
        ..Projection::of(name, &TrackRow::TABLE)
    }
}

/// A counter track kind's view: its unit and description after the
/// track's columns, then its dimension.
const fn counter_track_kind(
    name: &'static str,
    leave_out: &'static [&'static str],
    then: &'static [&'static str],
    filter: &'static str,
) -> Projection {
    Projection {
        leave_out,
        then,
        filter,
        ..Projection::of(name, &TrackRow::TABLE)
    }
}

/// `extract_arg` of a counter track's description.
const DESCRIPTION: &str = "extract_arg(source_arg_set_id, 'description') AS description";

/// Every projection, in the order they are created.
pub const PROJECTIONS: &[Projection] = &[
    Projection::of("package_list", &super::android::PackageListRow::TABLE),
    Projection::of(
        "android_dumpstate",
        &super::android::AndroidDumpstateRow::TABLE,
    ),
    Projection::of(
        "experimental_missing_chrome_processes",
        &super::chrome::MissingChromeProcessRow::TABLE,
    ),
    Projection::of("logs", &super::logs::LogRow::TABLE),
    Projection {
        leave_out: &["log_source", "arg_set_id"],
        filter: "WHERE log_source = 'android_logcat'",
        ..Projection::of("android_logs", &super::logs::LogRow::TABLE)
    },
    Projection::of(
        "android_game_intervention_list",
        &super::android::AndroidGameInterventionRow::TABLE,
    ),
    Projection::of(
        "memory_snapshot",
        &super::memory_snapshot::MemorySnapshotRow::TABLE,
    ),
    Projection::of(
        "process_memory_snapshot",
        &super::memory_snapshot::ProcessMemorySnapshotRow::TABLE,
    ),
    Projection::of(
        "memory_snapshot_node",
        &super::memory_snapshot::MemorySnapshotNodeRow::TABLE,
    ),
    Projection::of(
        "memory_snapshot_edge",
        &super::memory_snapshot::MemorySnapshotEdgeRow::TABLE,
    ),
    Projection::of(
        "vulkan_memory_allocations",
        &super::gpu::VulkanMemoryAllocationRow::TABLE,
    ),
    Projection {
        then: &["category AS cat", "id AS slice_id"],
        ..Projection::of("slice", &SliceRow::TABLE)
    },
    Projection {
        first: &["id AS utid", "id"],
        ..Projection::of("thread", &ThreadRow::TABLE)
    },
    Projection {
        first: &["id AS upid", "id"],
        ..Projection::of("process", &ProcessRow::TABLE)
    },
    Projection {
        then: &["CASE value_type
    WHEN 'int' THEN CAST(int_value AS TEXT)
    WHEN 'uint' THEN printf('%u', int_value)
    WHEN 'string' THEN string_value
    WHEN 'real' THEN CAST(real_value AS TEXT)
    WHEN 'pointer' THEN printf('0x%x', int_value)
    WHEN 'bool' THEN (CASE WHEN int_value != 0 THEN 'true' ELSE 'false' END)
    WHEN 'json' THEN string_value
    ELSE NULL
  END AS display_value"],
        ..Projection::of("args", &ArgRow::TABLE)
    },
    Projection::of("counter", &CounterRow::TABLE),
    Projection::of("state", &StateRow::TABLE),
    Projection::of("flow", &FlowRow::TABLE),
    Projection {
        leave_out: &TRACK_INTERNAL,
        ..Projection::of("track", &TrackRow::TABLE)
    },
    track_kind(
        "thread_track",
        &[
            "dimension_arg_set_id",
            "track_group_id",
            "event_type",
            "counter_unit",
            "upid",
        ],
        "WHERE event_type = 'slice' AND utid IS NOT NULL",
    ),
    track_kind(
        "process_track",
        &[
            "dimension_arg_set_id",
            "track_group_id",
            "event_type",
            "counter_unit",
            "utid",
        ],
        "WHERE event_type = 'slice' AND upid IS NOT NULL",
    ),
    Projection {
        first: &["id", "name", "parent_id", "type"],
        leave_out: &[
            "track_group_id",
            "event_type",
            "counter_unit",
            "utid",
            "upid",
        ],
        then: &["counter_unit AS unit", DESCRIPTION],
        filter: "WHERE event_type = 'counter'",
        ..Projection::of("counter_track", &TrackRow::TABLE)
    },
    counter_track_kind(
        "process_counter_track",
        &[
            "dimension_arg_set_id",
            "track_group_id",
            "event_type",
            "counter_unit",
            "utid",
            "upid",
        ],
        &["counter_unit AS unit", DESCRIPTION, "upid"],
        "WHERE event_type = 'counter' AND upid IS NOT NULL",
    ),
    counter_track_kind(
        "thread_counter_track",
        &[
            "dimension_arg_set_id",
            "track_group_id",
            "event_type",
            "counter_unit",
            "utid",
            "upid",
        ],
        &["counter_unit AS unit", DESCRIPTION, "utid"],
        "WHERE event_type = 'counter' AND utid IS NOT NULL",
    ),
    Projection {
        first: &["id", "name", "parent_id", "type"],
        leave_out: &[
            "track_group_id",
            "event_type",
            "counter_unit",
            "utid",
            "upid",
        ],
        filter: "WHERE event_type = 'state'",
        ..Projection::of("state_track", &TrackRow::TABLE)
    },
    track_kind(
        "process_state_track",
        &[
            "dimension_arg_set_id",
            "track_group_id",
            "event_type",
            "counter_unit",
            "utid",
        ],
        "WHERE event_type = 'state' AND upid IS NOT NULL",
    ),
    track_kind(
        "thread_state_track",
        &[
            "dimension_arg_set_id",
            "track_group_id",
            "event_type",
            "counter_unit",
            "upid",
        ],
        "WHERE event_type = 'state' AND utid IS NOT NULL",
    ),
    Projection {
        first: &["id", "id AS ucpu"],
        filter: "WHERE cpu IS NOT NULL",
        ..Projection::of("cpu", &CpuRow::TABLE)
    },
    Projection {
        first: &["id", "ucpu AS cpu", "freq"],
        ..Projection::of("cpu_available_frequencies", &CpuFreqRow::TABLE)
    },
    Projection {
        first: &["id", "name", "idx AS key", "idx"],
        ..Projection::of("stats", &StatRow::TABLE)
    },
    Projection {
        first: &[
            "id",
            "trace_id",
            "ts",
            "byte_offset",
            "severity",
            "name",
            "arg_set_id",
        ],
        leave_out: &["stat_key"],
        ..Projection::of("_trace_import_logs", &ImportLogRow::TABLE)
    },
    Projection {
        then: &["iif(raw_id = 0, 0, sum(iif(raw_id = 0, 0, 1)) OVER (ORDER BY id)) AS label_index"],
        ..Projection::of("machine", &MachineRow::TABLE)
    },
    Projection::of("metadata", &MetadataRow::TABLE),
    Projection::of("trace_file", &super::trace_file::TraceFileRow::TABLE),
    Projection {
        first: &["id", "ts", "dur", "ucpu AS cpu"],
        then: &["ts + dur AS ts_end"],
        ..Projection::of("sched", &SchedSliceRow::TABLE)
    },
    Projection {
        first: &["id", "ts", "dur", "ucpu AS cpu"],
        ..Projection::of("sched_slice", &SchedSliceRow::TABLE)
    },
    Projection {
        first: &["id", "ts", "dur", "ucpu AS cpu"],
        ..Projection::of("thread_state", &ThreadStateRow::TABLE)
    },
    Projection {
        first: &["id", "ts", "name", "ucpu AS cpu"],
        ..Projection::of("ftrace_event", &FtraceEventRow::TABLE)
    },
    Projection::of("heap_profile", &HeapProfileRow::TABLE),
    Projection::of("heap_graph", &HeapGraphRow::TABLE),
    Projection::of("heap_graph_class", &HeapGraphClassRow::TABLE),
    Projection::of("heap_graph_object", &HeapGraphObjectRow::TABLE),
    Projection::of("heap_graph_object_data", &HeapGraphObjectDataRow::TABLE),
    Projection::of("heap_graph_primitive", &HeapGraphPrimitiveRow::TABLE),
    Projection::of("heap_graph_reference", &HeapGraphReferenceRow::TABLE),
    Projection::of(
        "surfaceflinger_transactions",
        &super::winscope::SfTransactionsRow::TABLE,
    ),
    Projection::of(
        "surfaceflinger_layers_snapshot",
        &super::winscope::SfLayersSnapshotRow::TABLE,
    ),
    Projection::of("surfaceflinger_layer", &super::winscope::SfLayerRow::TABLE),
    Projection::of("protolog", &super::winscope::ProtoLogRow::TABLE),
    Projection::of(
        "window_manager_shell_transitions",
        &super::winscope::ShellTransitionRow::TABLE,
    ),
    Projection::of(
        "window_manager_shell_transition_handlers",
        &super::winscope::ShellTransitionHandlerRow::TABLE,
    ),
    Projection::of(
        "heap_graph_thread_callsite",
        &HeapGraphThreadCallsiteRow::TABLE,
    ),
    Projection {
        leave_out: &["source", "timebase_unit"],
        filter: "WHERE source = 'linux.perf'",
        ..Projection::of("perf_session", &ProfilerSessionRow::TABLE)
    },
    Projection {
        filter: "WHERE id IN (SELECT DISTINCT session_id FROM __intrinsic_profiler_sample
    WHERE callsite_id IS NOT NULL AND session_id IS NOT NULL)",
        ..Projection::of("stack_sample_session", &ProfilerSessionRow::TABLE)
    },
    Projection {
        filter: "WHERE id IN (SELECT DISTINCT task_context_id FROM __intrinsic_profiler_sample
    WHERE callsite_id IS NOT NULL)",
        ..Projection::of("stack_sample_task_context", &TaskContextRow::TABLE)
    },
    Projection {
        filter: "WHERE id IN (SELECT DISTINCT execution_context_id FROM __intrinsic_profiler_sample
    WHERE callsite_id IS NOT NULL)",
        ..Projection::of(
            "stack_sample_execution_context",
            &ExecutionContextRow::TABLE,
        )
    },
    Projection {
        leave_out: &["unwind_error", "counter_set_id"],
        filter: "WHERE callsite_id IS NOT NULL",
        ..Projection::of("stack_sample", &ProfilerSampleRow::TABLE)
    },
];

/// The statements that create every projection.
pub fn statements() -> String {
    PROJECTIONS.iter().map(Projection::sql).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each projection is one its table declares, and names only columns
    /// its table has (a column renamed or left out in the declaration
    /// cannot stay behind in a view).
    #[test]
    fn projections_are_declared_and_name_declared_columns() {
        let mut names = std::collections::HashSet::new();
        for p in PROJECTIONS {
            assert!(names.insert(p.name), "{} projected twice", p.name);
            assert!(
                p.table.views.contains(&p.name),
                "{} is not among {}'s views",
                p.name,
                p.table.name
            );
            let plain = p.first.iter().chain(p.then).chain(p.leave_out);
            for item in plain {
                let is_column = item.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
                if is_column {
                    assert!(
                        p.table.columns.iter().any(|c| c.name == *item),
                        "{}: {} has no column {item}",
                        p.name,
                        p.table.name
                    );
                }
            }
        }
    }

    /// A column added to a table's declaration shows in its views, after
    /// the columns the view places itself and before what it computes.
    #[test]
    fn a_views_columns_follow_its_tables_declaration() {
        let slice = PROJECTIONS
            .iter()
            .find(|p| p.name == "slice")
            .copied()
            .unwrap();
        let mut columns = slice.table.columns.to_vec();
        columns.push(super::super::ColumnDecl {
            name: "new_column",
            ..super::super::ID
        });
        let columns: &'static [super::super::ColumnDecl] = Box::leak(columns.into_boxed_slice());
        let table: &'static TableDecl = Box::leak(Box::new(TableDecl {
            columns,
            ..*slice.table
        }));
        let grown = Projection { table, ..slice };
        let items = grown.items();
        let at = |c: &str| items.iter().position(|i| *i == c);
        assert!(at("new_column").is_some(), "{items:?}");
        assert!(at("thread_instruction_delta") < at("new_column"));
        assert!(at("new_column") < at("category AS cat"));
        assert!(grown.sql().contains(", new_column, category AS cat,"));
    }
}

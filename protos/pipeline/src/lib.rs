//! The one schema pipeline. Protobuf schemas reach zerotrace's code from two
//! sources, our own wire-compatible `.proto` files in `protos/proto` and
//! Perfetto's upstream files (crate `perfetto_protos`, never copied into the
//! repository), and this crate is the single place that says which files are
//! used, the single generator run that makes every output from them, and what
//! the single staleness check compares.
//!
//! The outputs, all checked in:
//!
//! | output | from | used by |
//! |---|---|---|
//! | `protos/src/generated` | every file of `protos/proto` and the [`UPSTREAM_FILES`] upstream (`FtraceEvent` cut to [`FTRACE_EVENTS`]) as one schema, each message once; our descriptor set; the upstream tables of [`FIELD_TABLES`] and the probes' schema lists | `zerotrace-protos`, the one schema library of every crate |
//! | `tracing-core/trace-processor/src/generated` (`perfetto_descriptor.bin`) | upstream from [`DESCRIPTOR_ROOTS`] with `protos/proto`'s newer fields merged in | the trace processor's text printing (`trace_config_pbtxt`), and through it the command's text configs and named dumps |
//! | `tracing-core/trace-processor/src/generated` | upstream's [`WINSCOPE_DESCRIPTOR_ROOTS`] with their imports and [`WINSCOPE_NEWER_PROTO_DIR`]'s newer fields merged in; upstream's [`TRACK_EVENT_DESCRIPTOR_ROOTS`] with their imports | the trace processor's proto-to-args flattener (Winscope packets; TrackEvent's typed fields and Chrome's extensions) |
//!
//! Both sources are generated as one schema because they share a package
//! (`perfetto.protos`) and some messages: our `TracePacket` carries the
//! `ProfilePacket` that upstream's `profile_packet.proto` also declares, and
//! upstream's perf packets use the interned `Frame`s and `Mapping`s of
//! `profile_common.proto`, which our schema declares too. A message both
//! declare is generated once, from the definition that has every field of
//! the other (`merge.rs`); the run fails when neither does.
//!
//! `cargo xtask codegen` writes them, `cargo xtask codegen --check` and the
//! test `protos/tests/generated_code_is_fresh.rs` fail when any is stale.
//! A new data source's config and packets are a line in [`UPSTREAM_FILES`]
//! (and one per `TracePacket` field it writes in [`FIELD_TABLES`]); the
//! descriptor set takes every config and packet already.

mod descriptor;
mod merge;
mod ours;
mod protos_out;
mod tables;
mod upstream;
mod upstream_set;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use protozero_codegen::{CodegenError, Generated};

pub use upstream::upstream_root;

/// The crate whose sources ship Perfetto's `.proto` files.
pub const UPSTREAM_CRATE: &str = "perfetto_protos";
/// Its version (Perfetto v51); keep `Cargo.toml`'s pin in step.
pub const UPSTREAM_VERSION: &str = "0.51.1";
/// Names a directory holding `protos/perfetto/...` to use instead of the crate.
pub const UPSTREAM_DIR_VAR: &str = "ZEROTRACE_PERFETTO_PROTOS_DIR";

/// The command that rewrites stale outputs.
pub const FIX_COMMAND: &str = "cargo xtask codegen";

/// Our schemas, relative to the workspace root.
pub const OUR_PROTO_DIR: &str = "protos/proto";
/// Where the code generated from [`OUR_PROTO_DIR`] and [`UPSTREAM_FILES`]
/// goes (`zerotrace-protos`).
pub const OUR_OUT_DIR: &str = "protos/src/generated";
/// Where the full descriptor set goes: the trace processor's generated
/// directory (the command line reads it through the trace processor).
pub const DESCRIPTOR_OUT_DIR: &str = WINSCOPE_DESCRIPTOR_OUT_DIR;
/// The descriptor set's file name in [`DESCRIPTOR_OUT_DIR`].
pub const DESCRIPTOR_FILE: &str = "perfetto_descriptor.bin";
/// Where the trace processor's Winscope descriptor set goes: the schema its
/// proto-to-args flattener walks Android's window-system packets with.
pub const WINSCOPE_DESCRIPTOR_OUT_DIR: &str = "tracing-core/trace-processor/src/generated";
/// Our declarations of the Winscope fields newer than [`UPSTREAM_VERSION`],
/// merged into the Winscope descriptor set, relative to the workspace root.
pub const WINSCOPE_NEWER_PROTO_DIR: &str = "protos/winscope_newer";
/// The Winscope descriptor set's file name in [`WINSCOPE_DESCRIPTOR_OUT_DIR`].
pub const WINSCOPE_DESCRIPTOR_FILE: &str = "winscope_descriptor.bin";
/// The upstream file whose imports make the Winscope descriptor set
/// (SurfaceFlinger, WindowManager, shell transitions, ProtoLog, ViewCapture,
/// input method and input event packets).
pub const WINSCOPE_DESCRIPTOR_ROOTS: &[&str] = &["protos/perfetto/trace/android/winscope.proto"];
/// The TrackEvent descriptor set's file name in [`WINSCOPE_DESCRIPTOR_OUT_DIR`]
/// (the trace processor's generated directory).
pub const TRACK_EVENT_DESCRIPTOR_FILE: &str = "track_event_descriptor.bin";
/// The upstream files whose imports make the TrackEvent descriptor set: the
/// schema the trace processor reflects TrackEvent's typed fields and
/// Chrome's extensions of it (`ChromeTrackEvent`) into args with, the two
/// sets upstream's TrackEvent importer registers.
pub const TRACK_EVENT_DESCRIPTOR_ROOTS: &[&str] = &[
    "protos/perfetto/trace/track_event/track_event.proto",
    "protos/third_party/chromium/chrome_track_event.proto",
];

/// Upstream files (relative to the crate root) generated as protozero
/// writers and decoders in `zerotrace-protos`, with what they import: the
/// probes' configs and packets, the perf profiling packets, pprof.
pub const UPSTREAM_FILES: &[&str] = &[
    "protos/perfetto/common/sys_stats_counters.proto",
    "protos/perfetto/trace/ps/process_tree.proto",
    "protos/perfetto/trace/ps/process_stats.proto",
    "protos/perfetto/trace/sys_stats/sys_stats.proto",
    "protos/perfetto/trace/system_info/cpu_info.proto",
    "protos/perfetto/config/process_stats/process_stats_config.proto",
    "protos/perfetto/config/sys_stats/sys_stats_config.proto",
    "protos/perfetto/config/ftrace/ftrace_config.proto",
    "protos/perfetto/trace/ftrace/ftrace_stats.proto",
    "protos/perfetto/trace/ftrace/ftrace_event_bundle.proto",
    "protos/perfetto/config/profiling/perf_event_config.proto",
    "protos/perfetto/trace/profiling/profile_packet.proto",
    "protos/third_party/pprof/profile.proto",
];

/// The `FtraceEvent` fields the generated code keeps: the common ones, the
/// events they translate into typed messages (upstream names each field
/// after the kernel event) and the generic event. The bundle's import of
/// `ftrace_event.proto` would otherwise bring all of upstream's events.
pub const FTRACE_EVENTS: &[&str] = &[
    "timestamp",
    "pid",
    "common_flags",
    "generic",
    "print",
    "sched_switch",
    "sched_waking",
    "sched_wakeup",
    "sched_wakeup_new",
    "sched_process_fork",
    "sched_process_exit",
    "sched_process_free",
    "sched_process_exec",
    "sched_process_hang",
    "sched_process_wait",
    "task_newtask",
    "task_rename",
    "cpu_frequency",
    "cpu_idle",
    "sys_enter",
    "sys_exit",
    "irq_handler_entry",
    "irq_handler_exit",
    "softirq_entry",
    "softirq_exit",
    "softirq_raise",
    "workqueue_execute_start",
    "workqueue_execute_end",
    "workqueue_activate_work",
    "workqueue_queue_work",
];

/// Field numbers of an upstream message that zerotrace names without
/// generating the message from upstream (its file imports most of
/// Perfetto; our own, smaller declaration may lack these fields).
#[derive(Debug, Clone, Copy)]
pub struct FieldTable {
    /// The upstream file declaring the message.
    pub file: &'static str,
    /// The message.
    pub message: &'static str,
    /// The Rust module the constants go in.
    pub module: &'static str,
    /// (constant, upstream field name).
    pub fields: &'static [(&'static str, &'static str)],
}

/// The field-number tables emitted in `upstream_tables.rs` beside the
/// generated code.
pub const FIELD_TABLES: &[FieldTable] = &[
    FieldTable {
        file: "protos/perfetto/trace/trace_packet.proto",
        message: "TracePacket",
        module: "packet_field",
        fields: &[
            ("TIMESTAMP", "timestamp"),
            ("TRUSTED_PACKET_SEQUENCE_ID", "trusted_packet_sequence_id"),
            ("PROCESS_TREE", "process_tree"),
            ("PROCESS_STATS", "process_stats"),
            ("SYS_STATS", "sys_stats"),
            ("CPU_INFO", "cpu_info"),
            ("FTRACE_EVENTS", "ftrace_events"),
            ("FTRACE_STATS", "ftrace_stats"),
            ("INTERNED_DATA", "interned_data"),
            ("SEQUENCE_FLAGS", "sequence_flags"),
            ("PERF_SAMPLE", "perf_sample"),
            ("TRACE_PACKET_DEFAULTS", "trace_packet_defaults"),
            ("MODULE_SYMBOLS", "module_symbols"),
            ("TIMESTAMP_CLOCK_ID", "timestamp_clock_id"),
        ],
    },
    FieldTable {
        file: "protos/perfetto/config/data_source_config.proto",
        message: "DataSourceConfig",
        module: "data_source_field",
        fields: &[
            ("NAME", "name"),
            ("FTRACE_CONFIG", "ftrace_config"),
            ("PROCESS_STATS_CONFIG", "process_stats_config"),
            ("SYS_STATS_CONFIG", "sys_stats_config"),
            ("PERF_EVENT_CONFIG", "perf_event_config"),
        ],
    },
    FieldTable {
        file: "protos/perfetto/trace/interned_data/interned_data.proto",
        message: "InternedData",
        module: "interned_data_field",
        fields: &[
            ("KERNEL_SYMBOLS", "kernel_symbols"),
            ("BUILD_IDS", "build_ids"),
            ("MAPPING_PATHS", "mapping_paths"),
            ("FUNCTION_NAMES", "function_names"),
            ("MAPPINGS", "mappings"),
            ("FRAMES", "frames"),
            ("CALLSTACKS", "callstacks"),
        ],
    },
    FieldTable {
        file: "protos/perfetto/trace/trace_packet_defaults.proto",
        message: "TracePacketDefaults",
        module: "packet_defaults_field",
        fields: &[
            ("TIMESTAMP_CLOCK_ID", "timestamp_clock_id"),
            ("PERF_SAMPLE_DEFAULTS", "perf_sample_defaults"),
        ],
    },
    FieldTable {
        file: "protos/perfetto/trace/profiling/profile_common.proto",
        message: "InternedString",
        module: "interned_string_field",
        fields: &[("IID", "iid"), ("STR", "str")],
    },
];

/// The upstream roots of the command's descriptor set: every config
/// (`TraceConfig` and the data source configs it imports), every trace
/// packet, and the service state `zerotrace query` prints.
pub const DESCRIPTOR_ROOTS: &[&str] = &[
    "protos/perfetto/config/trace_config.proto",
    "protos/perfetto/trace/trace.proto",
    "protos/perfetto/common/tracing_service_state.proto",
];

/// Why the pipeline could not run.
#[derive(Debug, thiserror::Error)]
pub enum PipelineError {
    /// The generator refused a schema or could not read or write a file.
    #[error(transparent)]
    Codegen(#[from] CodegenError),
    /// The upstream crate's sources could not be found.
    #[error("locating {UPSTREAM_CRATE} {UPSTREAM_VERSION}: {0}")]
    Locate(#[from] zerotrace_crate_source::LocateError),
    /// Upstream's schema lacks something this manifest names.
    #[error("upstream schema: {0}")]
    Upstream(String),
    /// `protoc` failed or could not be run.
    #[error("protoc: {0}")]
    Protoc(String),
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What failed.
        source: std::io::Error,
    },
}

/// One output directory and the files the run made for it.
#[derive(Debug)]
pub struct Output {
    /// The directory, relative to the workspace root.
    pub dir: &'static str,
    /// Its files, relative to `dir`.
    pub generated: Generated,
}

/// Everything one run makes.
#[derive(Debug)]
pub struct Outputs {
    /// Per output directory.
    pub outputs: Vec<Output>,
}

/// Runs the generator over both sources: our schemas from `root` (the
/// workspace root), upstream's from [`upstream_root`]. With `protoc`, the
/// schemas are parsed by Google's `protoc` instead of the pure-Rust front
/// end (the generated Rust must be the same; the command's descriptor set
/// is always `protoc`'s).
pub fn generate(root: &Path, protoc: bool) -> Result<Outputs, PipelineError> {
    let upstream = upstream_root()?;
    Ok(Outputs {
        outputs: vec![
            Output {
                dir: OUR_OUT_DIR,
                generated: protos_out::generate(&root.join(OUR_PROTO_DIR), &upstream, protoc)?,
            },
            Output {
                dir: WINSCOPE_DESCRIPTOR_OUT_DIR,
                generated: {
                    // One directory, so one output: the full set beside the
                    // Winscope and TrackEvent sets.
                    let mut sets = descriptor::generate_trace_processor(
                        &upstream,
                        &root.join(WINSCOPE_NEWER_PROTO_DIR),
                    )?;
                    sets.files
                        .extend(descriptor::generate(&upstream, &root.join(OUR_PROTO_DIR))?.files);
                    sets
                },
            },
        ],
    })
}

impl Outputs {
    /// Files (relative to the workspace root) that are missing under `root`
    /// or differ from what the run made.
    pub fn stale(&self, root: &Path) -> Vec<PathBuf> {
        self.outputs
            .iter()
            .flat_map(|o| {
                o.generated
                    .stale_in(root.join(o.dir))
                    .into_iter()
                    .map(|p| Path::new(o.dir).join(p))
            })
            .collect()
    }

    /// Files (relative to the workspace root) in the output directories that
    /// the run did not make (left over from removed schemas), sorted.
    pub fn obsolete(&self, root: &Path) -> Result<Vec<PathBuf>, PipelineError> {
        let mut out = Vec::new();
        for o in &self.outputs {
            for p in extra_files(&root.join(o.dir), &o.generated)? {
                out.push(Path::new(o.dir).join(p));
            }
        }
        out.sort();
        Ok(out)
    }

    /// Writes every output under `root` and removes obsolete files; returns
    /// (files rewritten, files removed), relative to `root`.
    pub fn write(&self, root: &Path) -> Result<(Vec<PathBuf>, Vec<PathBuf>), PipelineError> {
        let obsolete = self.obsolete(root)?;
        let mut written = Vec::new();
        for o in &self.outputs {
            for p in o.generated.write_to(root.join(o.dir))? {
                written.push(Path::new(o.dir).join(p));
            }
        }
        for p in &obsolete {
            let path = root.join(p);
            std::fs::remove_file(&path).map_err(|source| PipelineError::Io { path, source })?;
        }
        Ok((written, obsolete))
    }

    /// How many files the run made.
    pub fn len(&self) -> usize {
        self.outputs.iter().map(|o| o.generated.files.len()).sum()
    }

    /// Whether the run made no file (never, for a real workspace).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The front end that parses the schemas: Google's `protoc`, or the
/// pure-Rust one.
pub(crate) fn front_end(protoc: bool) -> protozero_codegen::FrontEnd {
    if protoc {
        protozero_codegen::FrontEnd::Protoc(None)
    } else {
        protozero_codegen::FrontEnd::Pure
    }
}

/// Whether the workspace's generated proto enums and oneof case enums are
/// `#[non_exhaustive]`: they are not. `protozero-codegen` marks them so by
/// default, for users whose schema grows apart from the code matching on
/// it; here the schemas are regenerated and built together with every
/// crate that reads them, and an exhaustive `match` is a check worth
/// keeping: the prost mirror tests (`protos/prost-check/tests/mirror`)
/// match each oneof member by member so that a member added upstream and
/// not mirrored fails to compile. Marking them would turn those 18 matches
/// (16 `match`es and 2 irrefutable closure patterns) into wildcard arms
/// that hide exactly that.
pub(crate) const NON_EXHAUSTIVE_ENUMS: bool = false;

/// Files under `dir` that `generated` does not contain, relative to `dir`,
/// sorted.
fn extra_files(dir: &Path, generated: &Generated) -> Result<Vec<PathBuf>, PipelineError> {
    let wanted: BTreeSet<&Path> = generated.files.iter().map(|f| f.path.as_path()).collect();
    let mut extra = Vec::new();
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        let abs = dir.join(&rel);
        let entries = match std::fs::read_dir(&abs) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(source) => return Err(PipelineError::Io { path: abs, source }),
        };
        for entry in entries {
            let entry = entry.map_err(|source| PipelineError::Io {
                path: abs.clone(),
                source,
            })?;
            let rel_child = rel.join(entry.file_name());
            if entry.path().is_dir() {
                stack.push(rel_child);
            } else if !wanted.contains(rel_child.as_path()) {
                extra.push(rel_child);
            }
        }
    }
    extra.sort();
    Ok(extra)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leftover_files_are_found() {
        let dir = tempfile::tempdir().unwrap();
        let generated = Generated {
            files: vec![protozero_codegen::GeneratedFile {
                path: PathBuf::from("a/keep.rs"),
                contents: b"x".to_vec(),
            }],
        };
        std::fs::create_dir_all(dir.path().join("a/b")).unwrap();
        std::fs::write(dir.path().join("a/keep.rs"), "x").unwrap();
        std::fs::write(dir.path().join("a/b/old.rs"), "y").unwrap();
        assert_eq!(
            extra_files(dir.path(), &generated).unwrap(),
            [PathBuf::from("a/b/old.rs")]
        );
        assert!(
            extra_files(&dir.path().join("missing"), &generated)
                .unwrap()
                .is_empty()
        );
    }

    /// Every upstream file the manifest names exists in the pinned crate.
    #[test]
    fn the_manifest_names_upstream_files_that_exist() {
        let root = upstream_root().unwrap();
        let named = UPSTREAM_FILES
            .iter()
            .chain(DESCRIPTOR_ROOTS)
            .copied()
            .chain(FIELD_TABLES.iter().map(|t| t.file));
        for f in named {
            assert!(root.join(f).is_file(), "{f} is not in {}", root.display());
        }
    }
}

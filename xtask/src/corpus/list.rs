//! The public schema sets `cargo xtask upstream-codegen` runs over, with the
//! files each one skips and why.

use super::{Corpus, Source};

/// Every corpus, in run order.
pub const CORPORA: &[Corpus] = &[PERFETTO, PROTOBUF];

/// Perfetto's complete upstream schema set, as shipped by the
/// `perfetto_protos` crate (pinned by `tracing-core/interop`).
///
/// Perfetto ships some files that re-declare messages declared elsewhere
/// in the same package (amalgamations for single-file consumers, and
/// workarounds for other generators); generating them next to the
/// originals would define every such message twice, so they are skipped.
pub const PERFETTO: Corpus = Corpus {
    name: "perfetto",
    title: "Perfetto's upstream protos (crate perfetto_protos 0.51.1)",
    source: Source::Crate {
        manifest: "tracing-core/interop/Cargo.toml",
        package: "perfetto_protos",
    },
    includes: &[""],
    inputs: &["protos"],
    with_protoc_include: false,
    protoc: false,
    excludes: &[
        (
            "protos/perfetto/config/perfetto_config.proto",
            "amalgamation: re-declares every config message",
        ),
        (
            "protos/perfetto/trace/perfetto_trace.proto",
            "amalgamation: re-declares every trace message",
        ),
        (
            "protos/perfetto/metrics/perfetto_merged_metrics.proto",
            "amalgamation: re-declares every metrics message",
        ),
        (
            "protos/perfetto/config/system_info/system_info_config.proto",
            "SystemInfoConfig is declared in data_source_config.proto (upstream workaround)",
        ),
        (
            "protos/perfetto/trace/ftrace/kfree.proto",
            "stale copy: KfreeFtraceEvent is declared in kmem.proto, which ftrace_event.proto imports",
        ),
        (
            "protos/perfetto/trace/ftrace/kmalloc.proto",
            "stale copy: KmallocFtraceEvent is declared in kmem.proto, which ftrace_event.proto imports",
        ),
        (
            "protos/perfetto/trace/ftrace/print.proto",
            "stale copy: PrintFtraceEvent is declared in ftrace.proto, which ftrace_event.proto imports",
        ),
    ],
};

/// Google's well-known types, `descriptor.proto`, the compiler plugin
/// protocol and the editions feature sets, as shipped with `protoc` by the
/// `protoc-bin-vendored` crate.
pub const PROTOBUF: Corpus = Corpus {
    name: "protobuf",
    title: "protobuf well-known types, descriptor.proto, plugin.proto, feature sets (crate protoc-bin-vendored 3.3.0)",
    source: Source::ProtocInclude,
    includes: &[""],
    inputs: &["google"],
    with_protoc_include: false,
    protoc: true,
    excludes: &[],
};

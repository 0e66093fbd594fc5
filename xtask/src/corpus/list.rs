//! The public schema sets `cargo xtask upstream-codegen` runs over, with the
//! files each one skips and why.

use super::{Corpus, Source};

/// Every corpus, in run order.
pub const CORPORA: &[Corpus] = &[
    PERFETTO,
    PROTOBUF,
    PROTOBUF_TESTS,
    GOOGLEAPIS,
    OPENTELEMETRY,
    ENVOY,
];

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
    excludes: &[],
};

/// The protobuf project's own test schemas (shipped in the sources of the
/// `protobuf-src` crate): groups, extensions, message sets, maps, every
/// scalar, editions, proto3 `optional`, keyword-named fields.
pub const PROTOBUF_TESTS: Corpus = Corpus {
    name: "protobuf-tests",
    title: "protobuf's unittest schemas (crate protobuf-src 2.1.1+27.1)",
    source: Source::Crate {
        manifest: "xtask/Cargo.toml",
        package: "protobuf-src",
    },
    includes: &["protobuf/src"],
    inputs: &["protobuf/src/google/protobuf"],
    with_protoc_include: false,
    excludes: &[
        (
            "protobuf/src/google/protobuf/unittest.proto",
            "rejected by the vendored protoc (newer than these 27.1 tests): `Extensions cannot be marked as unverified_lazy`",
        ),
        (
            "protobuf/src/google/protobuf/unittest_lite.proto",
            "rejected by the vendored protoc (newer than these 27.1 tests): `Extensions cannot be marked as unverified_lazy`",
        ),
        (
            "protobuf/src/google/protobuf/edition_unittest.proto",
            "rejected by the vendored protoc (newer than these 27.1 tests): `Extensions cannot be marked as unverified_lazy`",
        ),
        (
            "protobuf/src/google/protobuf/map_unittest.proto",
            "imports unittest.proto, which the vendored protoc rejects (unverified_lazy extension)",
        ),
        (
            "protobuf/src/google/protobuf/map_lite_unittest.proto",
            "imports unittest_lite.proto, which the vendored protoc rejects (unverified_lazy extension)",
        ),
        (
            "protobuf/src/google/protobuf/unittest_embed_optimize_for.proto",
            "imports unittest.proto, which the vendored protoc rejects (unverified_lazy extension)",
        ),
        (
            "protobuf/src/google/protobuf/unittest_lite_imports_nonlite.proto",
            "imports unittest.proto, which the vendored protoc rejects (unverified_lazy extension)",
        ),
        (
            "protobuf/src/google/protobuf/unittest_no_field_presence.proto",
            "imports unittest.proto, which the vendored protoc rejects (unverified_lazy extension)",
        ),
        (
            "protobuf/src/google/protobuf/unittest_optimize_for.proto",
            "imports unittest.proto, which the vendored protoc rejects (unverified_lazy extension)",
        ),
        (
            "protobuf/src/google/protobuf/util/json_format_proto3.proto",
            "imports unittest.proto, which the vendored protoc rejects (unverified_lazy extension)",
        ),
        (
            "protobuf/src/google/protobuf/unittest_features.proto",
            "rejected by the vendored protoc: a removed feature value without a removal error",
        ),
        (
            "protobuf/src/google/protobuf/compiler/ruby/ruby_generated_code.proto",
            "imports a file by a path relative to its own directory, not the include root",
        ),
        (
            "protobuf/src/google/protobuf/compiler/ruby/ruby_generated_pkg_explicit.proto",
            "re-declares the messages of ruby_generated_pkg_implicit.proto (alternative package spelling)",
        ),
        (
            "protobuf/src/google/protobuf/compiler/ruby/ruby_generated_code_proto2.proto",
            "imports a file by a path relative to its own directory, not the include root",
        ),
    ],
};

/// Google's API common protos, from the PyPI distribution
/// `googleapis-common-protos` (annotations, field behaviour, resource
/// names, long-running operations, `google.rpc` status, `google.type`).
pub const GOOGLEAPIS: Corpus = Corpus {
    name: "googleapis",
    title: "googleapis common protos (PyPI googleapis-common-protos 1.76.0)",
    source: Source::Pypi {
        package: "googleapis-common-protos",
        version: "1.76.0",
    },
    includes: &[""],
    inputs: &["google"],
    with_protoc_include: true,
    excludes: &[],
};

/// The OpenTelemetry protocol (traces, metrics, logs, collector services),
/// as shipped in the sources of the `opentelemetry-proto` crate 0.1.0 (its
/// later versions no longer ship the `.proto` files).
pub const OPENTELEMETRY: Corpus = Corpus {
    name: "opentelemetry",
    title: "OpenTelemetry protocol (crate opentelemetry-proto 0.1.0)",
    source: Source::Crate {
        manifest: "xtask/Cargo.toml",
        package: "opentelemetry-proto",
    },
    includes: &["src/proto/opentelemetry-proto"],
    inputs: &["src/proto/opentelemetry-proto"],
    with_protoc_include: true,
    excludes: &[],
};

/// Envoy's complete data-plane API with everything it imports (xDS,
/// udpa, protoc-gen-validate, googleapis, CEL, OpenTelemetry, Prometheus
/// client model, ratelimit), as shipped by the `envoy-types` crate.
pub const ENVOY: Corpus = Corpus {
    name: "envoy",
    title: "Envoy data-plane API and dependencies (crate envoy-types 0.7.7)",
    source: Source::Crate {
        manifest: "xtask/Cargo.toml",
        package: "envoy-types",
    },
    includes: &[
        "proto/data-plane-api",
        "proto/xds",
        "proto/googleapis",
        "proto/protoc-gen-validate",
        "proto/opentelemetry-proto",
        "proto/cel-spec/proto",
        "proto/client_model",
        "proto/ratelimit",
    ],
    inputs: &["proto"],
    with_protoc_include: true,
    excludes: &[],
};

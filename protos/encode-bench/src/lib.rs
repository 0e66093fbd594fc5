//! The protozero writer's benchmark (`benches/encode.rs`): our writers next
//! to prost, a hand-rolled floor, Perfetto's move-based compaction and the
//! writers generated from zerotrace-protos' Perfetto schemas, in one run.
//! It stands with `protos/` because that last row needs the generated
//! writers, and `protozero/` depends on nothing above it. The library is
//! empty: the package is its bench.

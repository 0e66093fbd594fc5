//! Nothing but a home for the loom models in `tests/loom_chunks.rs` (the
//! chunk state machine of the shared memory buffer) and
//! `tests/loom_heap.rs` (the heap profiler's hook: its spin lock, record
//! queue and free filter, sampling epochs) and `tests/loom_ring.rs` (the
//! ring a preloaded client shares with its helper), model-checked under
//! `--cfg zerotrace_loom` (`cargo test -p zerotrace-loom --release`, with
//! `RUSTFLAGS="--cfg zerotrace_loom"`). Kept apart from zerotrace-core's
//! tests so that this release build compiles the library alone.

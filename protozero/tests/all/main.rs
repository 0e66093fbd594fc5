//! protozero's integration tests, one module per former `tests/<name>.rs`,
//! in one test binary: the crate and its dev-dependencies are compiled and
//! linked once for all of them rather than once per file (linking a dozen
//! binaries was most of what `cargo test` and `cargo clippy --all-targets`
//! spent on these tests). A new test file goes in this directory with its
//! `mod` line below (`cargo xtask`'s tests check that every file here is
//! one). A module's tests run alone with `cargo test -p protozero --test
//! all -- <module>::`.
//!
//! No test here needs a process to itself: the counting allocator below
//! counts per thread, so `no_alloc`'s counts see only their own thread
//! however many tests run beside them.

/// Counts each thread's allocations for `no_alloc` (forwarding everything
/// to the system allocator, so the other modules only pay for the count).
#[global_allocator]
static GLOBAL: zerotrace_test_alloc::CountingAlloc = zerotrace_test_alloc::CountingAlloc;

mod common;

mod abandoned_patches;
mod compile_fail;
mod groups;
mod hostile_decode;
mod known_answers;
mod large_offsets;
mod leaks_and_toggles;
mod no_alloc;
mod patches;
mod roundtrip_prost;
mod short_slots;
mod typed_decoder_model;

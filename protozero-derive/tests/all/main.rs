//! protozero-derive's integration tests, one module per former
//! `tests/<name>.rs`, in one test binary: the derives' users (protozero,
//! prost, the generated protos) are compiled and linked once for all of
//! them rather than once per file. A new test file goes in this directory
//! with its `mod` line below (`cargo xtask`'s tests check that every file
//! here is one). A module's tests run alone with `cargo test -p
//! protozero-derive --test all -- <module>::`.
//!
//! No test here needs a process to itself: the counting allocator below
//! counts per thread, so `no_alloc`'s counts see only their own thread
//! however many tests run beside them.

/// Counts each thread's allocations for `no_alloc` (forwarding everything
/// to the system allocator, so the other modules only pay for the count).
#[global_allocator]
static GLOBAL: zerotrace_test_alloc::CountingAlloc = zerotrace_test_alloc::CountingAlloc;

mod containers;
mod generated_writer_compat;
mod hostile_input;
mod lazy_repeated;
mod no_alloc;
mod prost_compat;
mod roundtrip;
mod ui;

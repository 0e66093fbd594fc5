//! cargo-fuzz binary for the `perf_unwind` target; the logic and its invariants
//! are `zerotrace_fuzz_logic::perf_unwind`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| zerotrace_fuzz_logic::perf_unwind(data));

//! cargo-fuzz binary for the `perf_records` target; the logic and its invariants
//! are `zerotrace_fuzz_logic::perf_records`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| zerotrace_fuzz_logic::perf_records(data));

//! cargo-fuzz binary for the `trace_file` target; the logic and its invariants
//! are `zerotrace_fuzz_logic::trace_file`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| zerotrace_fuzz_logic::trace_file(data));

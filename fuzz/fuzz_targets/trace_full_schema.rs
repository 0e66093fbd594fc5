//! cargo-fuzz binary for the `trace_full_schema` target; the logic and its
//! invariants are `zerotrace_fuzz_logic::trace_full_schema`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| zerotrace_fuzz_logic::trace_full_schema(data));

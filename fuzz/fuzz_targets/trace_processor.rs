//! cargo-fuzz binary for the `trace_processor` target; the logic and its
//! invariants are `zerotrace_fuzz_logic::trace_processor`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| zerotrace_fuzz_logic::trace_processor(data));

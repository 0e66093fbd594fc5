//! cargo-fuzz binary for the `json_trace` target; the logic and its
//! invariants are `zerotrace_fuzz_logic::json_trace`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| zerotrace_fuzz_logic::json_trace(data));

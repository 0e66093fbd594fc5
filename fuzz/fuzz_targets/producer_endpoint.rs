//! cargo-fuzz binary for the `producer_endpoint` target; the logic and its invariants
//! are `zerotrace_fuzz_logic::producer_endpoint`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| zerotrace_fuzz_logic::producer_endpoint(data));

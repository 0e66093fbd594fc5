//! cargo-fuzz binary for the `producer_port` target; the logic and its invariants
//! are `zerotrace_fuzz_logic::producer_port`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| zerotrace_fuzz_logic::producer_port(data));

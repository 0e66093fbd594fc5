//! cargo-fuzz binary for the `derive_decoders` target; the logic and its invariants
//! are `zerotrace_fuzz_logic::derive_decoders`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| zerotrace_fuzz_logic::derive_decoders(data));

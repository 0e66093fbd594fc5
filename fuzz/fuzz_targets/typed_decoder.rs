//! cargo-fuzz binary for the `typed_decoder` target; the logic and its invariants
//! are `zerotrace_fuzz_logic::typed_decoder`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| zerotrace_fuzz_logic::typed_decoder(data));

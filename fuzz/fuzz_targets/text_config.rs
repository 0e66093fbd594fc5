//! cargo-fuzz binary for the `text_config` target; the logic and its invariants
//! are `zerotrace_fuzz_logic::text_config`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| zerotrace_fuzz_logic::text_config(data));

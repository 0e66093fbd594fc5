//! cargo-fuzz binary for the `ftrace_page` target; the logic and its invariants
//! are `zerotrace_fuzz_logic::ftrace_page`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| zerotrace_fuzz_logic::ftrace_page(data));

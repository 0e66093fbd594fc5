//! cargo-fuzz binary for the `procfs` target; the logic and its invariants
//! are `zerotrace_fuzz_logic::procfs`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| zerotrace_fuzz_logic::procfs(data));

//! cargo-fuzz binary for the `chunk_fragments` target; the logic and its invariants
//! are `zerotrace_fuzz_logic::chunk_fragments`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| zerotrace_fuzz_logic::chunk_fragments(data));

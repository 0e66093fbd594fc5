//! cargo-fuzz binary for the `codegen_frontend` target; the logic and its invariants
//! are `zerotrace_fuzz_logic::codegen_frontend`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| zerotrace_fuzz_logic::codegen_frontend(data));

//! cargo-fuzz binary for the `commit_data_request` target; the logic and its invariants
//! are `zerotrace_fuzz_logic::commit_data_request`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| zerotrace_fuzz_logic::commit_data_request(data));

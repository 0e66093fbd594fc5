//! cargo-fuzz binary for the `other_formats` target; the logic and its
//! invariants are `zerotrace_fuzz_logic::other_formats`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| zerotrace_fuzz_logic::other_formats(data));

//! cargo-fuzz binary for the `systrace_text` target; the logic and its
//! invariants are `zerotrace_fuzz_logic::systrace_text`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| zerotrace_fuzz_logic::systrace_text(data));

//! cargo-fuzz binary for the `trace_processor_time` target; the logic and
//! its invariant are `zerotrace_fuzz_logic::trace_processor_time`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| zerotrace_fuzz_logic::trace_processor_time(data));

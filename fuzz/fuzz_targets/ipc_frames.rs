//! cargo-fuzz binary for the `ipc_frames` target; the logic and its invariants
//! are `zerotrace_fuzz_logic::ipc_frames`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| zerotrace_fuzz_logic::ipc_frames(data));

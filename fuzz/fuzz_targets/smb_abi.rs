//! cargo-fuzz binary for the `smb_abi` target; the logic and its invariants
//! are `zerotrace_fuzz_logic::smb_abi`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| zerotrace_fuzz_logic::smb_abi(data));

//! The Linux system call names by number, per architecture (a file each), as the
//! syscall tracker names `sys_enter`/`sys_exit` slices: `sys_` and the
//! kernel's name for the call. Generated from the kernel's UAPI headers
//! (`asm-generic/unistd.h` for arm64, `asm/unistd_64.h` and
//! `asm/unistd_32.h` for x86-64 and x86), with the calls numbered 451 to
//! 456 that newer kernels add on every architecture; arm64's 79 takes the
//! generic name `fstatat`. A hole is an empty string.

mod arm64;
mod x86;
mod x86_64;

pub use arm64::ARM64;
pub use x86::X86;
pub use x86_64::X86_64;

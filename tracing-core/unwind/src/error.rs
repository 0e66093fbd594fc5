//! Why an unwind stopped, in the terms a trace reader knows: Perfetto's
//! `Profiling.StackUnwindError` (`protos/perfetto/trace/profiling/
//! profile_packet.proto`), which a `PerfSample` carries in `unwind_error`,
//! and the name of the synthetic frame `traced_perf` appends below the
//! frames it did recover (`"ERROR " + NAME`, with no mapping, an empty
//! build id and `rel_pc` 0), so a profile shows where stacks broke.
//!
//! [`UnwindFailure`] is the detail behind a kind (which address, which
//! file), for logs and tests; only the kind reaches the trace.

use std::path::PathBuf;

use super::elf_module::ElfError;
use super::maps::MapsError;
use super::regs::RegsError;

/// `Profiling.StackUnwindError`, value for value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(i32)]
pub enum UnwindErrorKind {
    /// `UNWIND_ERROR_UNKNOWN`.
    Unknown = 0,
    /// `UNWIND_ERROR_NONE`: the stack was walked to its root.
    None = 1,
    /// `UNWIND_ERROR_MEMORY_INVALID`: a read fell outside the stack copy.
    MemoryInvalid = 2,
    /// `UNWIND_ERROR_UNWIND_INFO`: the unwind rules led nowhere sensible
    /// (the frame chain moved backwards, or an address overflowed).
    UnwindInfo = 3,
    /// `UNWIND_ERROR_UNSUPPORTED`: this architecture or register ABI.
    Unsupported = 4,
    /// `UNWIND_ERROR_INVALID_MAP`: a pc outside every mapping, even after
    /// `/proc/PID/maps` was read again.
    InvalidMap = 5,
    /// `UNWIND_ERROR_MAX_FRAMES_EXCEEDED`: [`MAX_FRAMES`] frames.
    ///
    /// [`MAX_FRAMES`]: super::MAX_FRAMES
    MaxFramesExceeded = 6,
    /// `UNWIND_ERROR_REPEATED_FRAME`: a step left pc and sp unchanged.
    RepeatedFrame = 7,
    /// `UNWIND_ERROR_INVALID_ELF`: the stack ended in a file mapping whose
    /// file could not be read as an ELF.
    InvalidElf = 8,
    /// `UNWIND_ERROR_SYSTEM_CALL`.
    SystemCall = 9,
    /// `UNWIND_ERROR_THREAD_TIMEOUT`.
    ThreadTimeout = 10,
    /// `UNWIND_ERROR_THREAD_DOES_NOT_EXIST`.
    ThreadDoesNotExist = 11,
    /// `UNWIND_ERROR_BAD_ARCH`.
    BadArch = 12,
    /// `UNWIND_ERROR_MAPS_PARSE`: `/proc/PID/maps` could not be read or
    /// parsed (the process may have exited).
    MapsParse = 13,
    /// `UNWIND_ERROR_INVALID_PARAMETER`: the sample itself is unusable (no
    /// user registers, as for a kernel thread).
    InvalidParameter = 14,
    /// `UNWIND_ERROR_PTRACE_CALL`.
    PtraceCall = 15,
}

impl UnwindErrorKind {
    /// The enum's value on the wire.
    pub fn proto_value(self) -> i32 {
        self as i32
    }

    /// Whether the stack was walked to its root.
    pub fn is_none(self) -> bool {
        self == UnwindErrorKind::None
    }

    /// The name `traced_perf` gives this error in its synthetic frame, after
    /// `"ERROR "` (note `MAX_FRAME_EXCEEDED`, singular, as upstream spells it).
    pub fn upstream_name(self) -> &'static str {
        match self {
            UnwindErrorKind::Unknown => "UNKNOWN",
            UnwindErrorKind::None => "NONE",
            UnwindErrorKind::MemoryInvalid => "MEMORY_INVALID",
            UnwindErrorKind::UnwindInfo => "UNWIND_INFO",
            UnwindErrorKind::Unsupported => "UNSUPPORTED",
            UnwindErrorKind::InvalidMap => "INVALID_MAP",
            UnwindErrorKind::MaxFramesExceeded => "MAX_FRAME_EXCEEDED",
            UnwindErrorKind::RepeatedFrame => "REPEATED_FRAME",
            UnwindErrorKind::InvalidElf => "INVALID_ELF",
            UnwindErrorKind::SystemCall => "SYSTEM_CALL",
            UnwindErrorKind::ThreadTimeout => "THREAD_TIMEOUT",
            UnwindErrorKind::ThreadDoesNotExist => "THREAD_DOES_NOT_EXIST",
            UnwindErrorKind::BadArch => "BAD_ARCH",
            UnwindErrorKind::MapsParse => "MAPS_PARSE",
            UnwindErrorKind::InvalidParameter => "INVALID_PARAMETER",
            UnwindErrorKind::PtraceCall => "PTRACE_CALL",
        }
    }

    /// The function name of the synthetic error frame: `"ERROR "` and
    /// [`upstream_name`](Self::upstream_name); `None` for a complete stack.
    pub fn error_frame_name(self) -> Option<&'static str> {
        Some(match self {
            UnwindErrorKind::None => return None,
            UnwindErrorKind::Unknown => "ERROR UNKNOWN",
            UnwindErrorKind::MemoryInvalid => "ERROR MEMORY_INVALID",
            UnwindErrorKind::UnwindInfo => "ERROR UNWIND_INFO",
            UnwindErrorKind::Unsupported => "ERROR UNSUPPORTED",
            UnwindErrorKind::InvalidMap => "ERROR INVALID_MAP",
            UnwindErrorKind::MaxFramesExceeded => "ERROR MAX_FRAME_EXCEEDED",
            UnwindErrorKind::RepeatedFrame => "ERROR REPEATED_FRAME",
            UnwindErrorKind::InvalidElf => "ERROR INVALID_ELF",
            UnwindErrorKind::SystemCall => "ERROR SYSTEM_CALL",
            UnwindErrorKind::ThreadTimeout => "ERROR THREAD_TIMEOUT",
            UnwindErrorKind::ThreadDoesNotExist => "ERROR THREAD_DOES_NOT_EXIST",
            UnwindErrorKind::BadArch => "ERROR BAD_ARCH",
            UnwindErrorKind::MapsParse => "ERROR MAPS_PARSE",
            UnwindErrorKind::InvalidParameter => "ERROR INVALID_PARAMETER",
            UnwindErrorKind::PtraceCall => "ERROR PTRACE_CALL",
        })
    }

    /// Every kind, in wire order (for stats tables).
    pub const ALL: [UnwindErrorKind; 16] = [
        UnwindErrorKind::Unknown,
        UnwindErrorKind::None,
        UnwindErrorKind::MemoryInvalid,
        UnwindErrorKind::UnwindInfo,
        UnwindErrorKind::Unsupported,
        UnwindErrorKind::InvalidMap,
        UnwindErrorKind::MaxFramesExceeded,
        UnwindErrorKind::RepeatedFrame,
        UnwindErrorKind::InvalidElf,
        UnwindErrorKind::SystemCall,
        UnwindErrorKind::ThreadTimeout,
        UnwindErrorKind::ThreadDoesNotExist,
        UnwindErrorKind::BadArch,
        UnwindErrorKind::MapsParse,
        UnwindErrorKind::InvalidParameter,
        UnwindErrorKind::PtraceCall,
    ];
}

/// What stopped an unwind early, with the detail behind its
/// [`UnwindErrorKind`].
#[derive(Debug, Clone, thiserror::Error)]
pub enum UnwindFailure {
    /// A read of 8 bytes at `addr` fell outside the stack copy.
    #[error("stack read at {addr:#x} outside the copied stack")]
    StackRead {
        /// The address read.
        addr: u64,
    },
    /// The pc is in no mapping of the process.
    #[error("pc {pc:#x} is in no mapping")]
    NoMapping {
        /// The pc.
        pc: u64,
    },
    /// The unwind stopped in a file mapping whose ELF did not load.
    #[error("stopped in {path}, which did not load: {error}")]
    BadElf {
        /// The mapping's path.
        path: PathBuf,
        /// Why it did not load.
        error: ElfError,
    },
    /// A frame pointer pointed at or below the current stack pointer, or
    /// misaligned, or an address computation overflowed.
    #[error("the frame chain is broken at sp {sp:#x}")]
    BrokenChain {
        /// The stack pointer of the last good frame.
        sp: u64,
    },
    /// A step left pc and sp where they were.
    #[error("repeated frame at pc {pc:#x} sp {sp:#x}")]
    Repeated {
        /// The pc.
        pc: u64,
        /// The stack pointer.
        sp: u64,
    },
    /// [`MAX_FRAMES`](super::MAX_FRAMES) frames were recovered and there
    /// were more.
    #[error("more than the frame limit")]
    TooManyFrames,
    /// `/proc/PID/maps` did not read or parse.
    #[error("maps: {0}")]
    Maps(#[from] MapsError),
    /// The sample's registers are unusable.
    #[error("registers: {0}")]
    Regs(#[from] RegsError),
    /// Unwinding is not built for this architecture.
    #[error("user-space unwinding is not supported on this architecture")]
    UnsupportedArch,
}

impl UnwindFailure {
    /// The wire kind of this failure.
    pub fn kind(&self) -> UnwindErrorKind {
        match self {
            UnwindFailure::StackRead { .. } => UnwindErrorKind::MemoryInvalid,
            UnwindFailure::NoMapping { .. } => UnwindErrorKind::InvalidMap,
            UnwindFailure::BadElf { .. } => UnwindErrorKind::InvalidElf,
            UnwindFailure::BrokenChain { .. } => UnwindErrorKind::UnwindInfo,
            UnwindFailure::Repeated { .. } => UnwindErrorKind::RepeatedFrame,
            UnwindFailure::TooManyFrames => UnwindErrorKind::MaxFramesExceeded,
            UnwindFailure::Maps(_) => UnwindErrorKind::MapsParse,
            UnwindFailure::Regs(e) => e.kind(),
            UnwindFailure::UnsupportedArch => UnwindErrorKind::Unsupported,
        }
    }
}

impl RegsError {
    /// The wire kind for a sample that could not be unwound for this reason.
    pub fn kind(self) -> UnwindErrorKind {
        match self {
            RegsError::NoUserRegs | RegsError::MissingRegister(_) | RegsError::Truncated { .. } => {
                UnwindErrorKind::InvalidParameter
            }
            RegsError::UnsupportedAbi(_) => UnwindErrorKind::Unsupported,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_and_names_follow_upstream() {
        for (i, k) in UnwindErrorKind::ALL.iter().enumerate() {
            assert_eq!(k.proto_value(), i as i32);
            match k.error_frame_name() {
                None => assert!(k.is_none()),
                Some(n) => assert_eq!(n, format!("ERROR {}", k.upstream_name())),
            }
        }
        assert_eq!(
            UnwindErrorKind::MaxFramesExceeded.error_frame_name(),
            Some("ERROR MAX_FRAME_EXCEEDED")
        );
    }
}

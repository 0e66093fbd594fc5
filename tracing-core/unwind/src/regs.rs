//! The sampled thread's user registers, from a `PERF_SAMPLE_REGS_USER`
//! payload: a `u64` ABI word, then one `u64` per bit set in the event's
//! `sample_regs_user` mask, in bit order. The unwinder needs three of them
//! on x86_64 (the kernel's `arch/x86/include/uapi/asm/perf_regs.h`:
//! `PERF_REG_X86_BP` = 6, `PERF_REG_X86_SP` = 7, `PERF_REG_X86_IP` = 8), so
//! [`X86_64_UNWIND_REGS_MASK`] is what the sampler must ask for at least.
//! Every index is bounds-checked against the values given.

/// `PERF_REG_X86_BP`: bit of `rbp` in `sample_regs_user`.
pub const PERF_REG_X86_BP: u32 = 6;
/// `PERF_REG_X86_SP`: bit of `rsp`.
pub const PERF_REG_X86_SP: u32 = 7;
/// `PERF_REG_X86_IP`: bit of `rip`.
pub const PERF_REG_X86_IP: u32 = 8;

/// The `sample_regs_user` bits the x86_64 unwinder reads: bp, sp and ip.
pub const X86_64_UNWIND_REGS_MASK: u64 =
    (1 << PERF_REG_X86_BP) | (1 << PERF_REG_X86_SP) | (1 << PERF_REG_X86_IP);

/// `PERF_SAMPLE_REGS_ABI_NONE`: no user registers (a kernel thread).
pub const PERF_SAMPLE_REGS_ABI_NONE: u64 = 0;
/// `PERF_SAMPLE_REGS_ABI_32`: a 32-bit process.
pub const PERF_SAMPLE_REGS_ABI_32: u64 = 1;
/// `PERF_SAMPLE_REGS_ABI_64`: a 64-bit process.
pub const PERF_SAMPLE_REGS_ABI_64: u64 = 2;

/// Why a register payload cannot be unwound.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum RegsError {
    /// ABI `NONE`: the sample has no user registers (a kernel thread).
    #[error("the sample has no user registers")]
    NoUserRegs,
    /// A 32-bit process, or an ABI word the kernel does not define.
    #[error("register ABI {0} is not unwound")]
    UnsupportedAbi(u64),
    /// The mask lacks a register the unwinder needs.
    #[error("sample_regs_user lacks register bit {0}")]
    MissingRegister(u32),
    /// Fewer values than bits set in the mask.
    #[error("{got} register values for a mask of {want}")]
    Truncated {
        /// Values given.
        got: usize,
        /// Bits set in the mask.
        want: usize,
    },
}

/// The registers the unwinder starts from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct UserRegs {
    /// The instruction pointer (`rip`).
    pub ip: u64,
    /// The stack pointer (`rsp`); the stack copy starts here.
    pub sp: u64,
    /// The frame pointer (`rbp`).
    pub bp: u64,
}

impl UserRegs {
    /// Reads ip, sp and bp out of a `PERF_SAMPLE_REGS_USER` payload: its
    /// `abi` word, the event's `mask`, and the values that followed (one per
    /// bit set, lowest bit first).
    pub fn from_perf_x86_64(abi: u64, mask: u64, values: &[u64]) -> Result<Self, RegsError> {
        match abi {
            PERF_SAMPLE_REGS_ABI_64 => {}
            PERF_SAMPLE_REGS_ABI_NONE => return Err(RegsError::NoUserRegs),
            other => return Err(RegsError::UnsupportedAbi(other)),
        }
        let want = mask.count_ones() as usize;
        if values.len() < want {
            return Err(RegsError::Truncated {
                got: values.len(),
                want,
            });
        }
        let get = |bit: u32| -> Result<u64, RegsError> {
            if mask & (1u64 << bit) == 0 {
                return Err(RegsError::MissingRegister(bit));
            }
            // The value's index is the number of set bits below `bit`.
            let index = (mask & ((1u64 << bit) - 1)).count_ones() as usize;
            values.get(index).copied().ok_or(RegsError::Truncated {
                got: values.len(),
                want,
            })
        };
        Ok(UserRegs {
            ip: get(PERF_REG_X86_IP)?,
            sp: get(PERF_REG_X86_SP)?,
            bp: get(PERF_REG_X86_BP)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_follow_mask_order() {
        // ax, bp, sp, ip, r15: bp is the second value.
        let mask = 1 | X86_64_UNWIND_REGS_MASK | (1 << 23);
        let regs = UserRegs::from_perf_x86_64(2, mask, &[10, 20, 30, 40, 50]);
        assert_eq!(
            regs,
            Ok(UserRegs {
                ip: 40,
                sp: 30,
                bp: 20
            })
        );
    }

    #[test]
    fn hostile_payloads_are_typed_errors() {
        let m = X86_64_UNWIND_REGS_MASK;
        assert_eq!(
            UserRegs::from_perf_x86_64(0, m, &[]),
            Err(RegsError::NoUserRegs)
        );
        assert_eq!(
            UserRegs::from_perf_x86_64(1, m, &[1, 2, 3]),
            Err(RegsError::UnsupportedAbi(1))
        );
        assert_eq!(
            UserRegs::from_perf_x86_64(2, m, &[1, 2]),
            Err(RegsError::Truncated { got: 2, want: 3 })
        );
        assert_eq!(
            UserRegs::from_perf_x86_64(2, 0b11, &[1, 2]),
            Err(RegsError::MissingRegister(PERF_REG_X86_IP))
        );
        assert_eq!(
            UserRegs::from_perf_x86_64(2, u64::MAX, &[0; 3]),
            Err(RegsError::Truncated { got: 3, want: 64 })
        );
    }
}

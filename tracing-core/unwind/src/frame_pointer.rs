//! `UNWIND_FRAME_POINTER`: walking the `rbp` chain alone. In code built
//! with frame pointers each frame starts with `push rbp; mov rbp, rsp`, so
//! `[rbp]` holds the caller's `rbp` and `[rbp + 8]` the return address. The
//! walk reads only the stack copy, and checks each frame pointer the way
//! `traced_perf`'s walker does (above the current sp, 16-byte aligned, its
//! two words inside the copy) before following it; a frame pointer equal
//! to the sp is accepted (a caller without locals), where upstream stops.
//!
//! Where `traced_perf` ends the walk silently on a frame pointer outside
//! the copy, this one says so (`MEMORY_INVALID`), and a pointer that moves
//! backwards or is misaligned is `UNWIND_INFO`: a zero frame pointer or a
//! zero return address is the only clean end. The pcs it gives are not yet
//! checked against mappings; the caller stops at the first unmapped one.

use super::error::UnwindFailure;
use super::regs::UserRegs;
use super::stack::StackCopy;

/// The pcs of the chain (the sampled ip first, then return addresses) and
/// what stopped it early, if anything.
pub fn walk(
    regs: UserRegs,
    stack: &StackCopy<'_>,
    max_frames: usize,
) -> (Vec<u64>, Option<UnwindFailure>) {
    let mut pcs = vec![regs.ip];
    let (mut fp, mut sp) = (regs.bp, regs.sp);
    loop {
        if fp == 0 {
            return (pcs, None);
        }
        if fp < sp || fp & 0xf != 0 {
            return (pcs, Some(UnwindFailure::BrokenChain { sp }));
        }
        let Some(ra_at) = fp.checked_add(8) else {
            return (pcs, Some(UnwindFailure::BrokenChain { sp }));
        };
        let next_fp = match stack.read_u64(fp) {
            Ok(v) => v,
            Err(e) => return (pcs, Some(UnwindFailure::StackRead { addr: e.addr })),
        };
        let ra = match stack.read_u64(ra_at) {
            Ok(v) => v,
            Err(e) => return (pcs, Some(UnwindFailure::StackRead { addr: e.addr })),
        };
        if ra == 0 {
            return (pcs, None);
        }
        if pcs.len() >= max_frames {
            return (pcs, Some(UnwindFailure::TooManyFrames));
        }
        pcs.push(ra);
        sp = fp + 16; // cannot overflow: fp + 8 + 8 bytes were read.
        fp = next_fp;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::UnwindErrorKind;
    use proptest::prelude::*;

    const SP: u64 = 0x7ff0_0000;

    /// A stack of `words` at SP.
    fn stack(words: &[u64]) -> Vec<u8> {
        words.iter().flat_map(|w| w.to_le_bytes()).collect()
    }

    #[test]
    fn follows_a_synthetic_chain_to_its_root() {
        // Frames at SP+0x10 and SP+0x30; the outer one's saved rbp is 0.
        let mut w = vec![0u64; 10];
        w[2] = SP + 0x30; // [fp0] = caller's fp
        w[3] = 0x401111; // [fp0+8] = return address
        w[6] = 0; // [fp1] = 0: root
        w[7] = 0x402222;
        let bytes = stack(&w);
        let s = StackCopy::new(SP, &bytes);
        let regs = UserRegs {
            ip: 0x400000,
            sp: SP,
            bp: SP + 0x10,
        };
        let (pcs, err) = walk(regs, &s, 1000);
        assert_eq!(pcs, vec![0x400000, 0x401111, 0x402222]);
        assert!(err.is_none());
    }

    #[test]
    fn truncated_and_broken_chains_say_why() {
        let mut w = vec![0u64; 4];
        w[2] = SP + 0x1000; // points past the copy
        w[3] = 0x401111;
        let bytes = stack(&w);
        let s = StackCopy::new(SP, &bytes);
        let regs = UserRegs {
            ip: 1,
            sp: SP,
            bp: SP + 0x10,
        };
        let (pcs, err) = walk(regs, &s, 1000);
        assert_eq!(pcs.len(), 2);
        assert_eq!(err.map(|e| e.kind()), Some(UnwindErrorKind::MemoryInvalid));

        let back = UserRegs {
            ip: 1,
            sp: SP,
            bp: SP - 0x10,
        };
        assert_eq!(
            walk(back, &s, 1000).1.map(|e| e.kind()),
            Some(UnwindErrorKind::UnwindInfo)
        );
        let odd = UserRegs {
            ip: 1,
            sp: SP,
            bp: SP + 8,
        };
        assert_eq!(
            walk(odd, &s, 1000).1.map(|e| e.kind()),
            Some(UnwindErrorKind::UnwindInfo)
        );
    }

    #[test]
    fn a_long_chain_hits_the_frame_limit() {
        let n = 40;
        let mut w = vec![0u64; 2 * n + 2];
        for i in 0..n {
            w[2 * i] = SP + 16 * (i as u64 + 1);
            w[2 * i + 1] = 0x400000 + i as u64;
        }
        let bytes = stack(&w);
        let s = StackCopy::new(SP, &bytes);
        let regs = UserRegs {
            ip: 1,
            sp: SP - 16,
            bp: SP,
        };
        let (pcs, err) = walk(regs, &s, 10);
        assert_eq!(pcs.len(), 10);
        assert_eq!(
            err.map(|e| e.kind()),
            Some(UnwindErrorKind::MaxFramesExceeded)
        );
    }

    proptest! {
        #[test]
        fn garbage_never_panics(ip: u64, sp: u64, bp: u64, words in proptest::collection::vec(any::<u64>(), 0..64)) {
            let bytes = stack(&words);
            let s = StackCopy::new(sp, &bytes);
            let (pcs, _) = walk(UserRegs { ip, sp, bp }, &s, 1000);
            prop_assert!(!pcs.is_empty() && pcs.len() <= 1000);
        }
    }
}

//! The allocating thread's registers and stack, in the form an unwinder
//! outside the allocation path wants them (heapprofd's client hands the
//! same to its service): `ip`, `sp` and `bp` read at one instruction, and
//! the bytes from `sp` to the top of the thread's stack, at most a bound.
//!
//! The bytes are copied by the kernel (`process_vm_readv` on our own pid),
//! not read by Rust: a thread's stack holds locals that other threads may
//! be writing through shared references, and a Rust read racing such a
//! write would be a data race. The stack's top is the end of the mapping
//! that holds `sp` (`/proc/self/maps`, read once per thread).
//!
//! x86-64 only; elsewhere nothing is captured and the sample is recorded
//! with an unwinding error.

// The preload client's capture is not built under loom.
#![cfg_attr(zerotrace_loom, allow(dead_code))]

use std::mem::MaybeUninit;

use zerotrace_unwind::{ProcRoot, find, read_maps};

/// What was captured.
#[derive(Debug)]
pub(crate) struct Captured {
    /// The instruction pointer, inside [`capture`].
    pub ip: u64,
    /// The stack pointer there; `stack` starts here.
    pub sp: u64,
    /// The frame pointer there.
    pub bp: u64,
    /// The stack's bytes from `sp`.
    pub stack: Vec<u8>,
    /// Whether the copy was cut at the bound.
    pub maxed: bool,
}

/// The top of the stack that holds `sp`: the end of its mapping.
pub(crate) fn stack_top(sp: u64) -> Option<u64> {
    let maps = read_maps(&ProcRoot::system(), std::process::id()).ok()?;
    find(&maps, sp).map(|m| m.end)
}

/// The registers [`capture_with`] read.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Regs {
    /// The instruction pointer, inside [`capture_with`].
    pub ip: u64,
    /// The stack pointer there; the copy starts here.
    pub sp: u64,
    /// The frame pointer there.
    pub bp: u64,
}

/// Reads the current registers, asks `place` for room for the stack's
/// bytes from `sp` to `stack_top` (at most `max`), and has the kernel copy
/// them there: the registers and the bytes copied. `None` where this
/// architecture is not supported, under Miri, when `place` gave no room,
/// or when the kernel copied nothing.
///
/// # Safety
/// A pointer `place` returns must be valid for writes of the length it was
/// asked for, and nothing else may access those bytes during the call.
#[inline(never)]
pub(crate) unsafe fn capture_with(
    stack_top: u64,
    max: usize,
    place: impl FnOnce(usize) -> Option<*mut u8>,
) -> Option<(Regs, usize)> {
    let (ip, sp, bp) = registers()?;
    if sp >= stack_top {
        return None;
    }
    let len = usize::try_from(stack_top - sp).map_or(max, |l| l.min(max));
    let dst = place(len)?;
    // SAFETY: `place` handed out `len` writable bytes at `dst` that nothing
    // else accesses meanwhile (contract). No slice is made of them: they
    // may be shared memory, written only by the kernel here.
    let copied = unsafe { copy_own_memory_raw(sp, dst, len) }?;
    Some((Regs { ip, sp, bp }, copied.min(len)))
}

/// The current registers and up to `max` bytes of the stack below
/// `stack_top` (from [`stack_top`]), copied into `stack` (a recycled
/// buffer: its capacity is reused, its contents replaced); `None` where
/// this architecture is not supported, under Miri, or when the kernel
/// copied nothing (the buffer is then handed back).
#[inline(never)]
pub(crate) fn capture(stack_top: u64, max: usize, mut stack: Vec<u8>) -> Result<Captured, Vec<u8>> {
    let Some((ip, sp, bp)) = registers() else {
        return Err(stack);
    };
    if sp >= stack_top {
        return Err(stack);
    }
    let len = usize::try_from(stack_top - sp).map_or(max, |l| l.min(max));
    stack.clear();
    stack.reserve(len);
    let Some(copied) = copy_own_memory(sp, &mut stack.spare_capacity_mut()[..len]) else {
        return Err(stack);
    };
    // SAFETY: the kernel initialised the first `copied` bytes of the spare
    // capacity (it never reports more than it wrote, nor more than `len`).
    unsafe { stack.set_len(copied.min(len)) };
    Ok(Captured {
        ip,
        sp,
        bp,
        maxed: copied >= max,
        stack,
    })
}

#[cfg(all(target_arch = "x86_64", not(miri)))]
#[inline(always)]
fn registers() -> Option<(u64, u64, u64)> {
    let (ip, sp, bp): (u64, u64, u64);
    // SAFETY: reads three registers into outputs; touches no memory and
    // leaves the stack and flags as they were.
    unsafe {
        std::arch::asm!(
            "lea {ip}, [rip]",
            "mov {sp}, rsp",
            "mov {bp}, rbp",
            ip = out(reg) ip,
            sp = out(reg) sp,
            bp = out(reg) bp,
            options(nomem, nostack, preserves_flags),
        );
    }
    Some((ip, sp, bp))
}

#[cfg(not(all(target_arch = "x86_64", not(miri))))]
fn registers() -> Option<(u64, u64, u64)> {
    None
}

/// Copies `out.len()` bytes at address `from` of this process into `out`
/// through the kernel; the bytes copied (those first bytes of `out` are
/// then initialised).
fn copy_own_memory(from: u64, out: &mut [MaybeUninit<u8>]) -> Option<usize> {
    // SAFETY: `out` is ours to write for its whole length.
    unsafe { copy_own_memory_raw(from, out.as_mut_ptr().cast(), out.len()) }
}

/// Copies `len` bytes at address `from` of this process to `dst` through
/// the kernel; the bytes copied.
///
/// # Safety
/// `dst` is valid for writes of `len` bytes.
#[cfg(not(miri))]
unsafe fn copy_own_memory_raw(from: u64, dst: *mut u8, len: usize) -> Option<usize> {
    let local = libc::iovec {
        iov_base: dst.cast(),
        iov_len: len,
    };
    let remote = libc::iovec {
        iov_base: from as *mut libc::c_void,
        iov_len: len,
    };
    // SAFETY: `local` describes `len` bytes the caller lets us write (bytes
    // need no initialisation to be written); the kernel checks `remote`
    // (our own address space) and fails or copies less rather than fault.
    let n = unsafe { libc::process_vm_readv(libc::getpid(), &local, 1, &remote, 1, 0) };
    usize::try_from(n).ok().filter(|&n| n > 0)
}

#[cfg(miri)]
unsafe fn copy_own_memory_raw(_from: u64, _dst: *mut u8, _len: usize) -> Option<usize> {
    None
}

#[cfg(all(test, target_arch = "x86_64", not(miri)))]
mod tests {
    use super::*;

    #[test]
    fn the_copy_holds_this_frames_locals_and_ends_at_the_stack_top() {
        let marker: [u64; 4] = [0x5a5a_1234_dead_beef; 4];
        let here = std::hint::black_box(&marker) as *const _ as u64;
        let top = stack_top(here).expect("this thread's stack is mapped");
        let c = capture(top, 1 << 20, Vec::new()).expect("captured");
        assert!(c.sp <= here && here < top);
        assert!(c.ip != 0 && c.bp != 0);
        let at = usize::try_from(here - c.sp).unwrap();
        let word = u64::from_ne_bytes(c.stack[at..at + 8].try_into().unwrap());
        assert_eq!(word, 0x5a5a_1234_dead_beef);
        assert_eq!(c.sp + c.stack.len() as u64, top, "copied up to the top");
        assert!(!c.maxed);
        let cut = capture(top, 256, c.stack).unwrap();
        assert_eq!(cut.stack.len(), 256);
        assert!(cut.maxed);
    }
}

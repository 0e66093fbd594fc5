//! The allocating thread's registers and stack, in the form an unwinder
//! outside the allocation path wants them (heapprofd's client hands the
//! same to its service): `ip`, `sp` and `bp` read at one instruction, and
//! the bytes from `sp` to the top of the thread's stack, at most a bound.
//!
//! The bytes are never read by Rust: a thread's stack holds locals that
//! other threads may be writing through shared references, and a Rust read
//! racing such a write would be a data race. They are copied by one
//! `rep movsb` in an `asm!` block when `sp` lies inside the stack mapping
//! the thread's first sample found (its bounds read once per thread from
//! `/proc/self/maps`), so every byte from `sp` to the top is mapped; a
//! thread whose `sp` ever leaves those bounds (it switched stacks) is
//! copied by the kernel from then on (`process_vm_readv` on our own pid,
//! which copies less rather than fault). Why the `asm!` copy is sound is
//! written in ARCHITECTURE.md's soundness rules (the stack copy).
//!
//! x86-64 only; elsewhere nothing is captured and the sample is recorded
//! with an unwinding error.

// The preload client's capture is not built under loom.
#![cfg_attr(zerotrace_loom, allow(dead_code))]

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

/// The stack a thread runs on: the mapping that held its `sp` when first
/// sampled (`bottom` 0: no copy without the kernel).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct StackBounds {
    /// The mapping's start; 0 once the thread was seen off it.
    pub bottom: u64,
    /// The mapping's end: the stack's top (`u64::MAX`: unknown).
    pub top: u64,
}

impl StackBounds {
    /// Not read yet.
    pub(crate) const UNREAD: StackBounds = StackBounds { bottom: 0, top: 0 };

    /// Whether the bounds were read (known or not).
    pub(crate) fn is_read(&self) -> bool {
        self.top != 0
    }

    /// Whether the stack's top is known.
    pub(crate) fn is_known(&self) -> bool {
        self.top != 0 && self.top != u64::MAX
    }

    /// The bounds of the stack that holds `sp`: its mapping; on the main
    /// thread, its top is where the program's first frame starts
    /// ([`initial_sp`]): above are only the arguments, the environment and
    /// the auxiliary vector (kilobytes no unwinder reads, the outermost
    /// frame, `_start`, says its caller is undefined), which every sample
    /// would otherwise copy.
    pub(crate) fn of(sp: u64) -> StackBounds {
        let Some((bottom, mut top)) = stack_mapping(sp) else {
            return StackBounds {
                bottom: 0,
                top: u64::MAX,
            };
        };
        if let Some(init) = initial_sp() {
            if (bottom..top).contains(&init) && sp <= init {
                top = init.saturating_add(INITIAL_FRAME_SLACK).min(top);
            }
        }
        StackBounds { bottom, top }
    }

    /// Whether the `len` bytes at `sp` lie inside the mapping (and so may
    /// be read without the kernel); otherwise the thread left its stack,
    /// and the kernel copies for it from now on.
    fn holds(&mut self, sp: u64, len: usize) -> bool {
        let inside = self.bottom != 0
            && sp >= self.bottom
            && sp
                .checked_add(len as u64)
                .is_some_and(|end| end <= self.top);
        if !inside {
            self.bottom = 0;
        }
        inside
    }
}

/// Bytes kept above the program's initial stack pointer: `argc` and
/// whatever `_start` pushes before its first call.
const INITIAL_FRAME_SLACK: u64 = 64;

/// The stack pointer the program started with (glibc's
/// `__libc_stack_end`, set by the dynamic loader before any code of the
/// program runs): the main thread's outermost frame lies below it.
#[cfg(all(target_os = "linux", target_env = "gnu", not(miri)))]
fn initial_sp() -> Option<u64> {
    unsafe extern "C" {
        static __libc_stack_end: *const libc::c_void;
    }
    // SAFETY: a pointer-sized static glibc's loader defines and sets once,
    // before the program's first instruction; read by value.
    let at = unsafe { __libc_stack_end } as u64;
    (at != 0).then_some(at)
}

#[cfg(not(all(target_os = "linux", target_env = "gnu", not(miri))))]
fn initial_sp() -> Option<u64> {
    None
}

/// The mapping that holds `sp`: (start, end).
fn stack_mapping(sp: u64) -> Option<(u64, u64)> {
    let maps = read_maps(&ProcRoot::system(), std::process::id()).ok()?;
    find(&maps, sp).map(|m| (m.start, m.end))
}

/// The top of the stack that holds `sp`: the end of its mapping.
#[cfg(test)]
pub(crate) fn stack_top(sp: u64) -> Option<u64> {
    stack_mapping(sp).map(|(_, end)| end)
}

/// The registers [`here`] read.
#[derive(Debug, Clone, Copy)]
pub struct Regs {
    /// The instruction pointer, where [`here`] was inlined.
    pub ip: u64,
    /// The stack pointer there; the copy starts here.
    pub sp: u64,
    /// The frame pointer there.
    pub bp: u64,
}

/// The registers where this is inlined: in the frame of the function that
/// calls it (`None` where this architecture is not supported, or under
/// Miri). A hook takes them in the allocation function its caller called,
/// so that the stack copy ([`capture_with`], called deeper) starts at that
/// frame: the hook's own frames below it are neither copied nor unwound.
/// The bytes from the taken `sp` up stay as they were while the frames
/// below run: they belong to the frames above, which are suspended.
#[inline(always)]
pub(crate) fn here() -> Option<Regs> {
    registers().map(|(ip, sp, bp)| Regs { ip, sp, bp })
}

/// With the registers a caller took ([`here`], in a frame that is still
/// live), asks `place` for room for the stack's bytes from their `sp` to
/// the stack's top (at most `max`), and copies them there
/// ([`copy_stack`]): the registers and the bytes copied. `None` without
/// registers, when `place` gave no room, or when nothing could be copied.
///
/// # Safety
/// A pointer `place` returns must be valid for writes of the length it was
/// asked for, and nothing else may access those bytes during the call.
/// `regs` were taken by [`here`] in a frame of this thread that has not
/// returned.
#[inline(never)]
pub(crate) unsafe fn capture_with(
    bounds: &mut StackBounds,
    regs: Option<Regs>,
    max: usize,
    place: impl FnOnce(usize) -> Option<*mut u8>,
) -> Option<(Regs, usize)> {
    let Regs { ip, sp, bp } = regs?;
    if sp >= bounds.top {
        return None;
    }
    let len = usize::try_from(bounds.top - sp).map_or(max, |l| l.min(max));
    let dst = place(len)?;
    // SAFETY: `place` handed out `len` writable bytes at `dst` that nothing
    // else accesses meanwhile (contract). No slice is made of them: they
    // may be shared memory, written only by `copy_stack` here.
    let copied = unsafe { copy_stack(bounds, sp, dst, len) }?;
    Some((Regs { ip, sp, bp }, copied.min(len)))
}

/// The registers a caller took ([`here`]) and up to `max` bytes of the
/// stack from their `sp` to its top (`bounds`, from [`StackBounds::of`]),
/// copied into `stack` (a recycled buffer: its capacity is reused, its
/// contents replaced); the buffer handed back without registers (an
/// unsupported architecture, Miri) or when nothing could be copied.
///
/// # Safety
/// `regs` were taken by [`here`] in a frame of this thread that has not
/// returned.
#[inline(never)]
pub(crate) unsafe fn capture(
    bounds: &mut StackBounds,
    regs: Option<Regs>,
    max: usize,
    mut stack: Vec<u8>,
) -> Result<Captured, Vec<u8>> {
    let Some(Regs { ip, sp, bp }) = regs else {
        return Err(stack);
    };
    if sp >= bounds.top {
        return Err(stack);
    }
    let len = usize::try_from(bounds.top - sp).map_or(max, |l| l.min(max));
    stack.clear();
    stack.reserve(len);
    let out = &mut stack.spare_capacity_mut()[..len];
    // SAFETY: `out` is ours to write for its whole length.
    let Some(copied) = (unsafe { copy_stack(bounds, sp, out.as_mut_ptr().cast(), out.len()) })
    else {
        return Err(stack);
    };
    // SAFETY: `copy_stack` initialised the first `copied` bytes of the
    // spare capacity (it never reports more than it wrote, nor more than
    // `len`).
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

/// Copies the `len` stack bytes at `sp` to `dst`: without a system call
/// when they lie inside the thread's stack mapping ([`copy_bytes_asm`]),
/// by the kernel otherwise; the bytes copied.
///
/// # Safety
/// `dst` is valid for writes of `len` bytes.
#[inline(always)]
unsafe fn copy_stack(bounds: &mut StackBounds, sp: u64, dst: *mut u8, len: usize) -> Option<usize> {
    if len > 0 && ASM_COPY && bounds.holds(sp, len) {
        // SAFETY: `dst` takes `len` bytes (contract); the `len` bytes at
        // `sp` are inside the mapping of this thread's own stack, which
        // stays mapped while the thread runs on it.
        unsafe { copy_bytes_asm(sp, dst, len) };
        return Some(len);
    }
    // SAFETY: as above, for `dst`.
    unsafe { copy_own_memory_raw(sp, dst, len) }
}

/// Whether [`copy_bytes_asm`] copies here.
pub(crate) const ASM_COPY: bool = cfg!(all(target_arch = "x86_64", not(miri)));

/// Copies `len` bytes at address `from` to `dst` with one `rep movsb`, out
/// of the compiler's sight: to the program the block is an opaque write of
/// `len` bytes at `dst`, whatever it read (ARCHITECTURE.md, soundness
/// rules: the stack copy).
///
/// # Safety
/// The `len` bytes at `from` are mapped and readable, and `dst` is valid
/// for writes of `len` bytes that nothing else accesses meanwhile.
#[cfg(all(target_arch = "x86_64", not(miri)))]
#[inline(always)]
pub(crate) unsafe fn copy_bytes_asm(from: u64, dst: *mut u8, len: usize) {
    // SAFETY: caller contract; `rep movsb` copies forwards (the direction
    // flag is clear on entry to an `asm!` block), moves rsi, rdi and rcx
    // (declared clobbered), touches no flags and no stack.
    unsafe {
        std::arch::asm!(
            "rep movsb",
            inout("rcx") len => _,
            inout("rsi") from => _,
            inout("rdi") dst => _,
            options(nostack, preserves_flags),
        );
    }
}

/// Elsewhere (and under Miri, which runs no `asm!`) the kernel copies.
#[cfg(not(all(target_arch = "x86_64", not(miri))))]
pub(crate) unsafe fn copy_bytes_asm(_from: u64, _dst: *mut u8, _len: usize) {}

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
        let mut bounds = StackBounds::of(here);
        assert!(bounds.is_known() && bounds.bottom != 0);
        let top = bounds.top;
        // The mapping's end, or the main thread's initial frame below it.
        assert!(top <= stack_top(here).unwrap());
        // SAFETY: the registers of this frame, which is live.
        let c =
            unsafe { capture(&mut bounds, super::here(), 1 << 20, Vec::new()) }.expect("captured");
        assert_ne!(bounds.bottom, 0, "copied without the kernel");
        assert!(c.sp <= here && here < top);
        assert!(c.ip != 0 && c.bp != 0);
        let at = usize::try_from(here - c.sp).unwrap();
        let word = u64::from_ne_bytes(c.stack[at..at + 8].try_into().unwrap());
        assert_eq!(word, 0x5a5a_1234_dead_beef);
        assert_eq!(c.sp + c.stack.len() as u64, top, "copied up to the top");
        assert!(!c.maxed);
        // SAFETY: as above.
        let cut = unsafe { capture(&mut bounds, super::here(), 256, c.stack) }.unwrap();
        assert_eq!(cut.stack.len(), 256);
        assert!(cut.maxed);
    }

    #[test]
    fn the_main_threads_stack_ends_above_its_first_frame_not_at_the_environment() {
        let init = initial_sp().expect("glibc's __libc_stack_end");
        let mapping_end = stack_top(init).expect("the main thread's stack is mapped");
        let b = StackBounds::of(init - 256);
        assert_eq!(b.top, (init + INITIAL_FRAME_SLACK).min(mapping_end));
        assert!(b.top < mapping_end, "the environment is left out");
        // Another thread's stack keeps its mapping's end.
        let here = 0u64;
        let own = StackBounds::of(std::hint::black_box(&here) as *const u64 as u64);
        if !(own.bottom..own.top).contains(&init) {
            assert_eq!(Some(own.top), stack_top(&here as *const u64 as u64));
        }
    }

    #[test]
    fn a_thread_off_its_stack_mapping_is_copied_by_the_kernel_from_then_on() {
        let marker: [u64; 4] = [0x0123_4567_89ab_cdef; 4];
        let here = std::hint::black_box(&marker) as *const _ as u64;
        let real = StackBounds::of(here);
        // Bounds that do not hold `sp` (as after a switch of stacks): the
        // kernel copies, the same bytes, and the bounds stay off.
        let mut off = StackBounds {
            bottom: real.top - 64,
            top: real.top,
        };
        // SAFETY: as above.
        let c = unsafe { capture(&mut off, super::here(), 1 << 20, Vec::new()) }.expect("captured");
        assert_eq!(off.bottom, 0);
        let at = usize::try_from(here - c.sp).unwrap();
        let word = u64::from_ne_bytes(c.stack[at..at + 8].try_into().unwrap());
        assert_eq!(word, 0x0123_4567_89ab_cdef);
        assert_eq!(c.sp + c.stack.len() as u64, real.top);
    }
}

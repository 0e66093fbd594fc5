//! The allocating thread's registers and stack, in the form an unwinder
//! outside the allocation path wants them (heapprofd's client hands the
//! same to its service): `ip`, `sp` and `bp` read at one instruction, and
//! the bytes from `sp` to the top of the thread's stack, at most a bound.
//!
//! The bytes are never read by Rust: a thread's stack holds locals that
//! other threads may be writing through shared references, and a Rust read
//! racing such a write would be a data race. They are copied by one
//! `rep movsb` in an `asm!` block when `sp` lies inside the thread's own
//! stack as found at its first sample (read once per thread: the stack the
//! thread library gave it, `pthread_getattr_np`, cut to the mapping of
//! `/proc/self/maps` that holds `sp`), so every byte from `sp` to the top is
//! mapped for as long as the thread lives. A mapping's line alone is no
//! such bound: the kernel shows adjacent anonymous mappings of the same
//! flags as one, so a line can run past the thread's stack into memory
//! another thread maps and unmaps (the 36 KiB stack glibc's
//! `posix_spawn`, under `std::process::Command`, maps right above it for
//! its child and unmaps once the child has exec'd). A thread whose `sp` ever leaves those bounds
//! (it switched stacks) is copied by the kernel from then on
//! (`process_vm_readv` on our own pid, which copies less rather than
//! fault). Why the `asm!` copy is sound is written in ARCHITECTURE.md's
//! soundness rules (the stack copy).
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

    /// The bounds of the stack that holds `sp`, this thread's:
    /// [`StackBounds::within`] the mapping that holds it, the program's
    /// initial stack pointer and, off the main thread's stack, the stack
    /// the thread library gave this thread.
    pub(crate) fn of(sp: u64) -> StackBounds {
        let Some(mapping) = stack_mapping(sp) else {
            return StackBounds {
                bottom: 0,
                top: u64::MAX,
            };
        };
        let init = initial_sp();
        let main = init.is_some_and(|init| on_main_stack(mapping, init, sp));
        let thread = if main { None } else { thread_stack() };
        StackBounds::within(mapping, init, thread, sp)
    }

    /// The bounds of the stack that holds `sp`, from the `mapping` that
    /// holds it (start, end), the program's initial stack pointer `init`
    /// and the stack the thread library gave the thread, `thread` (start,
    /// end).
    ///
    /// On the main thread's stack (the mapping holds `init`, `sp` below
    /// it), the mapping up to where the program's first frame starts:
    /// above are only the arguments, the environment and the auxiliary
    /// vector (kilobytes no unwinder reads, the outermost frame, `_start`,
    /// says its caller is undefined), which every sample would otherwise
    /// copy; the kernel keeps that stack apart from any other mapping.
    ///
    /// Elsewhere, the thread's stack cut to the mapping: the mapping's line
    /// may span a neighbour with the same flags (the kernel shows adjacent
    /// anonymous mappings as one), which is not this thread's and may be
    /// unmapped any time after. When `sp` is not on the thread's stack (a
    /// signal or coroutine stack), or that stack is unknown, no bound is
    /// trusted for the `asm!` copy (`bottom` 0): the kernel copies, up to
    /// the mapping's end.
    pub(crate) fn within(
        mapping: (u64, u64),
        init: Option<u64>,
        thread: Option<(u64, u64)>,
        sp: u64,
    ) -> StackBounds {
        let (bottom, top) = mapping;
        if let Some(init) = init.filter(|&init| on_main_stack(mapping, init, sp)) {
            return StackBounds {
                bottom,
                top: init.saturating_add(INITIAL_FRAME_SLACK).min(top),
            };
        }
        match thread {
            Some((lo, hi)) if (lo..hi).contains(&sp) && (bottom..top).contains(&sp) => {
                StackBounds {
                    bottom: bottom.max(lo),
                    top: top.min(hi),
                }
            }
            _ => StackBounds { bottom: 0, top },
        }
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

/// Whether `sp` is on the main thread's stack: the `mapping` that holds it
/// holds the program's initial stack pointer `init` too, above `sp`.
fn on_main_stack(mapping: (u64, u64), init: u64, sp: u64) -> bool {
    (mapping.0..mapping.1).contains(&init) && sp <= init
}

/// The stack the thread library gave the calling thread: (lowest usable
/// address, top). glibc's top is the end of the block it mapped for the
/// thread (its thread control block and static TLS lie at the top), which
/// stays mapped until the thread is joined or detached and gone.
#[cfg(all(target_os = "linux", not(miri)))]
fn thread_stack() -> Option<(u64, u64)> {
    let mut attr = std::mem::MaybeUninit::<libc::pthread_attr_t>::uninit();
    // SAFETY: `attr` is written by `pthread_getattr_np` before it is read,
    // and destroyed once, after the read, only if it was initialised.
    unsafe {
        if libc::pthread_getattr_np(libc::pthread_self(), attr.as_mut_ptr()) != 0 {
            return None;
        }
        let mut addr: *mut libc::c_void = std::ptr::null_mut();
        let mut size: libc::size_t = 0;
        let got = libc::pthread_attr_getstack(attr.as_ptr(), &mut addr, &mut size);
        libc::pthread_attr_destroy(attr.as_mut_ptr());
        if got != 0 || addr.is_null() {
            return None;
        }
        let lo = addr as u64;
        Some((lo, lo.checked_add(size as u64)?))
    }
}

#[cfg(not(all(target_os = "linux", not(miri))))]
fn thread_stack() -> Option<(u64, u64)> {
    None
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
    fn a_mapping_line_that_runs_past_the_threads_stack_is_cut_to_the_stack() {
        // A thread's stack (0x20000..0x30000) shown in one line with a
        // neighbour above it (up to 0x40000).
        let line = (0x10000, 0x40000);
        let stack = Some((0x20000, 0x30000));
        let b = StackBounds::within(line, Some(0x7fff_0000), stack, 0x2f000);
        assert_eq!(
            b,
            StackBounds {
                bottom: 0x20000,
                top: 0x30000
            }
        );
        // Off the thread's stack: the kernel copies.
        let off = StackBounds::within(line, None, stack, 0x38000);
        assert_eq!(
            off,
            StackBounds {
                bottom: 0,
                top: 0x40000
            }
        );
        assert_eq!(StackBounds::within(line, None, None, 0x2f000).bottom, 0);
        // The main thread's stack: up to its first frame.
        let main = StackBounds::within(line, Some(0x3f000), None, 0x2f000);
        assert_eq!(
            main,
            StackBounds {
                bottom: 0x10000,
                top: 0x3f000 + INITIAL_FRAME_SLACK
            }
        );
    }

    /// Memory mapped above the test thread's stack, in the same mapping.
    const NEIGHBOUR: usize = 64 << 10;

    /// What the thread of the test below saw.
    struct Seen {
        /// The top of the stack the thread was given.
        stack_end: u64,
        /// Its bounds as its first sample reads them.
        bounds: StackBounds,
        /// `sp` and the bytes copied, after the neighbour went away.
        copied: Option<(u64, usize)>,
        /// Whether the `asm!` copied them (not the kernel).
        without_kernel: bool,
    }

    extern "C" fn sample_on_a_shared_mapping(arg: *mut libc::c_void) -> *mut libc::c_void {
        // SAFETY: the test hands a `Seen` that outlives this thread (it
        // joins it) and does not touch it meanwhile.
        let seen = unsafe { &mut *arg.cast::<Seen>() };
        let marker: [u64; 4] = [0x1111_2222_3333_4444; 4];
        let here = std::hint::black_box(&marker) as *const _ as u64;
        seen.bounds = StackBounds::of(here);
        if seen.bounds.top <= seen.stack_end {
            // The neighbour is unmapped (the spawned child exec'd), then a
            // sample copies: it must stay inside the stack.
            // SAFETY: the test's own mapping, which nothing else uses.
            unsafe { libc::munmap(seen.stack_end as *mut libc::c_void, NEIGHBOUR) };
            let mut bounds = seen.bounds;
            // SAFETY: the registers of this frame, which is live.
            let c = unsafe { capture(&mut bounds, super::here(), 1 << 20, Vec::new()) };
            seen.copied = c.ok().map(|c| (c.sp, c.stack.len()));
            seen.without_kernel = bounds.bottom != 0;
        }
        std::ptr::null_mut()
    }

    #[test]
    fn a_threads_stack_sharing_a_mapping_with_other_memory_bounds_the_copy() {
        const STACK: usize = 1 << 20;
        // One mapping: the thread's stack and, above it, memory that is
        // not the thread's (as the child stack `posix_spawn` maps right
        // above with the same flags, which the kernel shows as one line).
        // SAFETY: a new anonymous mapping.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                STACK + NEIGHBOUR,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        assert_ne!(base, libc::MAP_FAILED);
        let mut seen = Seen {
            stack_end: base as u64 + STACK as u64,
            bounds: StackBounds::UNREAD,
            copied: None,
            without_kernel: false,
        };
        let mut attr = std::mem::MaybeUninit::<libc::pthread_attr_t>::uninit();
        let mut thread = std::mem::MaybeUninit::<libc::pthread_t>::uninit();
        // SAFETY: `attr` initialised before use and destroyed once; the
        // stack is the mapping's lower part, ours; `seen` outlives the
        // thread, which is joined before it is read.
        unsafe {
            assert_eq!(libc::pthread_attr_init(attr.as_mut_ptr()), 0);
            assert_eq!(
                libc::pthread_attr_setstack(attr.as_mut_ptr(), base, STACK),
                0
            );
            let arg = (&raw mut seen).cast::<libc::c_void>();
            let created = libc::pthread_create(
                thread.as_mut_ptr(),
                attr.as_ptr(),
                sample_on_a_shared_mapping,
                arg,
            );
            assert_eq!(created, 0);
            assert_eq!(
                libc::pthread_join(thread.assume_init(), std::ptr::null_mut()),
                0
            );
            libc::pthread_attr_destroy(attr.as_mut_ptr());
        }
        let mapping_end = seen.stack_end + NEIGHBOUR as u64;
        assert_eq!(
            seen.bounds.top, seen.stack_end,
            "bounded by the thread's stack, not by the mapping's line (up to {mapping_end:#x})"
        );
        assert!(seen.bounds.bottom >= base as u64);
        let (sp, len) = seen.copied.expect("copied");
        assert_eq!(sp + len as u64, seen.stack_end);
        assert!(
            seen.without_kernel,
            "the thread's own stack is copied in place"
        );
        // SAFETY: the stack's part of our mapping; its thread is gone.
        unsafe { libc::munmap(base, STACK) };
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

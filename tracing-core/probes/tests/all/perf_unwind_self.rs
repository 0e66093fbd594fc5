//! `linux.perf`'s unwinder on this test process's own stack: registers
//! captured with inline assembly in nested functions, the live stack copied
//! from `rsp` through `/proc/self/mem` (as the kernel copies a sample's),
//! unwound with DWARF CFI from the test binary's `.eh_frame` through
//! `/proc/self/maps`, and the frames named by the binary's symbols. Then
//! the same sample made hostile: cut short, garbage registers, unreadable
//! files; each gives a typed error in the result.

#![cfg(all(target_os = "linux", target_arch = "x86_64"))]

use std::os::unix::fs::FileExt;

use zerotrace_probes::perf::unwind::{
    CallstackEntry, ProcRoot, UnwindErrorKind, UnwindMode, Unwinder, UserRegs, UserSample,
    parse_maps,
};

const STACK_COPY: u64 = 64 * 1024;

/// A sample of the calling thread: its registers at the capture, and up to
/// 64 KiB of its stack from rsp (no further than its stack mapping).
struct Captured {
    regs: UserRegs,
    stack: Vec<u8>,
}

#[inline(never)]
fn capture() -> Captured {
    let (ip, sp, bp): (u64, u64, u64);
    // SAFETY: reads three registers into outputs; touches no memory.
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
    // The copy is taken here, in the capturing frame, so every frame it
    // describes is still live; the reads below use stack under sp only.
    let maps = parse_maps(&std::fs::read("/proc/self/maps").unwrap()).unwrap();
    let top = maps.iter().find(|m| m.contains(sp)).map(|m| m.end).unwrap();
    let len = (top - sp).min(STACK_COPY);
    let mem = std::fs::File::open("/proc/self/mem").unwrap();
    let mut stack = vec![0u8; len as usize];
    mem.read_exact_at(&mut stack, sp).unwrap();
    Captured {
        regs: UserRegs { ip, sp, bp },
        stack,
    }
}

#[inline(never)]
fn level_three(x: u64) -> (Captured, u64) {
    let c = capture();
    (c, std::hint::black_box(x) + 3)
}

#[inline(never)]
fn level_two(x: u64) -> (Captured, u64) {
    let (c, y) = level_three(std::hint::black_box(x) * 2);
    (c, std::hint::black_box(y) + 2)
}

#[inline(never)]
fn level_one(x: u64) -> (Captured, u64) {
    let (c, y) = level_two(std::hint::black_box(x) + 1);
    (c, std::hint::black_box(y) * 5)
}

fn names(
    unwinder: &mut Unwinder,
    stack: &zerotrace_probes::perf::unwind::UnwoundStack,
) -> Vec<String> {
    let pid = std::process::id();
    stack
        .frames
        .iter()
        .map(|f| {
            unwinder
                .symbolize(pid, f)
                .map(|s| s.name)
                .unwrap_or_else(|| "?".into())
        })
        .collect()
}

fn position(names: &[String], suffix: &str) -> usize {
    names
        .iter()
        .position(|n| n.ends_with(suffix))
        .unwrap_or_else(|| panic!("no frame named *{suffix} in {names:#?}"))
}

/// One test at a time: a test thread that starts or ends, or a large
/// allocation, changes this process's maps, and the re-read test below
/// counts whether a re-read found them unchanged.
fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

#[test]
fn dwarf_unwinds_own_stack_through_nested_functions() {
    let _one = one_at_a_time();
    dwarf_case();
}

// The test's body, out of line: a `#[test]` function itself is inlined
// into the harness's closure, so no symbol names it.
#[inline(never)]
fn dwarf_case() {
    let (c, _) = level_one(1);
    let pid = std::process::id();
    let mut unwinder = Unwinder::new();
    let sample = UserSample {
        regs: c.regs,
        stack: &c.stack,
        stack_maxed: c.stack.len() as u64 == STACK_COPY,
    };
    let out = unwinder.unwind(pid, &sample, UnwindMode::Dwarf);
    let names = names(&mut unwinder, &out);

    let cap = position(&names, "::capture");
    let three = position(&names, "::level_three");
    let two = position(&names, "::level_two");
    let one = position(&names, "::level_one");
    let test = position(&names, "::dwarf_case");
    assert_eq!(cap, 0, "{names:#?}");
    assert!(
        cap < three && three < two && two < one && one < test,
        "{names:#?}"
    );
    // Consecutive frames, nothing inlined or lost between them.
    assert_eq!((three, two, one, test), (1, 2, 3, 4), "{names:#?}");

    // Every frame up to the test function is in the test binary, with a
    // build id, and rel_pc is its ELF address (what its symbols use).
    let exe = std::fs::read_link("/proc/self/exe").unwrap();
    for f in &out.frames[..=test] {
        let m = f.mapping.as_ref().unwrap();
        assert_eq!(m.mapping.path(), Some(exe.as_path()));
        assert_eq!(f.rel_pc, m.rel_pc(f.pc));
        assert!(m.module().unwrap().has_unwind_info());
    }
    // Return addresses are reported one byte back, inside the call.
    let ra = out.frames[1].pc + 1;
    assert_eq!(
        unwinder.symbolize(pid, &out.frames[1]).map(|s| s.name),
        Some(concat!(module_path!(), "::level_three").to_owned())
    );
    assert!(ra > out.frames[1].pc);

    // The stack either reached its root (libc's start) or stopped at the
    // end of the 64 KiB copy, and said so.
    match out.error {
        UnwindErrorKind::None => {}
        UnwindErrorKind::MemoryInvalid => assert!(sample.stack_maxed || out.frames.len() > test),
        other => panic!("unexpected {other:?}: {names:#?}"),
    }
    let entries: Vec<_> = out.callstack().collect();
    assert_eq!(
        entries.len(),
        out.frames.len() + usize::from(!out.error.is_none())
    );

    // std's own backtrace sees the same nesting.
    let bt = std::backtrace::Backtrace::force_capture().to_string();
    assert!(bt.contains("dwarf_unwinds_own_stack_through_nested_functions"));

    let stats = unwinder.stats();
    assert_eq!(stats.process_misses, 1);
    assert!(stats.modules.loaded >= 1);
    assert_eq!(stats.total_unwinds(), 1);

    // A second unwind of the same sample hits every cache.
    let again = unwinder.unwind(pid, &sample, UnwindMode::Dwarf);
    assert_eq!(again.frames.len(), out.frames.len());
    let s2 = unwinder.stats();
    assert_eq!(
        (s2.process_hits, s2.modules.loaded),
        (1, stats.modules.loaded)
    );
    // Rules framehop can cache were cached by the first unwind (some, like
    // expression-based CFA rules, are evaluated every time).
    assert!(
        s2.rule_cache_hits > stats.rule_cache_hits,
        "{stats:?} then {s2:?}"
    );
}

#[test]
fn truncated_stack_copy_reports_memory_invalid() {
    let _one = one_at_a_time();
    let (c, _) = level_one(2);
    let pid = std::process::id();
    let mut unwinder = Unwinder::new();
    for cut in [0usize, 7, 8, 64, 200] {
        let stack = &c.stack[..cut.min(c.stack.len())];
        let sample = UserSample {
            regs: c.regs,
            stack,
            stack_maxed: true,
        };
        let out = unwinder.unwind(pid, &sample, UnwindMode::Dwarf);
        assert_eq!(
            out.error,
            UnwindErrorKind::MemoryInvalid,
            "cut {cut}: {out:?}"
        );
        assert!(!out.frames.is_empty());
        let last = out.callstack().last().unwrap();
        assert!(matches!(
            last,
            CallstackEntry::Error {
                function_name: "ERROR MEMORY_INVALID"
            }
        ));
    }
}

/// A `/proc` for this process whose `maps` stay as they are now (the rest
/// links to the real one): the other tests of this binary, run meanwhile,
/// map and unmap memory (their threads' stacks), and a test of when the
/// unwinder reads the maps again needs them unchanged. Removed on drop.
struct FrozenMaps {
    dir: std::path::PathBuf,
}

impl FrozenMaps {
    fn new() -> FrozenMaps {
        use std::os::unix::fs::symlink;
        let pid = std::process::id();
        let dir = std::env::temp_dir().join(format!("zt-frozen-maps-{pid}"));
        let _ = std::fs::remove_dir_all(&dir);
        let own = dir.join(format!("proc/{pid}"));
        std::fs::create_dir_all(&own).unwrap();
        std::fs::copy("/proc/self/maps", own.join("maps")).unwrap();
        for name in ["root", "map_files", "mem"] {
            symlink(format!("/proc/{pid}/{name}"), own.join(name)).unwrap();
        }
        symlink(pid.to_string(), dir.join("proc/self")).unwrap();
        FrozenMaps { dir }
    }
}

impl Drop for FrozenMaps {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[test]
fn garbage_registers_are_typed_errors() {
    let _one = one_at_a_time();
    let (c, _) = level_one(3);
    let pid = std::process::id();
    let frozen = FrozenMaps::new();
    let mut unwinder = Unwinder::with_proc_root(ProcRoot::at(&frozen.dir));
    let cases = [
        UserRegs {
            ip: 0,
            sp: 0,
            bp: 0,
        },
        UserRegs {
            ip: 0x10,
            sp: c.regs.sp,
            bp: c.regs.bp,
        },
        UserRegs {
            ip: u64::MAX,
            sp: u64::MAX,
            bp: u64::MAX,
        },
        UserRegs {
            ip: c.regs.ip,
            sp: 8,
            bp: 3,
        },
        UserRegs {
            ip: c.regs.ip,
            sp: c.regs.sp,
            bp: 0xdead_beef,
        },
    ];
    for regs in cases {
        for mode in [UnwindMode::Dwarf, UnwindMode::FramePointer] {
            let sample = UserSample {
                regs,
                stack: &c.stack,
                stack_maxed: false,
            };
            let out = unwinder.unwind(pid, &sample, mode);
            assert!(out.frames.len() <= zerotrace_probes::perf::unwind::MAX_FRAMES);
            if out.frames.first().is_some_and(|f| f.mapping.is_none()) {
                assert_eq!(out.error, UnwindErrorKind::InvalidMap, "{regs:?} {mode:?}");
            }
        }
    }
    // The first unknown pc re-read the maps; they had not changed, so the
    // next ones did not read them again.
    let s = unwinder.stats();
    assert!(s.maps_rereads >= 1 && s.maps_rereads_skipped >= 1, "{s:?}");
    // A pid with no process: the maps cannot be read.
    let sample = UserSample {
        regs: c.regs,
        stack: &c.stack,
        stack_maxed: false,
    };
    let out = unwinder.unwind(u32::MAX - 1, &sample, UnwindMode::Dwarf);
    assert_eq!(out.error, UnwindErrorKind::MapsParse);
    assert!(unwinder.stats().unwinds(UnwindErrorKind::InvalidMap) >= 1);
}

#[test]
fn skip_mode_gives_no_frames_and_no_error() {
    let _one = one_at_a_time();
    let (c, _) = level_one(4);
    let mut unwinder = Unwinder::new();
    let sample = UserSample {
        regs: c.regs,
        stack: &c.stack,
        stack_maxed: false,
    };
    let out = unwinder.unwind(std::process::id(), &sample, UnwindMode::Skip);
    assert!(out.frames.is_empty());
    assert_eq!(out.error, UnwindErrorKind::None);
}

//! `linux.perf`'s user-space unwinder and symbolizer (and `zerotrace
//! symbolize`'s DWARF reader) on a hostile ELF file
//! and a hostile stack: the input is an ELF image (mapped executable in a
//! fake process under a scratch `/proc`), the sampled registers, a mode
//! (DWARF, the frame-pointer chain in the copy, or a chain of pcs placed
//! in mappings as the kernel's walk gives them) and the stack copy.
//!
//! Invariants: no panic, whatever the ELF's headers, sections, symbols or
//! call frame information say; a stack has at most `MAX_FRAMES` frames (and
//! then says so); each frame placed in a mapping has a pc inside it (or one byte
//! before it: a return address is looked up at its call); every frame symbolizes or
//! not, without error; a complete stack names no error frame.

use zerotrace_probes::perf::unwind::{
    ElfModule, MAX_FRAMES, UnwindErrorKind, UnwindMode, Unwinder, UserRegs, UserSample,
};
use zerotrace_probes::procfs::ProcRoot;

use crate::support::{Cursor, ScratchDir};

/// Where the fake process maps the ELF image.
const BASE: u64 = 0x20_0000;
/// The stack mapping's start (the copy is read from `sp` on).
const STACK: u64 = 0x7ff0_0000_0000;

fn u64_at(c: &mut Cursor<'_>) -> u64 {
    let b = c.bytes(8);
    let mut a = [0u8; 8];
    a[..b.len()].copy_from_slice(b);
    u64::from_le_bytes(a)
}

/// The fuzz target.
pub fn perf_unwind(data: &[u8]) {
    let mut c = Cursor(data);
    let mode = c.byte().unwrap_or(0) % 3;
    let len = usize::from(c.byte().unwrap_or(0)) | (usize::from(c.byte().unwrap_or(0)) << 8);
    let elf = c.bytes(len);
    let ip = BASE + u64_at(&mut c) % 0x10_0000;
    let sp = STACK + u64_at(&mut c) % 0x1000;
    let bp = match c.byte().unwrap_or(0) % 3 {
        0 => sp + u64::from(c.byte().unwrap_or(0)) * 8,
        1 => u64_at(&mut c),
        _ => 0,
    };
    let stack = c.0;

    // The image on its own: headers, symbols, build id; and as
    // `zerotrace symbolize` reads it (DWARF, symbol table).
    if let Ok(m) = ElfModule::parse(elf) {
        let _ = m.build_id_hex();
        let _ = m.symbol_count();
        for pc in [0, ip - BASE, u64::MAX, m.load_bias()] {
            let _ = m.symbolize(pc);
        }
    }
    let _ = zerotrace_profiling::view::build_id_of(elf);
    if let Ok(s) = zerotrace_profiling::view::ModuleSymbolizer::new(elf) {
        for pc in [0, ip - BASE, ip, u64::MAX] {
            for l in s.lines(pc) {
                assert!(!l.function_name.is_empty());
            }
        }
    }

    let Ok(dir) = ScratchDir::new("perf-unwind") else {
        return;
    };
    let end = BASE
        + (elf.len() as u64)
            .max(1)
            .next_multiple_of(0x1000)
            .max(0x10_0000);
    let maps = format!(
        "{BASE:x}-{end:x} r-xp 00000000 00:00 0 /app\n\
         {STACK:x}-{:x} rw-p 00000000 00:00 0 [stack]\n",
        STACK + 0x10_0000
    );
    let root = dir.path();
    if std::fs::create_dir_all(root.join("proc/1/root")).is_err()
        || std::fs::write(root.join("proc/1/maps"), maps).is_err()
        || std::fs::write(root.join("proc/1/root/app"), elf).is_err()
    {
        return;
    }
    let mut u = Unwinder::with_proc_root(ProcRoot::at(root));
    let out = if mode == 2 {
        // A chain of pcs, as the kernel's frame-pointer walk hands it over.
        let pcs: Vec<u64> = stack
            .chunks(8)
            .take(MAX_FRAMES + 8)
            .map(|w| {
                let mut a = [0u8; 8];
                a[..w.len()].copy_from_slice(w);
                BASE + u64::from_le_bytes(a) % 0x11_0000
            })
            .collect();
        u.place(1, &pcs)
    } else {
        let sample = UserSample {
            regs: UserRegs { ip, sp, bp },
            stack,
            stack_maxed: false,
        };
        let mode = if mode == 0 {
            UnwindMode::Dwarf
        } else {
            UnwindMode::FramePointer
        };
        u.unwind(1, &sample, mode)
    };
    assert!(
        out.frames.len() <= MAX_FRAMES + 1,
        "{} frames",
        out.frames.len()
    );
    if out.frames.len() > MAX_FRAMES {
        assert_ne!(out.error, UnwindErrorKind::None);
    }
    for f in &out.frames {
        if let Some(m) = &f.mapping {
            // A return address is looked up one byte back (the call), which
            // for one at a mapping's very start lies just before it.
            let r = m.mapping.start..=m.mapping.end;
            assert!(
                r.contains(&f.pc) || r.contains(&f.pc.wrapping_add(1)),
                "pc {:#x} outside {r:x?}",
                f.pc
            );
        }
        let _ = u.symbolize(1, f);
    }
    if out.error == UnwindErrorKind::None {
        assert!(out.failure.is_none());
    }
    let _ = u.stats();
}

//! One sampled process's unwinding state: its mappings (from
//! `/proc/PID/maps`), the ELF module of each executable one, and the
//! `framehop` unwinder that holds their CFI. It is built once and reused
//! for every sample of the process; the owner rebuilds it when a pc falls
//! outside every mapping (the process mapped something new), on exec, and
//! on the periodic clear.
//!
//! An unwind is a loop of steps from the sampled registers, each frame
//! looked up in the mappings for its `rel_pc`. It stops at the root, or at
//! the first error, which it keeps: a pc in no mapping (`INVALID_MAP`, the
//! frame itself kept, as libunwindstack keeps it), a read outside the stack
//! copy (`MEMORY_INVALID`), a broken chain (`UNWIND_INFO`), a step that did
//! not move (`REPEATED_FRAME`), [`MAX_FRAMES`] frames
//! (`MAX_FRAMES_EXCEEDED`), or an end inside a file whose ELF did not load
//! (`INVALID_ELF`).

use std::sync::Arc;

use crate::ProcRoot;

use super::arch::{self, DwarfCache, DwarfUnwinder, StepError};
use super::elf_module::ElfModule;
use super::error::UnwindFailure;
use super::frame::{Frame, FrameMapping};
use super::frame_pointer;
use super::jit_map::JitMap;
use super::maps::{Mapping, MappingKind, MapsError, parse_maps};
use super::module_cache::{ModuleCache, ModuleKey};
use super::module_source::{load_file_module, read_vdso};
use super::regs::UserRegs;
use super::stack::StackCopy;
use super::symbols::Symbol;

/// Where an unwind puts the frames it finds, leaf first: whole
/// [`Frame`]s, or only their pcs for a caller that keeps what it knows of
/// each pc ([`Unwinder::unwind_pcs`](super::Unwinder::unwind_pcs)).
pub(crate) trait FrameSink {
    /// The frame at `pc`, in `mapping` (`None`: in no mapping, the last
    /// frame), a return address past the first frame.
    fn push(&mut self, pc: u64, mapping: Option<&Arc<FrameMapping>>, is_return: bool);
    /// Forgets what was pushed (before an unwind is tried again).
    fn clear(&mut self);
}

impl FrameSink for Vec<Frame> {
    fn push(&mut self, pc: u64, mapping: Option<&Arc<FrameMapping>>, is_return: bool) {
        Vec::push(
            self,
            match mapping {
                Some(m) => m.frame(pc, is_return),
                None => Frame {
                    pc,
                    rel_pc: pc,
                    mapping: None,
                },
            },
        );
    }

    fn clear(&mut self) {
        Vec::clear(self);
    }
}

impl FrameSink for Vec<u64> {
    fn push(&mut self, pc: u64, _: Option<&Arc<FrameMapping>>, _: bool) {
        Vec::push(self, pc);
    }

    fn clear(&mut self) {
        Vec::clear(self);
    }
}

/// The most frames one unwind gives (`traced_perf`'s limit).
pub const MAX_FRAMES: usize = 1000;

/// The largest `/proc/PID/maps` read.
const MAX_MAPS: usize = 64 << 20;

/// How user stacks are unwound (`PerfEventConfig.UnwindMode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum UnwindMode {
    /// `UNWIND_DWARF`: CFI, frame pointers where there is none (default).
    #[default]
    Dwarf,
    /// `UNWIND_FRAME_POINTER`: the frame-pointer chain only.
    FramePointer,
    /// `UNWIND_SKIP`: no user frames.
    Skip,
}

impl UnwindMode {
    /// The mode of a config's `user_frames` value (unknown values and
    /// `UNWIND_UNKNOWN` are DWARF, the default). `UNWIND_KERNEL_FRAME_POINTER`
    /// (4) needs no user-space unwinding and is `None`.
    pub fn from_proto(value: i32) -> Option<Self> {
        match value {
            1 => Some(UnwindMode::Skip),
            3 => Some(UnwindMode::FramePointer),
            4 => None,
            _ => Some(UnwindMode::Dwarf),
        }
    }
}

/// One process's mappings, modules and unwinder.
pub struct ProcessUnwinder {
    pid: u32,
    mappings: Vec<Arc<FrameMapping>>,
    /// Each mapping's start, in the same order (what `find` searches).
    starts: Vec<u64>,
    dwarf: DwarfUnwinder,
    jit: Option<JitMap>,
    /// A hash of the maps text this state was built from.
    maps_hash: u64,
    /// Unknown-pc samples still to pass before maps are read again (set
    /// when a re-read found the maps unchanged).
    pub(crate) reread_cooldown: u32,
}

impl std::fmt::Debug for ProcessUnwinder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProcessUnwinder")
            .field("pid", &self.pid)
            .field("mappings", &self.mappings.len())
            .finish_non_exhaustive()
    }
}

/// Reads `/proc/PID/maps`, bounded.
pub fn read_maps_text(proc: &ProcRoot, pid: u32) -> Result<Vec<u8>, MapsError> {
    proc.read(format!("proc/{pid}/maps"), MAX_MAPS)
        .map_err(|e| MapsError::Read(e.to_string()))
}

/// Reads and parses `/proc/PID/maps`.
pub fn read_maps(proc: &ProcRoot, pid: u32) -> Result<Vec<Mapping>, MapsError> {
    parse_maps(&read_maps_text(proc, pid)?)
}

/// The hash that tells whether two reads of a maps file differ.
pub(crate) fn maps_hash(text: &[u8]) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut h);
    h.finish()
}

impl ProcessUnwinder {
    /// Reads the process's maps and loads the module of each executable
    /// mapping (through `modules`, so files already read are not read
    /// again).
    pub fn load(proc: &ProcRoot, pid: u32, modules: &mut ModuleCache) -> Result<Self, MapsError> {
        let text = read_maps_text(proc, pid)?;
        Self::from_maps_text(proc, pid, &text, modules)
    }

    /// The unwinder for the maps file `text`.
    pub fn from_maps_text(
        proc: &ProcRoot,
        pid: u32,
        text: &[u8],
        modules: &mut ModuleCache,
    ) -> Result<Self, MapsError> {
        let mut p = Self::from_maps(proc, pid, parse_maps(text)?, modules);
        p.maps_hash = maps_hash(text);
        Ok(p)
    }

    /// Whether `text` is the maps file this state was built from.
    pub(crate) fn built_from(&self, text: &[u8]) -> bool {
        self.maps_hash == maps_hash(text)
    }

    /// The unwinder for `maps` (sorted by start, as [`parse_maps`] gives).
    pub fn from_maps(
        proc: &ProcRoot,
        pid: u32,
        maps: Vec<Mapping>,
        modules: &mut ModuleCache,
    ) -> Self {
        let mut dwarf = DwarfUnwinder::new();
        let mut mappings = Vec::with_capacity(maps.len());
        for m in maps {
            let module = if m.perms.exec {
                ModuleKey::of(&m).map(|key| {
                    modules.get_or_load(key, || match m.kind {
                        MappingKind::Vdso => {
                            let bytes = read_vdso(proc, pid, &m)?;
                            ElfModule::parse(&bytes[..])
                        }
                        _ => load_file_module(proc, pid, &m),
                    })
                })
            } else {
                None
            };
            let fm = Arc::new(FrameMapping::new(m, module));
            if let Some(module) = fm.module() {
                // Address a has ELF address rel_pc(a); framehop wants the
                // address whose ELF address is 0.
                let to_elf = fm.rel_pc(fm.mapping.start);
                if let Some(base) = fm.mapping.start.checked_sub(to_elf) {
                    dwarf.add_module(
                        fm.mapping.name_lossy().into_owned(),
                        fm.mapping.start..fm.mapping.end,
                        base,
                        module,
                    );
                }
            }
            mappings.push(fm);
        }
        ProcessUnwinder {
            pid,
            starts: mappings.iter().map(|m| m.mapping.start).collect(),
            mappings,
            dwarf,
            jit: None,
            maps_hash: 0,
            reread_cooldown: 0,
        }
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// The mappings, sorted by start.
    pub fn mappings(&self) -> &[Arc<FrameMapping>] {
        &self.mappings
    }

    /// The mapping holding `pc`.
    pub fn find(&self, pc: u64) -> Option<&Arc<FrameMapping>> {
        // The mappings are sorted like the maps they were built from; the
        // search runs over their starts, kept apart so that it reads one
        // array instead of following a pointer per step.
        let i = self
            .starts
            .partition_point(|&start| start <= pc)
            .checked_sub(1)?;
        let m = self.mappings.get(i)?;
        m.mapping.contains(pc).then_some(m)
    }

    /// Unwinds one sample in `mode` (without re-reading maps; see
    /// [`Unwinder::unwind`](super::Unwinder::unwind)).
    #[cfg(test)]
    pub(crate) fn unwind(
        &self,
        cache: &mut DwarfCache,
        regs: UserRegs,
        stack: &[u8],
        mode: UnwindMode,
    ) -> super::frame::UnwoundStack {
        let mut frames = Vec::new();
        let failure = self.unwind_into(
            cache,
            regs,
            &StackCopy::new(regs.sp, stack),
            mode,
            &mut frames,
        );
        super::frame::UnwoundStack::of(frames, failure)
    }

    /// Unwinds one sample in `mode` into `out`; what stopped it short.
    pub(crate) fn unwind_into<S: FrameSink>(
        &self,
        cache: &mut DwarfCache,
        regs: UserRegs,
        stack: &StackCopy<'_>,
        mode: UnwindMode,
        out: &mut S,
    ) -> Option<UnwindFailure> {
        match mode {
            UnwindMode::Skip => None,
            _ if !arch::SUPPORTED => Some(UnwindFailure::UnsupportedArch),
            UnwindMode::FramePointer => {
                let (pcs, failure) = frame_pointer::walk(regs, stack, MAX_FRAMES);
                self.place_into(&pcs, out).or(failure)
            }
            UnwindMode::Dwarf => self.unwind_dwarf(cache, regs, stack, out),
        }
    }

    /// `pcs` (the sampled ip, then return addresses) placed in their
    /// mappings, into `out`, up to the first one in none (`INVALID_MAP`).
    pub(crate) fn place_into<S: FrameSink>(
        &self,
        pcs: &[u64],
        out: &mut S,
    ) -> Option<UnwindFailure> {
        for (i, &pc) in pcs.iter().take(MAX_FRAMES).enumerate() {
            match self.find(pc) {
                Some(m) => out.push(pc, Some(m), i > 0),
                None => {
                    out.push(pc, None, i > 0);
                    return Some(UnwindFailure::NoMapping { pc });
                }
            }
        }
        (pcs.len() > MAX_FRAMES).then_some(UnwindFailure::TooManyFrames)
    }

    fn unwind_dwarf<S: FrameSink>(
        &self,
        cache: &mut DwarfCache,
        regs: UserRegs,
        stack: &StackCopy<'_>,
        out: &mut S,
    ) -> Option<UnwindFailure> {
        let mut regs = regs;
        let mut is_return = false;
        let mut n = 0usize;
        loop {
            let pc = regs.ip;
            let Some(mapping) = self.find(pc) else {
                out.push(pc, None, is_return);
                return Some(UnwindFailure::NoMapping { pc });
            };
            if n >= MAX_FRAMES {
                return Some(UnwindFailure::TooManyFrames);
            }
            out.push(pc, Some(mapping), is_return);
            n += 1;
            let before = regs;
            let step = self.dwarf.step(cache, &mut regs, is_return, stack);
            // Stopping inside a file whose ELF did not load: that is why.
            let bad_elf = || {
                mapping.module_error().map(|e| UnwindFailure::BadElf {
                    path: mapping
                        .mapping
                        .path()
                        .map(|p| p.to_owned())
                        .unwrap_or_default(),
                    error: e.clone(),
                })
            };
            match step {
                Ok(Some(())) => {
                    if regs.ip == before.ip && regs.sp == before.sp {
                        return Some(UnwindFailure::Repeated { pc, sp: regs.sp });
                    }
                    is_return = true;
                }
                Ok(None) => return bad_elf(),
                Err(e) => {
                    return Some(bad_elf().unwrap_or(match e {
                        StepError::StackRead(addr) => UnwindFailure::StackRead { addr },
                        StepError::BrokenChain => UnwindFailure::BrokenChain { sp: before.sp },
                        StepError::DidNotAdvance => UnwindFailure::Repeated { pc, sp: before.sp },
                        StepError::Unsupported => UnwindFailure::UnsupportedArch,
                    }));
                }
            }
        }
    }

    /// The frame of `pc` as an unwind gives it (`is_return`: `pc` is a
    /// return address, past the first frame).
    pub fn frame_of(&self, pc: u64, is_return: bool) -> Frame {
        match self.find(pc) {
            Some(m) => m.frame(pc, is_return),
            None => Frame {
                pc,
                rel_pc: pc,
                mapping: None,
            },
        }
    }

    /// The function a frame is in: the ELF's symbols, or for anonymous
    /// executable memory the process's `/tmp/perf-PID.map` (re-read when it
    /// has grown).
    pub fn symbolize(&mut self, proc: &ProcRoot, frame: &Frame) -> Option<Symbol> {
        let mapping = frame.mapping.as_ref()?;
        if mapping.module().is_some() {
            return mapping.symbolize(frame.rel_pc);
        }
        if !mapping.mapping.is_anonymous_exec() {
            return None;
        }
        let stale = match &self.jit {
            None => true,
            Some(j) => j.lookup(frame.pc).is_none() && j.is_stale(proc, self.pid),
        };
        if stale {
            self.jit = Some(JitMap::load(proc, self.pid));
        }
        self.jit.as_ref()?.lookup(frame.pc)
    }

    /// Whether `pc` is in a mapping.
    pub fn is_mapped(&self, pc: u64) -> bool {
        self.find(pc).is_some()
    }
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::*;
    use crate::error::UnwindErrorKind;

    const SP: u64 = 0x7ff0_0000;

    fn words(w: &[u64]) -> Vec<u8> {
        w.iter().flat_map(|w| w.to_le_bytes()).collect()
    }

    fn unwinder(maps: &str, proc: &ProcRoot) -> ProcessUnwinder {
        let maps = parse_maps(maps.as_bytes()).unwrap();
        ProcessUnwinder::from_maps(proc, std::process::id(), maps, &mut ModuleCache::new())
    }

    /// A synthetic bp chain through anonymous executable memory (JIT-like):
    /// frame-pointer mode follows it, rel_pc is pc - start, return
    /// addresses are moved back a byte, and the JIT map names them.
    #[test]
    fn frame_pointer_mode_on_a_synthetic_chain_with_jit_names() {
        let dir = std::env::temp_dir().join(format!("zt-unwind-jit-{}", std::process::id()));
        let pid = std::process::id();
        let tmp = dir.join(format!("proc/{pid}/root/tmp"));
        std::fs::create_dir_all(&tmp).unwrap();
        std::fs::write(
            tmp.join(format!("perf-{pid}.map")),
            "7f0000001000 100 jit_leaf\n7f0000002000 100 jit_caller\n",
        )
        .unwrap();
        let proc = ProcRoot::at(&dir);
        let mut p = unwinder("7f0000000000-7f0000010000 r-xp 00000000 00:00 0 \n", &proc);

        let mut w = vec![0u64; 8];
        w[2] = SP + 0x20;
        w[3] = 0x7f0000002010;
        w[4] = 0;
        w[5] = 0x7f0000003000;
        let bytes = words(&w);
        let regs = UserRegs {
            ip: 0x7f0000001008,
            sp: SP,
            bp: SP + 0x10,
        };
        let out = p.unwind(
            &mut DwarfCache::new(),
            regs,
            &bytes,
            UnwindMode::FramePointer,
        );
        assert_eq!(out.error, UnwindErrorKind::None, "{out:?}");
        let pcs: Vec<_> = out.frames.iter().map(|f| (f.pc, f.rel_pc)).collect();
        assert_eq!(
            pcs,
            vec![
                (0x7f0000001008, 0x1008),
                (0x7f000000200f, 0x200f),
                (0x7f0000002fff, 0x2fff)
            ]
        );
        let names: Vec<_> = out
            .frames
            .iter()
            .map(|f| p.symbolize(&proc, f).map(|s| s.name))
            .collect();
        assert_eq!(
            names,
            vec![Some("jit_leaf".into()), Some("jit_caller".into()), None]
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn missing_and_non_elf_files_end_in_invalid_elf() {
        let proc = ProcRoot::system();
        for name in ["/nonexistent/lib.so", "/proc/self/status"] {
            let maps = format!("10000-20000 r-xp 00000000 00:00 0 {name}\n");
            let p = unwinder(&maps, &proc);
            let m = p.find(0x10010).unwrap();
            assert!(m.module().is_none() && m.module_error().is_some());
            // bp 0: the frame-pointer fallback finds the "root" here, in a
            // file that did not load: that is the error, not a clean end.
            let regs = UserRegs {
                ip: 0x10010,
                sp: SP,
                bp: 0,
            };
            let out = p.unwind(&mut DwarfCache::new(), regs, &[0; 64], UnwindMode::Dwarf);
            assert_eq!(out.error, UnwindErrorKind::InvalidElf, "{name}: {out:?}");
            assert_eq!(out.frames.len(), 1);
            assert_eq!(out.frames[0].rel_pc, 0x10);
            assert!(m.symbolize(0x10).is_none());
        }
    }

    #[test]
    fn pc_outside_every_mapping_keeps_the_frame() {
        let p = unwinder("10000-20000 r-xp 00000000 00:00 0 \n", &ProcRoot::system());
        let regs = UserRegs {
            ip: 0x30000,
            sp: SP,
            bp: 0,
        };
        for mode in [UnwindMode::Dwarf, UnwindMode::FramePointer] {
            let out = p.unwind(&mut DwarfCache::new(), regs, &[0; 64], mode);
            assert_eq!(out.error, UnwindErrorKind::InvalidMap);
            assert_eq!((out.frames.len(), out.frames[0].rel_pc), (1, 0x30000));
            assert!(out.frames[0].mapping.is_none());
        }
    }

    #[test]
    fn unwind_mode_from_config() {
        assert_eq!(UnwindMode::from_proto(0), Some(UnwindMode::Dwarf));
        assert_eq!(UnwindMode::from_proto(1), Some(UnwindMode::Skip));
        assert_eq!(UnwindMode::from_proto(2), Some(UnwindMode::Dwarf));
        assert_eq!(UnwindMode::from_proto(3), Some(UnwindMode::FramePointer));
        assert_eq!(UnwindMode::from_proto(4), None);
    }
}

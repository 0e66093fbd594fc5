//! How `linux.perf` gets a sample's user frames: the [`UserStacks`]
//! trait the data source calls, [`ChainOnly`] (the kernel's frame-pointer
//! chain, no stack copy) and [`DwarfStacks`] (the stack copy unwound by
//! DWARF CFI or frame pointers through `perf::unwind`, frames named at
//! record time), each ending a failed walk with upstream's `ERROR` frame.

use zerotrace_profiling::frame_desc::{error_frame, frame_desc};

use crate::perf::config::UserFrames;
use crate::perf::intern::{FrameDesc, MappingDesc};
use crate::perf::records::Sample;
use zerotrace_protos::protos::profiling::StackUnwindError;

/// A sample's user stack, as the unwinder is given it.
#[derive(Debug, Clone, Copy)]
pub struct UserInput<'a> {
    /// The process.
    pub pid: u32,
    /// The sample's parsed record (registers, stack copy).
    pub sample: &'a Sample<'a>,
    /// The user part of the kernel's callchain (`KernelFramePointer`
    /// mode), leaf first.
    pub fp_chain: &'a [u64],
    /// How user frames are found.
    pub mode: UserFrames,
}

/// Unwinds user stacks and describes their frames.
pub trait UserStacks: Send {
    /// The user frames of a sample, leaf first, and how unwinding ended
    /// (`None`: it reached the outermost frame).
    fn unwind(&mut self, input: &UserInput<'_>) -> (Vec<FrameDesc>, Option<StackUnwindError>);
    /// Drops every cached process state (`unwind_state_clear_period_ms`).
    fn clear(&mut self);
    /// Drops process `pid`'s state: it exec'd or exited.
    fn forget(&mut self, _pid: u32) {}
    /// The bytes of cached state it holds, as it reckons them (what the
    /// memory guardrail weighs of it).
    fn footprint_bytes(&self) -> u64 {
        0
    }
}

/// What one parsed ELF module in the unwinder's cache is reckoned to hold
/// (its unwind tables and symbols; the unwinder keeps no byte count).
pub const MODULE_BYTES: u64 = 256 << 10;

/// An unwinder that reads no ELF file and no `/proc`: user frames of the
/// kernel's frame-pointer chain, each in an unnamed mapping; in the modes
/// that unwind the stack copy no user frames, reported as
/// `UNWIND_ERROR_UNSUPPORTED` on every sample.
#[derive(Debug, Default)]
pub struct ChainOnly;

impl UserStacks for ChainOnly {
    fn unwind(&mut self, input: &UserInput<'_>) -> (Vec<FrameDesc>, Option<StackUnwindError>) {
        match input.mode {
            UserFrames::Skip => (Vec::new(), None),
            UserFrames::KernelFramePointer => (
                input
                    .fp_chain
                    .iter()
                    .map(|&pc| FrameDesc {
                        mapping: MappingDesc::default(),
                        rel_pc: pc,
                        function: None,
                    })
                    .collect(),
                None,
            ),
            UserFrames::Dwarf | UserFrames::FramePointer => {
                (Vec::new(), Some(StackUnwindError::UnwindErrorUnsupported))
            }
        }
    }

    fn clear(&mut self) {}
}

/// DWARF unwinding of the stack copy (`perf::unwind`, framehop over the
/// process's ELF files), frames named at record time where the binary has
/// symbols; `FramePointer` walks the chain in the stack copy, and
/// `KernelFramePointer` takes the kernel's walk of it, each pc placed in its
/// mapping and named the same way. An unwinding error ends the callstack
/// with upstream's `ERROR <kind>` frame.
///
/// The second field is how many modules the unwinder had loaded at its
/// last clear (those since are the ones it holds).
#[derive(Debug, Default)]
pub struct DwarfStacks(pub(crate) crate::perf::unwind::Unwinder, pub(crate) u64);

impl DwarfStacks {
    fn frame(&mut self, pid: u32, f: &crate::perf::unwind::Frame) -> FrameDesc {
        let function = self.0.symbolize(pid, f).map(|s| s.name);
        frame_desc(f, function)
    }

    /// An unwound stack's frames as the trace describes them, ended by
    /// upstream's `ERROR <kind>` frame when unwinding failed.
    fn described(
        &mut self,
        pid: u32,
        u: &crate::perf::unwind::UnwoundStack,
    ) -> (Vec<FrameDesc>, Option<StackUnwindError>) {
        let mut frames: Vec<FrameDesc> = u.frames.iter().map(|f| self.frame(pid, f)).collect();
        if u.error == crate::perf::unwind::UnwindErrorKind::None {
            return (frames, None);
        }
        frames.extend(error_frame(u.error));
        (frames, StackUnwindError::from_i32(u.error.proto_value()))
    }
}

impl UserStacks for DwarfStacks {
    fn unwind(&mut self, input: &UserInput<'_>) -> (Vec<FrameDesc>, Option<StackUnwindError>) {
        use crate::perf::unwind::{UnwindMode, UserRegs, UserSample};
        match input.mode {
            UserFrames::Skip => (Vec::new(), None),
            UserFrames::KernelFramePointer => {
                let u = self.0.place(input.pid, input.fp_chain);
                self.described(input.pid, &u)
            }
            UserFrames::Dwarf | UserFrames::FramePointer => {
                let (Some(regs), Some(stack)) = (input.sample.regs_user, input.sample.stack_user)
                else {
                    return (
                        Vec::new(),
                        Some(StackUnwindError::UnwindErrorInvalidParameter),
                    );
                };
                let mask = crate::perf::event::REGS_USER_MASK;
                let values: Vec<u64> = (0..64u32)
                    .filter(|b| mask & (1 << b) != 0)
                    .filter_map(|b| regs.get(b))
                    .collect();
                let Ok(regs) = UserRegs::from_perf_x86_64(regs.abi, mask, &values) else {
                    return (Vec::new(), Some(StackUnwindError::UnwindErrorBadArch));
                };
                let sample = UserSample {
                    regs,
                    stack,
                    stack_maxed: stack.len() >= crate::perf::event::STACK_USER_BYTES as usize,
                };
                let mode = if input.mode == UserFrames::FramePointer {
                    UnwindMode::FramePointer
                } else {
                    UnwindMode::Dwarf
                };
                let u = self.0.unwind(input.pid, &sample, mode);
                self.described(input.pid, &u)
            }
        }
    }

    fn clear(&mut self) {
        self.0.clear();
        self.1 = self.0.stats().modules.loaded;
    }

    fn forget(&mut self, pid: u32) {
        self.0.forget_process(pid);
    }

    fn footprint_bytes(&self) -> u64 {
        let held = self.0.stats().modules.loaded.saturating_sub(self.1);
        held.saturating_mul(MODULE_BYTES)
    }
}

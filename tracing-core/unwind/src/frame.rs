//! What an unwind gives the sampler: frames leaf first, each with its pc,
//! its mapping (file, offsets, build id: Perfetto's `Mapping` fields) and
//! its `rel_pc`, and the error that stopped the walk, if any. A stack that
//! stopped early always says why; [`UnwoundStack::callstack`] adds the
//! synthetic `"ERROR <NAME>"` frame `traced_perf` appends below the frames
//! it recovered, so the callstack a trace shows is the same.
//!
//! Return addresses are reported one byte back (the call instruction, not
//! the one after it), pc and `rel_pc` alike, as libunwindstack does on
//! x86-64 for every frame but the first.

use std::sync::Arc;

use super::elf_module::{ElfError, ElfModule};
use super::error::{UnwindErrorKind, UnwindFailure};
use super::maps::Mapping;
use super::symbols::Symbol;

/// A mapping of the process, with the module its file loaded as.
#[derive(Debug)]
pub struct FrameMapping {
    /// The maps line.
    pub mapping: Mapping,
    module: Option<Arc<ElfModule>>,
    module_error: Option<ElfError>,
}

impl FrameMapping {
    /// A mapping and the outcome of loading its ELF (`None` when it has
    /// no ELF to load: anonymous memory, the stack, a data mapping).
    pub fn new(mapping: Mapping, module: Option<Result<Arc<ElfModule>, ElfError>>) -> Self {
        let (module, module_error) = match module {
            Some(Ok(m)) => (Some(m), None),
            Some(Err(e)) => (None, Some(e)),
            None => (None, None),
        };
        FrameMapping {
            mapping,
            module,
            module_error,
        }
    }

    /// The ELF module, if it loaded.
    pub fn module(&self) -> Option<&Arc<ElfModule>> {
        self.module.as_ref()
    }

    /// Why the ELF did not load, for a mapping that has one.
    pub fn module_error(&self) -> Option<&ElfError> {
        self.module_error.as_ref()
    }

    /// The GNU build id, raw.
    pub fn build_id(&self) -> Option<&[u8]> {
        self.module.as_ref()?.build_id()
    }

    /// `Mapping.exact_offset`: the file offset of the mapping's start.
    pub fn exact_offset(&self) -> u64 {
        self.mapping.offset
    }

    /// `Mapping.start_offset`: the file offset where the ELF starts (0: the
    /// ELF is the whole file).
    pub fn start_offset(&self) -> u64 {
        0
    }

    /// `Mapping.load_bias`: the module's load bias, 0 without a module.
    pub fn load_bias(&self) -> u64 {
        self.module.as_ref().map_or(0, |m| m.load_bias())
    }

    /// `rel_pc` of `pc` (in this mapping), libunwindstack's way:
    /// `pc - start + offset + load_bias` for an ELF, `pc - start` for
    /// memory without one.
    pub fn rel_pc(&self, pc: u64) -> u64 {
        let in_map = pc.wrapping_sub(self.mapping.start);
        match &self.module {
            Some(m) => in_map
                .wrapping_add(self.mapping.offset)
                .wrapping_add(m.load_bias()),
            None => in_map,
        }
    }

    /// The ELF function holding `rel_pc`; `None` without a module or in a
    /// stripped one (JIT code is named by [`Unwinder::symbolize`]).
    ///
    /// [`Unwinder::symbolize`]: super::Unwinder::symbolize
    pub fn symbolize(&self, rel_pc: u64) -> Option<Symbol> {
        self.module.as_ref()?.symbolize(rel_pc)
    }

    /// The frame of `pc` in this mapping; a return address is moved back
    /// one byte.
    pub(crate) fn frame(self: &Arc<Self>, pc: u64, is_return: bool) -> Frame {
        let rel_pc = self.rel_pc(pc);
        let back = u64::from(is_return && rel_pc != 0);
        Frame {
            pc: pc.wrapping_sub(back),
            rel_pc: rel_pc.wrapping_sub(back),
            mapping: Some(Arc::clone(self)),
        }
    }
}

/// One recovered frame.
#[derive(Debug, Clone)]
pub struct Frame {
    /// The absolute pc (a return address minus one, past the first frame).
    pub pc: u64,
    /// The pc relative to the ELF's load (Perfetto's `Frame.rel_pc`).
    pub rel_pc: u64,
    /// The mapping the pc is in; `None` only for a pc outside every
    /// mapping (the last frame of an `INVALID_MAP` stack).
    pub mapping: Option<Arc<FrameMapping>>,
}

/// A callstack entry as the trace shows it.
#[derive(Debug, Clone, Copy)]
pub enum CallstackEntry<'a> {
    /// A recovered frame.
    Frame(&'a Frame),
    /// The synthetic frame naming the error: no mapping, empty build id,
    /// `rel_pc` 0, this function name.
    Error {
        /// `"ERROR "` and the error's upstream name.
        function_name: &'static str,
    },
}

/// The result of one unwind.
#[derive(Debug, Clone)]
pub struct UnwoundStack {
    /// Frames, leaf first.
    pub frames: Vec<Frame>,
    /// `UNWIND_ERROR_NONE` for a stack walked to its root, else why it
    /// stopped (also `PerfSample.unwind_error`).
    pub error: UnwindErrorKind,
    /// The detail behind `error`.
    pub failure: Option<UnwindFailure>,
    /// Whether `/proc/PID/maps` was read again for this sample.
    pub maps_reread: bool,
}

impl UnwoundStack {
    /// A stack walked to its root.
    pub fn complete(frames: Vec<Frame>) -> Self {
        UnwoundStack {
            frames,
            error: UnwindErrorKind::None,
            failure: None,
            maps_reread: false,
        }
    }

    /// The frames, cut short by `failure` if there is one.
    pub(crate) fn of(frames: Vec<Frame>, failure: Option<UnwindFailure>) -> Self {
        match failure {
            Some(f) => Self::failed(frames, f),
            None => Self::complete(frames),
        }
    }

    /// A stack cut short by `failure`, with the frames before it.
    pub fn failed(frames: Vec<Frame>, failure: UnwindFailure) -> Self {
        UnwoundStack {
            frames,
            error: failure.kind(),
            failure: Some(failure),
            maps_reread: false,
        }
    }

    /// The frames and then, for an incomplete stack, the synthetic error
    /// frame: what `traced_perf` interns as the sample's callstack (leaf
    /// first; kernel frames, if any, go before these).
    pub fn callstack(&self) -> impl Iterator<Item = CallstackEntry<'_>> {
        self.frames.iter().map(CallstackEntry::Frame).chain(
            self.error
                .error_frame_name()
                .map(|function_name| CallstackEntry::Error { function_name }),
        )
    }
}

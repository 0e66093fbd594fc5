//! The one place that knows the CPU: DWARF CFI unwinding through
//! `framehop` on x86-64 (its rules from `.eh_frame`/`.debug_frame`, and its
//! frame-pointer rule where a module has none), and on every other
//! architecture a stand-in whose every step is `UNSUPPORTED`, chosen at
//! compile time so nothing panics at run time.
//!
//! A step takes the registers of one frame and gives the caller's, reading
//! only the stack copy. `framehop` gives no sign when it fell back from CFI
//! to frame pointers; where that fallback fails the step reports how.

use std::ops::Range;
use std::sync::Arc;

use super::elf_module::ElfModule;
use super::regs::UserRegs;
use super::stack::StackCopy;

/// Whether unwinding is built for this architecture.
pub const SUPPORTED: bool = cfg!(target_arch = "x86_64");

/// Why a step did not reach the caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StepError {
    /// A read outside the stack copy.
    StackRead(u64),
    /// The frame chain moved backwards or overflowed.
    BrokenChain,
    /// pc and sp would stay the same.
    DidNotAdvance,
    /// Not built for this architecture.
    #[cfg_attr(target_arch = "x86_64", allow(dead_code))]
    Unsupported,
}

#[cfg(target_arch = "x86_64")]
mod native {
    use super::*;
    use framehop::x86_64::{CacheX86_64, UnwindRegsX86_64, UnwinderX86_64};
    use framehop::{Error, ExplicitModuleSectionInfo, FrameAddress, Module, Unwinder};

    /// The rule cache and DWARF evaluation context, shared by every
    /// process's unwinder (entries are keyed by each unwinder's own module
    /// generation, so they never mix).
    pub struct DwarfCache(CacheX86_64);

    impl DwarfCache {
        pub fn new() -> Self {
            DwarfCache(CacheX86_64::new())
        }

        /// Rule-cache (hits, misses) so far.
        pub fn hits_misses(&self) -> (u64, u64) {
            let s = self.0.stats();
            (s.hits(), s.misses())
        }
    }

    /// One process's modules as `framehop` knows them.
    pub struct DwarfUnwinder(UnwinderX86_64<Arc<[u8]>>);

    impl DwarfUnwinder {
        pub fn new() -> Self {
            DwarfUnwinder(UnwinderX86_64::new())
        }

        /// Adds the executable mapping `avma` of `module`, where address
        /// `a` has ELF address `a - base_avma`.
        pub fn add_module(
            &mut self,
            name: String,
            avma: Range<u64>,
            base_avma: u64,
            module: &ElfModule,
        ) {
            let info = ExplicitModuleSectionInfo {
                base_svma: 0,
                text_svma: module.text.clone(),
                got_svma: module.got.clone(),
                eh_frame_svma: module.eh_frame.as_ref().map(|s| s.svma.clone()),
                eh_frame: module.eh_frame.as_ref().map(|s| Arc::clone(&s.data)),
                eh_frame_hdr_svma: module.eh_frame_hdr.as_ref().map(|s| s.svma.clone()),
                eh_frame_hdr: module.eh_frame_hdr.as_ref().map(|s| Arc::clone(&s.data)),
                debug_frame: module.debug_frame.as_ref().map(|s| Arc::clone(&s.data)),
                ..Default::default()
            };
            self.0.add_module(Module::new(name, avma, base_avma, info));
        }

        /// One step from `regs` (`is_return`: `regs.ip` is a return
        /// address, not the sampled pc): `Ok(None)` at the stack's root.
        pub fn step(
            &self,
            cache: &mut DwarfCache,
            regs: &mut UserRegs,
            is_return: bool,
            stack: &StackCopy<'_>,
        ) -> Result<Option<()>, StepError> {
            let address = if is_return {
                match FrameAddress::from_return_address(regs.ip) {
                    Some(a) => a,
                    None => return Ok(None),
                }
            } else {
                FrameAddress::from_instruction_pointer(regs.ip)
            };
            let mut r = UnwindRegsX86_64::new(regs.ip, regs.sp, regs.bp);
            let mut read = |addr: u64| stack.read_u64(addr).map_err(|_| ());
            match self
                .0
                .unwind_frame(address, &mut r, &mut cache.0, &mut read)
            {
                Ok(Some(ra)) => {
                    *regs = UserRegs {
                        ip: ra,
                        sp: r.sp(),
                        bp: r.bp(),
                    };
                    Ok(Some(()))
                }
                Ok(None) | Err(Error::ReturnAddressIsNull) => Ok(None),
                Err(Error::CouldNotReadStack(addr)) => Err(StepError::StackRead(addr)),
                Err(Error::DidNotAdvance) => Err(StepError::DidNotAdvance),
                Err(Error::FramepointerUnwindingMovedBackwards | Error::IntegerOverflow) => {
                    Err(StepError::BrokenChain)
                }
            }
        }
    }
}

#[cfg(not(target_arch = "x86_64"))]
mod native {
    use super::*;

    /// Stand-in: nothing to cache.
    pub struct DwarfCache;

    impl DwarfCache {
        pub fn new() -> Self {
            DwarfCache
        }

        pub fn hits_misses(&self) -> (u64, u64) {
            (0, 0)
        }
    }

    /// Stand-in: every step is unsupported.
    pub struct DwarfUnwinder;

    impl DwarfUnwinder {
        pub fn new() -> Self {
            DwarfUnwinder
        }

        pub fn add_module(&mut self, _: String, _: Range<u64>, _: u64, _: &ElfModule) {}

        pub fn step(
            &self,
            _: &mut DwarfCache,
            _: &mut UserRegs,
            _: bool,
            _: &StackCopy<'_>,
        ) -> Result<Option<()>, StepError> {
            Err(StepError::Unsupported)
        }
    }
}

pub(crate) use native::{DwarfCache, DwarfUnwinder};

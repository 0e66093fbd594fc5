//! One CPU's perf ring buffer as the readers see it: the [`PerfBuffer`]
//! trait, which the kernel's mapped buffer ([`CpuEvent`]) implements and
//! tests implement with fabricated records, so that the drain thread and
//! the data source's stop are tested without the kernel.

use std::os::fd::OwnedFd;

use super::event::CpuEvent;
use super::ring::RingError;

/// A CPU's ring buffer and the events that fill it.
pub trait PerfBuffer: Send {
    /// The CPU.
    fn cpu(&self) -> u32;
    /// A descriptor that polls readable when the buffer passed its
    /// wake-up watermark.
    fn watch_fd(&self) -> std::io::Result<OwnedFd>;
    /// Starts sampling.
    fn enable(&self) -> std::io::Result<()>;
    /// Stops sampling (what is in the buffer stays readable).
    fn disable(&self) -> std::io::Result<()>;
    /// Appends every byte written since the last read to `out` and gives
    /// that space back; with `stack_size`, each sample's stack copy of
    /// that many requested bytes is cut to what was filled. Returns how
    /// many bytes were appended.
    fn read(&mut self, out: &mut Vec<u8>, stack_size: Option<u64>) -> Result<usize, RingError>;
}

impl PerfBuffer for CpuEvent {
    fn cpu(&self) -> u32 {
        CpuEvent::cpu(self)
    }

    fn watch_fd(&self) -> std::io::Result<OwnedFd> {
        CpuEvent::watch_fd(self)
    }

    fn enable(&self) -> std::io::Result<()> {
        CpuEvent::enable(self)
    }

    fn disable(&self) -> std::io::Result<()> {
        CpuEvent::disable(self)
    }

    fn read(&mut self, out: &mut Vec<u8>, stack_size: Option<u64>) -> Result<usize, RingError> {
        match stack_size {
            Some(n) => self.read_compacted_into(out, n),
            None => self.read_into(out),
        }
    }
}

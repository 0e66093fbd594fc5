//! How much work a load did, counted as it goes: the trace bytes it took in
//! (after every decompression) and the steps its per-event structures took
//! (packets read, slice-stack entries pushed, popped or looked at, async
//! track slots searched). A hostile trace must not make the steps grow
//! faster than the bytes; a test and the fuzz harness bound the one by the
//! other, without timing anything.

/// The work of one load.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct LoadWork {
    /// Bytes of trace taken in: every byte pushed plus every byte a
    /// `compressed_packets` field inflated to.
    pub bytes: u64,
    /// Steps of the per-event work (see the module's documentation).
    pub steps: u64,
}

impl LoadWork {
    /// Counts `n` more steps.
    pub fn step(&mut self, n: u64) {
        self.steps = self.steps.saturating_add(n);
    }

    /// Counts `n` more bytes taken in.
    pub fn take(&mut self, n: u64) {
        self.bytes = self.bytes.saturating_add(n);
    }
}

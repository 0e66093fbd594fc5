//! What a writer does when every chunk of the shared memory buffer is taken.

use std::time::Duration;

/// Policy applied when no free chunk can be found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BufferExhaustedPolicy {
    /// Wait (bounded back-off between attempts) until a chunk frees up; never drops.
    #[default]
    Stall,
    /// Drop packets at once until a chunk is available again.
    Drop,
    /// Stall up to [`StallConfig::max_stalls`] attempts, then drop.
    StallThenDrop,
}

/// Back-off parameters for the stalling policies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StallConfig {
    /// Attempts after which `StallThenDrop` gives up (Perfetto: 300).
    pub max_stalls: u32,
    /// Cap on the sleep between attempts (Perfetto: 100 ms).
    pub max_interval: Duration,
}

impl Default for StallConfig {
    fn default() -> Self {
        StallConfig {
            max_stalls: 300,
            max_interval: Duration::from_millis(100),
        }
    }
}

impl StallConfig {
    /// The sleep after one of `prev` µs: `(prev + 1) × 8` µs, capped.
    pub fn next_interval(&self, prev: Duration) -> Duration {
        let us = (prev.as_micros() as u64)
            .saturating_add(1)
            .saturating_mul(8);
        Duration::from_micros(us).min(self.max_interval)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn back_off_grows_and_caps() {
        let c = StallConfig::default();
        let mut d = Duration::ZERO;
        let mut seen = vec![];
        for _ in 0..7 {
            d = c.next_interval(d);
            seen.push(d.as_micros());
        }
        assert_eq!(seen, [8, 72, 584, 4680, 37448, 100_000, 100_000]);
    }
}

//! What a writer does when every chunk of the shared memory buffer is taken.

use std::time::Duration;

/// Policy applied when no free chunk can be found: Perfetto's, numbered as
/// DataSourceConfig's `buffer_exhausted_policy` numbers them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BufferExhaustedPolicy {
    /// Drop packets at once until a chunk is available again (`DROP`, 1);
    /// the next packet written says so (`previous_packet_dropped`), and
    /// the service counts it in `trace_writer_packet_loss`.
    Drop,
    /// Wait (bounded back-off) up to [`StallConfig::max_stalls`] attempts,
    /// then abort the process with a message naming the cause
    /// (`STALL_THEN_ABORT`, 2; what Perfetto's `kStall` does).
    #[default]
    StallThenAbort,
    /// Wait up to [`StallConfig::max_stalls`] attempts, then drop
    /// (`STALL_THEN_DROP`, 3).
    StallThenDrop,
}

impl BufferExhaustedPolicy {
    /// The policy a DataSourceConfig asks for (`buffer_exhausted_policy`,
    /// field 9), if it names one.
    pub fn from_config_value(v: i32) -> Option<BufferExhaustedPolicy> {
        match v {
            1 => Some(BufferExhaustedPolicy::Drop),
            2 => Some(BufferExhaustedPolicy::StallThenAbort),
            3 => Some(BufferExhaustedPolicy::StallThenDrop),
            _ => None,
        }
    }

    /// The policy of an encoded DataSourceConfig, or `default` when it
    /// names none (unset, `UNSPECIFIED` or a number we do not know).
    pub fn from_data_source_config(config: &[u8], default: BufferExhaustedPolicy) -> Self {
        protozero::Decoder::new(config)
            .find_last(9)
            .and_then(|f| f.as_u64().ok())
            .and_then(|v| i32::try_from(v).ok())
            .and_then(Self::from_config_value)
            .unwrap_or(default)
    }
}

/// Back-off parameters for the stalling policies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StallConfig {
    /// Attempts after which the stalling policies give up (Perfetto: 300).
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

//! `compressed_packets`: a zlib stream holding more `TracePacket`s (framed
//! as a `Trace`), inflated with a cap on the output so a small hostile
//! payload cannot claim unbounded memory: at most [`MAX_INFLATED`] bytes,
//! and no more than the load's budget has left (`budget.rs`).

use std::io::Read;

use super::tokenizer::TraceTokenizer;
use super::{Loader, MAX_COMPRESSION_DEPTH};
use crate::error::TraceError;

/// Most bytes one `compressed_packets` field may inflate to.
pub const MAX_INFLATED: u64 = 64 << 20;

/// Why a payload was not inflated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InflateError {
    /// Not a valid zlib stream.
    Corrupt,
    /// More than the bytes allowed.
    TooLarge,
}

/// Inflates a zlib stream, at most `max` bytes (and never more than
/// [`MAX_INFLATED`]).
pub fn inflate(payload: &[u8], max: u64) -> Result<Vec<u8>, InflateError> {
    let max = max.min(MAX_INFLATED);
    let mut out = Vec::new();
    let mut dec = flate2::read::ZlibDecoder::new(payload).take(max.saturating_add(1));
    dec.read_to_end(&mut out)
        .map_err(|_| InflateError::Corrupt)?;
    if out.len() as u64 > max {
        return Err(InflateError::TooLarge);
    }
    Ok(out)
}

impl Loader {
    /// Expands a packet's `compressed_packets` (at nesting `depth`) into
    /// the packets they hold, within the load's budget.
    pub(super) fn on_compressed(&mut self, compressed: &[u8], depth: u32) {
        if depth >= MAX_COMPRESSION_DEPTH {
            self.parser.storage.stats.incr("tokenizer_skipped_packets");
            return;
        }
        let taken = self.bytes_pushed.saturating_add(self.grown());
        let left = self.budget.max_memory.saturating_sub(taken);
        // A top-level payload the parallel pre-stage inflated with the cap
        // this call would use (`parallel/batch.rs`) is taken as it is.
        let ready = match self.ahead.take_ready() {
            Some(r) if depth == 0 && r.serves(compressed, left) => Some(r.into_result()),
            _ => None,
        };
        let inflated = match ready.unwrap_or_else(|| inflate(compressed, left)) {
            Ok(b) => b,
            Err(InflateError::TooLarge) if left < MAX_INFLATED => {
                self.failed = Some(TraceError::OverBudget {
                    limit: self.budget.max_memory,
                });
                return;
            }
            Err(_) => {
                self.parser.storage.stats.incr("tokenizer_skipped_packets");
                return;
            }
        };
        self.inflated = self.inflated.saturating_add(inflated.len() as u64);
        self.parser.storage.work.take(inflated.len() as u64);
        if let Err(e) = self.check_budget() {
            self.failed = Some(e);
            return;
        }
        let mut inner = TraceTokenizer::default();
        let res = inner.push(&inflated, &mut |p| self.on_packet(p, depth + 1));
        if res.is_err() || inner.pending_len() > 0 {
            self.parser.storage.stats.incr("tokenizer_skipped_packets");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn round_trip_and_garbage() {
        let mut enc = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        enc.write_all(b"hello").unwrap();
        let z = enc.finish().unwrap();
        assert_eq!(inflate(&z, MAX_INFLATED).unwrap(), b"hello");
        assert_eq!(inflate(&z, 4), Err(InflateError::TooLarge));
        assert_eq!(
            inflate(b"not zlib", MAX_INFLATED),
            Err(InflateError::Corrupt)
        );
    }
}

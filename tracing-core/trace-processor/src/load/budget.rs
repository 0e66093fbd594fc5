//! The memory budget of a load. A small hostile file must not claim
//! gigabytes: a 1.5 MB file of ten 60 MiB `compressed_packets`, or a
//! 600 MiB gzip stream, took 2.6 GB and half a minute. Two limits, both
//! checked as packets arrive, on the load's memory as the loader counts
//! it: the trace's bytes once decompressed (the arena keeps a copy of
//! each packet until the parsers read it) plus the record it keeps per
//! packet (which outweighs a tiny packet twenty times). The first bounds
//! that memory (the load's peak, tables included, is about 2.5 times it);
//! the second bounds how many times its size compressed input may grow
//! into it (beyond a floor, so small traces that compress well still
//! load). Upstream has neither; a user who trusts a trace raises the
//! first, which lifts the second.

use crate::error::TraceError;

/// How much one load may take in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoadBudget {
    /// Most memory a load counts: its bytes once a gzip file is inflated,
    /// plus every byte its `compressed_packets` inflate to, plus the
    /// loader's record of each packet.
    pub max_memory: u64,
    /// Most times compressed bytes may grow once more than
    /// [`LoadBudget::RATIO_FLOOR`] bytes came out of them; None: unchecked.
    pub max_inflation_ratio: Option<u64>,
}

impl Default for LoadBudget {
    fn default() -> Self {
        LoadBudget {
            max_memory: Self::DEFAULT_MAX_MEMORY,
            max_inflation_ratio: Some(Self::DEFAULT_MAX_INFLATION_RATIO),
        }
    }
}

impl LoadBudget {
    /// The default limit on the memory counted: 6 GiB, a load of about
    /// 15 GiB at its peak (a 24 GiB machine gives that); far more than the
    /// traces Perfetto records with its default buffers need.
    pub const DEFAULT_MAX_MEMORY: u64 = 6 << 30;
    /// The default limit on inflation: 100 times (protobuf traces deflate
    /// by 5 to 20 times; zeros by a thousand).
    pub const DEFAULT_MAX_INFLATION_RATIO: u64 = 100;
    /// Inflated bytes below which the ratio is not checked.
    pub const RATIO_FLOOR: u64 = 64 << 20;

    /// A budget a user chose: at most `max_memory` bytes, whatever the
    /// ratio.
    pub fn with_max_memory(max_memory: u64) -> Self {
        LoadBudget {
            max_memory,
            max_inflation_ratio: None,
        }
    }

    /// Whether `taken` bytes of memory are within the limit.
    pub fn check_bytes(&self, taken: u64) -> Result<(), TraceError> {
        if taken > self.max_memory {
            return Err(TraceError::OverBudget {
                limit: self.max_memory,
            });
        }
        Ok(())
    }

    /// Whether `inflated` bytes of memory that came out of `compressed`
    /// bytes are within the ratio.
    pub fn check_ratio(&self, inflated: u64, compressed: u64) -> Result<(), TraceError> {
        match self.max_inflation_ratio {
            Some(max_ratio)
                if inflated > Self::RATIO_FLOOR
                    && inflated > compressed.saturating_mul(max_ratio) =>
            {
                Err(TraceError::InflationRatio {
                    compressed,
                    inflated,
                    max_ratio,
                })
            }
            _ => Ok(()),
        }
    }

    /// A size as the command line takes it: bytes, or a number with a
    /// binary suffix `K`, `M`, `G` or `T` (`8G`: 8 GiB; an optional `iB`
    /// or `B` after it).
    pub fn parse_size(text: &str) -> Result<u64, String> {
        let t = text.trim();
        let t = t
            .strip_suffix("iB")
            .or_else(|| t.strip_suffix('B'))
            .unwrap_or(t);
        let (digits, shift) = match t.char_indices().last() {
            Some((i, c)) if c.is_ascii_alphabetic() => {
                let shift = match c.to_ascii_uppercase() {
                    'K' => 10,
                    'M' => 20,
                    'G' => 30,
                    'T' => 40,
                    _ => return Err(format!("{text}: a size is bytes, or K, M, G or T")),
                };
                (&t[..i], shift)
            }
            _ => (t, 0),
        };
        let n: u64 = digits
            .trim()
            .parse()
            .map_err(|_| format!("{text}: not a size (bytes, or K, M, G or T)"))?;
        n.checked_mul(1u64 << shift)
            .ok_or_else(|| format!("{text}: too large"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_binary_suffixes() {
        assert_eq!(LoadBudget::parse_size("123"), Ok(123));
        assert_eq!(LoadBudget::parse_size("8G"), Ok(8 << 30));
        assert_eq!(LoadBudget::parse_size("512MiB"), Ok(512 << 20));
        assert_eq!(LoadBudget::parse_size("2k"), Ok(2048));
        assert!(LoadBudget::parse_size("8X").is_err());
        assert!(LoadBudget::parse_size("").is_err());
        assert!(LoadBudget::parse_size("99999999999T").is_err());
    }

    #[test]
    fn the_ratio_is_checked_past_its_floor_only() {
        let b = LoadBudget::default();
        assert!(b.check_ratio(LoadBudget::RATIO_FLOOR, 1).is_ok());
        assert!(b.check_ratio(LoadBudget::RATIO_FLOOR + 1, 1).is_err());
        let big = 1 << 30;
        assert!(b.check_ratio(big, big / 100 + 1).is_ok());
        assert!(b.check_ratio(big, big / 101).is_err());
        assert!(
            LoadBudget::with_max_memory(u64::MAX)
                .check_ratio(big, 1)
                .is_ok()
        );
        assert!(b.check_bytes(LoadBudget::DEFAULT_MAX_MEMORY).is_ok());
        assert!(b.check_bytes(LoadBudget::DEFAULT_MAX_MEMORY + 1).is_err());
    }
}

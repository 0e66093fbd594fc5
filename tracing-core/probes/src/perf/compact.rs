//! Copying a ring buffer's records out without the unused part of their
//! stack copies. A DWARF sample reserves its whole `sample_stack_user`
//! (64 KiB) in the ring, but the kernel fills only `dyn_size` bytes of it
//! (the stack between `sp` and its top: a few KiB for most threads).
//! Copying the rest costs most of a sampler's time and memory for
//! nothing, so each sample record is copied with its stack data cut to
//! `dyn_size` (rounded up to 8 bytes), its `size` word and header size
//! rewritten to match; the parser reads the result like any record.
//!
//! This relies on the stack copy being the sample's last field (true of
//! every layout `linux.perf` asks for: nothing after `STACK_USER`), and
//! checks it on each record: a record whose `size` word is not where the
//! requested size puts it is copied whole. The committed bytes come as
//! the ring's two runs (before and after its end); records may straddle
//! them.

use super::abi::record;
use super::ring::RingError;

/// The committed bytes of a ring: its run up to the buffer's end, then
/// the run from its start.
#[derive(Debug, Clone, Copy)]
pub struct TwoRuns<'a> {
    /// The bytes from the tail to the buffer's end (or to the head).
    pub first: &'a [u8],
    /// The bytes from the buffer's start to the head (if it wrapped).
    pub second: &'a [u8],
}

impl TwoRuns<'_> {
    fn len(&self) -> usize {
        self.first.len() + self.second.len()
    }

    /// Appends bytes `[at, at + len)` of the concatenation.
    fn copy(&self, at: usize, len: usize, out: &mut Vec<u8>) {
        let end = at + len;
        let f = self.first.len();
        if at < f {
            out.extend_from_slice(&self.first[at..end.min(f)]);
        }
        if end > f {
            out.extend_from_slice(&self.second[at.max(f) - f..end - f]);
        }
    }

    fn u64_at(&self, at: usize) -> u64 {
        let mut b = Vec::with_capacity(8);
        self.copy(at, 8, &mut b);
        let mut a = [0u8; 8];
        a.copy_from_slice(&b);
        u64::from_le_bytes(a)
    }
}

/// Appends the records of `runs` to `out`, each sample's stack copy of
/// `stack_size` requested bytes cut to the bytes the kernel filled.
/// Returns the bytes the ring held. A record whose size is 0 or runs past
/// the committed bytes is an error; the records before it were copied.
pub fn copy_compacted(
    runs: TwoRuns<'_>,
    stack_size: u64,
    out: &mut Vec<u8>,
) -> Result<usize, RingError> {
    let total = runs.len();
    let stack = usize::try_from(stack_size).unwrap_or(usize::MAX);
    let mut at = 0;
    while at < total {
        let left = total - at;
        if left < 8 {
            return Err(RingError::BadRecord { at, size: 0, left });
        }
        let header = runs.u64_at(at);
        let kind = header as u32;
        let size = usize::from((header >> 48) as u16);
        if size < 8 || size > left {
            return Err(RingError::BadRecord { at, size, left });
        }
        // `... u64 size; u8 data[size]; u64 dyn_size` at the record's end.
        let fits = stack > 0 && kind == record::SAMPLE && size >= 8 + 8 + stack + 8;
        let size_word = if fits { at + size - 8 - stack - 8 } else { 0 };
        if fits && runs.u64_at(size_word) == stack_size {
            let dyn_size = runs.u64_at(at + size - 8);
            let keep = usize::try_from(dyn_size)
                .unwrap_or(usize::MAX)
                .min(stack)
                .next_multiple_of(8);
            let new_size = size - (stack - keep);
            let mut h = header.to_le_bytes();
            h[6..8].copy_from_slice(&(new_size as u16).to_le_bytes());
            out.extend_from_slice(&h);
            runs.copy(at + 8, size_word - (at + 8), out);
            out.extend_from_slice(&(keep as u64).to_le_bytes());
            runs.copy(size_word + 8, keep, out);
            out.extend_from_slice(&dyn_size.to_le_bytes());
        } else {
            runs.copy(at, size, out);
        }
        at += size;
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::perf::abi::sample;
    use crate::perf::records::{Record, SampleLayout, parse_record};
    use crate::perf::ring::records;
    use proptest::prelude::*;

    const STACK: u64 = 64;

    fn sample_record(tid: u32, dyn_size: u64) -> Vec<u8> {
        let mut body = Vec::new();
        body.extend_from_slice(&7u32.to_le_bytes());
        body.extend_from_slice(&tid.to_le_bytes());
        body.extend_from_slice(&STACK.to_le_bytes());
        body.extend((0..STACK).map(|i| i as u8));
        body.extend_from_slice(&dyn_size.to_le_bytes());
        let mut r = Vec::new();
        r.extend_from_slice(&record::SAMPLE.to_le_bytes());
        r.extend_from_slice(&2u16.to_le_bytes());
        r.extend_from_slice(&((body.len() + 8) as u16).to_le_bytes());
        r.extend_from_slice(&body);
        r
    }

    fn lost_record() -> Vec<u8> {
        let mut r = Vec::new();
        r.extend_from_slice(&record::LOST.to_le_bytes());
        r.extend_from_slice(&0u16.to_le_bytes());
        r.extend_from_slice(&24u16.to_le_bytes());
        r.extend_from_slice(&1u64.to_le_bytes());
        r.extend_from_slice(&5u64.to_le_bytes());
        r
    }

    const LAYOUT: SampleLayout = SampleLayout {
        sample_type: sample::TID | sample::STACK_USER,
        read_format: 0,
        regs_user_mask: 0,
    };

    /// What the parser makes of records: tid and stack of each sample,
    /// and lost counts.
    fn parsed(bytes: &[u8]) -> Vec<(u32, Vec<u8>, u64)> {
        records(bytes)
            .map(|r| match parse_record(r.unwrap(), &LAYOUT).unwrap() {
                Record::Sample(s) => (s.tid.unwrap(), s.stack_user.unwrap_or_default().to_vec(), 0),
                Record::Lost { lost, .. } => (0, Vec::new(), lost),
                other => panic!("{other:?}"),
            })
            .collect()
    }

    #[test]
    fn samples_keep_their_filled_stack_and_nothing_else_changes() {
        let mut ring = sample_record(1, 20);
        ring.extend(lost_record());
        ring.extend(sample_record(2, 64));
        ring.extend(sample_record(3, 0));
        let mut out = Vec::new();
        let n = copy_compacted(
            TwoRuns {
                first: &ring,
                second: &[],
            },
            STACK,
            &mut out,
        )
        .unwrap();
        assert_eq!(n, ring.len());
        assert!(out.len() < ring.len());
        assert_eq!(parsed(&out), parsed(&ring));
        // The first sample's stack: 20 bytes filled, 24 copied.
        let first = records(&out).next().unwrap().unwrap();
        assert_eq!(first.len(), 8 + 8 + 8 + 24 + 8);
    }

    #[test]
    fn a_record_straddling_the_wrap_is_compacted_the_same() {
        let mut ring = lost_record();
        ring.extend(sample_record(9, 33));
        ring.extend(lost_record());
        for cut in 0..ring.len() {
            let mut out = Vec::new();
            copy_compacted(
                TwoRuns {
                    first: &ring[..cut],
                    second: &ring[cut..],
                },
                STACK,
                &mut out,
            )
            .unwrap();
            assert_eq!(parsed(&out), parsed(&ring), "cut at {cut}");
        }
    }

    #[test]
    fn another_layout_or_a_bad_size_is_copied_whole_or_stops() {
        // A size word that is not the requested size: copied as it is.
        let mut odd = sample_record(4, 8);
        let at = odd.len() - 8 - STACK as usize - 8;
        odd[at..at + 8].copy_from_slice(&32u64.to_le_bytes());
        let mut out = Vec::new();
        copy_compacted(
            TwoRuns {
                first: &odd,
                second: &[],
            },
            STACK,
            &mut out,
        )
        .unwrap();
        assert_eq!(out, odd);
        // A zero size stops the copy with an error.
        let mut bad = lost_record();
        bad.extend_from_slice(&[9, 0, 0, 0, 0, 0, 0, 0]);
        let mut out = Vec::new();
        assert!(
            copy_compacted(
                TwoRuns {
                    first: &bad,
                    second: &[],
                },
                STACK,
                &mut out,
            )
            .is_err()
        );
        assert_eq!(out, lost_record());
    }

    proptest! {
        #[test]
        fn never_panics_and_never_grows(
            bytes in proptest::collection::vec(any::<u8>(), 0..512),
            cut in 0usize..512,
        ) {
            let cut = cut.min(bytes.len());
            let mut out = Vec::new();
            let _ = copy_compacted(
                TwoRuns { first: &bytes[..cut], second: &bytes[cut..] },
                STACK,
                &mut out,
            );
            prop_assert!(out.len() <= bytes.len());
        }
    }
}

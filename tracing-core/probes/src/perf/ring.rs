//! Reading a perf ring buffer without trusting it: which bytes of the
//! (power-of-two sized) data area hold the records between the reader's
//! tail and the kernel's head, split in two where they wrap; and splitting
//! the bytes copied out of it into records by their headers. The driver
//! (`event.rs`) copies the span out of the mapping and publishes the new
//! tail; everything here works on plain numbers and owned bytes.

use super::records::record_size;

/// Up to two `(offset, len)` runs of the data area, in order, holding the
/// bytes from `tail` to `head` (positions that only grow, taken modulo the
/// area's size `size`, a power of two).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    /// The first run.
    pub first: (usize, usize),
    /// The run after the wrap (length 0 when there is none).
    pub second: (usize, usize),
}

/// Why the positions cannot be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum RingError {
    /// The head is behind the tail, or more than a whole buffer ahead of
    /// it: the control page is not what the kernel keeps.
    #[error("ring positions out of range: tail {tail}, head {head}, size {size}")]
    Positions {
        /// The reader's tail.
        tail: u64,
        /// The kernel's head.
        head: u64,
        /// The data area's size.
        size: usize,
    },
    /// A record's header gives a size of 0 or one past the bytes read.
    #[error("record at byte {at} claims {size} bytes, {left} left")]
    BadRecord {
        /// Its offset in the bytes read.
        at: usize,
        /// The size its header gives.
        size: usize,
        /// The bytes left from it.
        left: usize,
    },
}

/// The runs holding `[tail, head)` in a data area of `size` bytes.
pub fn span(tail: u64, head: u64, size: usize) -> Result<Span, RingError> {
    let bad = RingError::Positions { tail, head, size };
    if size == 0 || !size.is_power_of_two() {
        return Err(bad);
    }
    let len = head.checked_sub(tail).ok_or(bad)?;
    if len > size as u64 {
        return Err(bad);
    }
    let len = len as usize;
    let start = (tail % size as u64) as usize;
    let first_len = len.min(size - start);
    Ok(Span {
        first: (start, first_len),
        second: (0, len - first_len),
    })
}

/// The records in `bytes` (copied from the ring, starting at a record),
/// each with its header; a malformed header ends the walk with an error
/// (the bytes after it cannot be framed).
pub fn records(bytes: &[u8]) -> Records<'_> {
    Records { bytes, pos: 0 }
}

/// Iterator of [`records`].
#[derive(Debug, Clone)]
pub struct Records<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl Records<'_> {
    /// Bytes not walked yet (after an error: those that could not be framed).
    pub fn remaining(&self) -> usize {
        self.bytes.len() - self.pos
    }
}

impl<'a> Iterator for Records<'a> {
    type Item = Result<&'a [u8], RingError>;

    fn next(&mut self) -> Option<Self::Item> {
        let rest = self.bytes.get(self.pos..)?;
        if rest.is_empty() {
            return None;
        }
        let size = record_size(rest).unwrap_or(0);
        if size < 8 || size > rest.len() {
            let err = RingError::BadRecord {
                at: self.pos,
                size,
                left: rest.len(),
            };
            // Nothing after a bad header can be framed: stop here.
            self.pos = self.bytes.len();
            return Some(Err(err));
        }
        self.pos += size;
        Some(Ok(&rest[..size]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_wrap_at_the_end_of_the_area() {
        assert_eq!(
            span(10, 30, 64),
            Ok(Span {
                first: (10, 20),
                second: (0, 0)
            })
        );
        assert_eq!(
            span(60, 70, 64),
            Ok(Span {
                first: (60, 4),
                second: (0, 6)
            })
        );
        assert_eq!(
            span(128, 192, 64),
            Ok(Span {
                first: (0, 64),
                second: (0, 0)
            })
        );
        assert!(span(30, 10, 64).is_err(), "head behind tail");
        assert!(span(0, 65, 64).is_err(), "more than a buffer");
        assert!(span(0, 1, 48).is_err(), "not a power of two");
    }

    fn header(size: u16) -> Vec<u8> {
        let mut v = vec![9, 0, 0, 0, 0, 0];
        v.extend(size.to_ne_bytes());
        v
    }

    #[test]
    fn records_are_framed_by_their_headers_and_bad_ones_stop_the_walk() {
        let mut bytes = header(16);
        bytes.extend([0; 8]);
        bytes.extend(header(8));
        let got: Vec<_> = records(&bytes).collect();
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].unwrap().len(), 16);

        let mut bad = header(8);
        bad.extend(header(0));
        bad.extend(header(8));
        let mut it = records(&bad);
        assert!(it.next().unwrap().is_ok());
        assert_eq!(
            it.next(),
            Some(Err(RingError::BadRecord {
                at: 8,
                size: 0,
                left: 16
            }))
        );
        assert_eq!(it.next(), None);
        let mut long = header(200);
        long.extend([0; 8]);
        assert!(matches!(
            records(&long).next(),
            Some(Err(RingError::BadRecord { size: 200, .. }))
        ));
    }
}

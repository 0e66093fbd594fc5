//! Service-side parsing of a chunk payload into packet fragments.
//!
//! A payload is a run of fragments, each a size varint of at most 4 bytes
//! (redundant 4-byte form or, for small whole packets, 1 byte) followed by that
//! many bytes. The chunk header says how many fragments were started. The
//! bytes come from a producer and are untrusted: an over-long varint, a size
//! running past the payload or the "packet abandoned" sentinel end the
//! iteration with a typed error; nothing here can panic or read out of bounds.

/// Fragment size meaning "the writer abandoned this packet" (`FF FF FF 7F`).
pub const PACKET_SIZE_DROP_PACKET: u32 = 0x0FFF_FFFF;
/// Bytes a writer reserves for a fragment header.
pub const PACKET_HEADER_SIZE: usize = 4;

/// One fragment of a packet inside a chunk payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fragment<'a> {
    /// The fragment bytes (without the size header).
    pub data: &'a [u8],
    /// Offset of `data` from the start of the payload.
    pub offset: usize,
    /// Position of the fragment in the chunk (0-based).
    pub index: u16,
}

/// Why parsing a chunk's fragments stopped early.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum FragmentError {
    /// The size varint did not end within 4 bytes.
    #[error("fragment size varint at payload offset {offset} is longer than 4 bytes")]
    VarintTooLong {
        /// Offset of the size header.
        offset: usize,
    },
    /// The payload ended inside a size varint.
    #[error("payload ends inside the fragment header at offset {offset}")]
    TruncatedHeader {
        /// Offset of the size header.
        offset: usize,
    },
    /// The declared size runs past the end of the payload.
    #[error("fragment at offset {offset} declares {size} bytes but {remaining} remain")]
    PastEnd {
        /// Offset of the fragment data.
        offset: usize,
        /// Declared size.
        size: u32,
        /// Bytes left in the payload.
        remaining: usize,
    },
    /// The writer marked this packet as abandoned (SMB exhausted mid-packet).
    #[error("fragment at offset {offset} carries the dropped-packet sentinel")]
    DroppedPacket {
        /// Offset of the size header.
        offset: usize,
    },
}

/// Iterates the fragments of a payload; stops after `count` fragments or at the
/// first error (which it yields once).
#[derive(Debug, Clone)]
pub struct FragmentIter<'a> {
    payload: &'a [u8],
    pos: usize,
    next_index: u16,
    count: u16,
    done: bool,
}

impl<'a> FragmentIter<'a> {
    /// Parses up to `count` fragments of `payload`.
    pub fn new(payload: &'a [u8], count: u16) -> FragmentIter<'a> {
        FragmentIter {
            payload,
            pos: 0,
            next_index: 0,
            count,
            done: false,
        }
    }

    /// Offset just past the last fragment parsed so far.
    pub fn position(&self) -> usize {
        self.pos
    }

    fn parse_one(&mut self) -> Result<Fragment<'a>, FragmentError> {
        let (start, end) = fragment_at(self.payload, self.pos)?;
        self.pos = end;
        let index = self.next_index;
        self.next_index += 1;
        Ok(Fragment {
            data: &self.payload[start..end],
            offset: start,
            index,
        })
    }
}

/// Parses the fragment whose size header starts at `offset` of `payload`:
/// returns where its data starts and ends. Untrusted input gives a typed
/// error, never a panic or an out-of-range index.
pub fn fragment_at(payload: &[u8], offset: usize) -> Result<(usize, usize), FragmentError> {
    let mut size: u32 = 0;
    let mut i = 0;
    loop {
        if i == PACKET_HEADER_SIZE {
            return Err(FragmentError::VarintTooLong { offset });
        }
        let Some(&b) = payload.get(offset.saturating_add(i)) else {
            return Err(FragmentError::TruncatedHeader { offset });
        };
        size |= u32::from(b & 0x7F) << (7 * i);
        i += 1;
        if b & 0x80 == 0 {
            break;
        }
    }
    if size == PACKET_SIZE_DROP_PACKET {
        return Err(FragmentError::DroppedPacket { offset });
    }
    let start = offset + i;
    let remaining = payload.len() - start;
    if size as usize > remaining {
        return Err(FragmentError::PastEnd {
            offset: start,
            size,
            remaining,
        });
    }
    Ok((start, start + size as usize))
}

impl<'a> Iterator for FragmentIter<'a> {
    type Item = Result<Fragment<'a>, FragmentError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done || self.next_index >= self.count {
            return None;
        }
        let r = self.parse_one();
        if r.is_err() {
            self.done = true;
        }
        Some(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collect(payload: &[u8], count: u16) -> Vec<Result<(usize, Vec<u8>), FragmentError>> {
        FragmentIter::new(payload, count)
            .map(|r| r.map(|f| (f.offset, f.data.to_vec())))
            .collect()
    }

    #[test]
    fn four_byte_and_compact_headers() {
        // 4-byte redundant header of 3, a compact header of 2, an empty fragment.
        let p = [0x83, 0x80, 0x80, 0x00, 1, 2, 3, 0x02, 9, 9, 0x00, 0xEE];
        assert_eq!(
            collect(&p, 3),
            vec![
                Ok((4, vec![1, 2, 3])),
                Ok((8, vec![9, 9])),
                Ok((11, vec![]))
            ]
        );
        // The count bounds the iteration even if bytes remain.
        assert_eq!(collect(&p, 1).len(), 1);
    }

    #[test]
    fn hostile_payloads() {
        assert_eq!(
            collect(&[0x80, 0x80, 0x80, 0x80, 0x00], 1),
            vec![Err(FragmentError::VarintTooLong { offset: 0 })]
        );
        assert_eq!(
            collect(&[0x80, 0x80], 1),
            vec![Err(FragmentError::TruncatedHeader { offset: 0 })]
        );
        assert_eq!(
            collect(&[0xFF, 0xFF, 0xFF, 0x7F, 1, 2], 2),
            vec![Err(FragmentError::DroppedPacket { offset: 0 })]
        );
        assert_eq!(
            collect(&[0x05, 1, 2], 1),
            vec![Err(FragmentError::PastEnd {
                offset: 1,
                size: 5,
                remaining: 2
            })]
        );
        assert!(collect(&[], 5).first().is_some_and(|r| r.is_err()));
        assert!(collect(&[], 0).is_empty());
    }
}

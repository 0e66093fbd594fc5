//! One raw ring-buffer sub-buffer ("page") as `per_cpu/cpuN/trace_pipe_raw`
//! hands it out, walked record by record: the page header (base timestamp,
//! commit word with the missed-events flags and the count stored after the
//! data), then the compressed event headers (5-bit type_len, 27-bit time
//! delta) with their padding, time-extend and absolute-timestamp records,
//! turned into records with absolute CPU-local timestamps. Every read is
//! bounds-checked against the commit: hostile or truncated bytes give a
//! typed error, never a panic, and nothing is allocated per record.
//!
//! Values are read little-endian (the byte order of x86-64 and arm64
//! kernels, which write the pages in host order).

use super::format::{Field, HeaderPage};
use thiserror::Error;

/// `RB_MISSED_EVENTS`: events were lost before this page.
const MISSED_EVENTS: u64 = 1 << 31;
/// `RB_MISSED_STORED`: the number lost is stored after the data.
const MISSED_STORED: u64 = 1 << 30;
/// The bits of the commit word that hold the data length.
const COMMIT_LEN_MASK: u64 = MISSED_STORED - 1;

/// type_len of a padding record (or a discarded event).
const TYPE_PADDING: u32 = 29;
/// type_len of a time-extend record.
const TYPE_TIME_EXTEND: u32 = 30;
/// type_len of an absolute-timestamp record.
const TYPE_TIME_STAMP: u32 = 31;
/// Width of the time delta in the event header.
const TS_SHIFT: u32 = 27;
/// The top bits an absolute-timestamp record does not carry.
const TS_MSB: u64 = 0xf8 << 56;

/// Why a page (or its layout) could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum PageError {
    /// The header_page layout and sub-buffer size do not fit together.
    #[error("page layout: {0}")]
    BadLayout(&'static str),
    /// The bytes are shorter than the page header.
    #[error("page of {len} bytes is shorter than its {need}-byte header")]
    TruncatedHeader {
        /// Bytes given.
        len: usize,
        /// Bytes the header needs.
        need: usize,
    },
    /// The commit length runs past the sub-buffer or the bytes given.
    #[error("commit of {commit} bytes exceeds the {capacity} bytes of data available")]
    CommitPastEnd {
        /// The committed data length.
        commit: u64,
        /// The data bytes available.
        capacity: usize,
    },
    /// The missed-events count is flagged as stored but does not fit.
    #[error("missed-events count stored past the end of the page")]
    MissedCountPastEnd,
    /// A record's header or body runs past the committed data.
    #[error("record at data offset {offset} (type_len {type_len}) runs past the commit")]
    RecordPastCommit {
        /// Offset of the record in the data area.
        offset: usize,
        /// Its type_len.
        type_len: u32,
    },
    /// A data record is too short to hold the event id.
    #[error("record at data offset {offset} is too short for the event id")]
    NoEventId {
        /// Offset of the record in the data area.
        offset: usize,
    },
    /// The timestamp overflowed 64 bits.
    #[error("timestamp overflow at data offset {offset}")]
    TimestampOverflow {
        /// Offset of the record in the data area.
        offset: usize,
    },
}

/// Where things are in a sub-buffer: built once from `header_page`, the
/// sub-buffer size and the `common_type` field of the event formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageLayout {
    timestamp_offset: usize,
    commit_offset: usize,
    commit_size: usize,
    data_offset: usize,
    subbuf_size: usize,
    id_offset: usize,
    id_size: usize,
}

impl PageLayout {
    /// A layout for sub-buffers of `subbuf_size` bytes
    /// (`buffer_subbuf_size_kb` × 1024 where the kernel has that file, else
    /// the page size), whose events carry their id in `common_type`.
    pub fn new(
        header: &HeaderPage,
        subbuf_size: usize,
        common_type: &Field,
    ) -> Result<Self, PageError> {
        let ts_end = header.timestamp.offset.checked_add(header.timestamp.size);
        let commit_end = header.commit.offset.checked_add(header.commit.size);
        match (ts_end, commit_end) {
            (Some(t), Some(c)) if t <= header.data.offset && c <= header.data.offset => {}
            _ => return Err(PageError::BadLayout("header fields overlap the data")),
        }
        if header.data.offset >= subbuf_size {
            return Err(PageError::BadLayout("data offset past the sub-buffer"));
        }
        if header.timestamp.size != 8 || !matches!(header.commit.size, 4 | 8) {
            return Err(PageError::BadLayout("unsupported header field size"));
        }
        if !matches!(common_type.size, 1 | 2 | 4) {
            return Err(PageError::BadLayout("unsupported common_type size"));
        }
        Ok(PageLayout {
            timestamp_offset: header.timestamp.offset,
            commit_offset: header.commit.offset,
            commit_size: header.commit.size,
            data_offset: header.data.offset,
            subbuf_size,
            id_offset: common_type.offset,
            id_size: common_type.size,
        })
    }

    /// The sub-buffer size in bytes: `trace_pipe_raw` is read in chunks of it.
    pub fn subbuf_size(&self) -> usize {
        self.subbuf_size
    }

    /// Parses the header of one page. `bytes` is one sub-buffer as read; a
    /// shorter slice is accepted as long as the committed data is in it.
    pub fn parse<'a>(&self, bytes: &'a [u8]) -> Result<Page<'a>, PageError> {
        if bytes.len() < self.data_offset {
            return Err(PageError::TruncatedHeader {
                len: bytes.len(),
                need: self.data_offset,
            });
        }
        let timestamp =
            read_uint(bytes, self.timestamp_offset, 8).ok_or(PageError::TruncatedHeader {
                len: bytes.len(),
                need: self.data_offset,
            })?;
        let commit = read_uint(bytes, self.commit_offset, self.commit_size).ok_or(
            PageError::TruncatedHeader {
                len: bytes.len(),
                need: self.data_offset,
            },
        )?;
        let end = bytes.len().min(self.subbuf_size);
        let capacity = end - self.data_offset;
        let len = commit & COMMIT_LEN_MASK;
        let len_usize = usize::try_from(len).ok().filter(|&l| l <= capacity).ok_or(
            PageError::CommitPastEnd {
                commit: len,
                capacity,
            },
        )?;
        let data_end = self.data_offset + len_usize;
        let mut used = data_end;
        let missed = if commit & MISSED_EVENTS == 0 {
            MissedEvents::None
        } else if commit & MISSED_STORED == 0 {
            MissedEvents::Unknown
        } else {
            let count = read_uint(&bytes[..end], data_end, self.commit_size)
                .ok_or(PageError::MissedCountPastEnd)?;
            used += self.commit_size;
            MissedEvents::Count(count)
        };
        Ok(Page {
            timestamp,
            used,
            data: &bytes[self.data_offset..data_end],
            missed,
            id_offset: self.id_offset,
            id_size: self.id_size,
        })
    }

    /// Splits a buffer read from `trace_pipe_raw` into its sub-buffers and
    /// parses each one's header.
    pub fn pages<'a>(
        &'a self,
        bytes: &'a [u8],
    ) -> impl Iterator<Item = Result<Page<'a>, PageError>> + 'a {
        bytes.chunks(self.subbuf_size).map(|c| self.parse(c))
    }
}

/// Whether events were lost before a page, as its commit word says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MissedEvents {
    /// Nothing was lost.
    None,
    /// Events were lost (the writer overwrote unread pages, or dropped
    /// events when the buffer was full) but the count did not fit the page.
    Unknown,
    /// This many events were lost before this page.
    Count(u64),
}

/// One parsed page: its header facts and its committed data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Page<'a> {
    /// The page's base timestamp (the trace clock, ns).
    pub timestamp: u64,
    /// The committed data: the records.
    pub data: &'a [u8],
    /// Events lost before this page.
    pub missed: MissedEvents,
    /// Bytes of the input this page's header, data and stored
    /// missed-events count take (the rest of the sub-buffer is zeros).
    pub used: usize,
    id_offset: usize,
    id_size: usize,
}

impl<'a> Page<'a> {
    /// The page's records, in order, with absolute timestamps.
    pub fn records(&self) -> Records<'a> {
        Records {
            data: self.data,
            pos: 0,
            ts: self.timestamp,
            id_offset: self.id_offset,
            id_size: self.id_size,
            discarded: 0,
            done: false,
        }
    }
}

/// One event record: its CPU-local timestamp, its id and its payload
/// (the bytes the event's `format` file describes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record<'a> {
    /// Absolute timestamp (the instance's trace clock, ns).
    pub timestamp: u64,
    /// The event id from `common_type`.
    pub id: u32,
    /// The event's bytes, starting at `common_type`. May carry trailing
    /// alignment padding.
    pub payload: &'a [u8],
}

/// Iterator over a page's records. After an error it ends.
#[derive(Debug, Clone)]
pub struct Records<'a> {
    data: &'a [u8],
    pos: usize,
    ts: u64,
    id_offset: usize,
    id_size: usize,
    discarded: u64,
    done: bool,
}

impl Records<'_> {
    /// How many discarded events (padding records with a length) were
    /// skipped so far.
    pub fn discarded(&self) -> u64 {
        self.discarded
    }

    /// The timestamp reached so far (after the last record read).
    pub fn timestamp(&self) -> u64 {
        self.ts
    }
}

impl<'a> Iterator for Records<'a> {
    type Item = Result<Record<'a>, PageError>;

    fn next(&mut self) -> Option<Self::Item> {
        while !self.done {
            match self.step() {
                Ok(Some(r)) => return Some(Ok(r)),
                Ok(None) => {}
                Err(e) => {
                    self.done = true;
                    return Some(Err(e));
                }
            }
        }
        None
    }
}

impl<'a> Records<'a> {
    /// Reads one record; `Ok(None)` for a non-data record that was consumed.
    fn step(&mut self) -> Result<Option<Record<'a>>, PageError> {
        let offset = self.pos;
        if offset >= self.data.len() {
            self.done = true;
            return Ok(None);
        }
        let header = read_u32(self.data, offset).ok_or(PageError::RecordPastCommit {
            offset,
            type_len: 0,
        })?;
        let type_len = header & 0x1f;
        let delta = u64::from(header >> 5);
        let past = PageError::RecordPastCommit { offset, type_len };
        let overflow = PageError::TimestampOverflow { offset };
        match type_len {
            TYPE_PADDING => {
                if delta == 0 {
                    // Padding to the end of the page.
                    self.done = true;
                    return Ok(None);
                }
                // A discarded event: its length is in the array word.
                let len = read_u32(self.data, offset + 4).ok_or(past)?;
                let total = (len as usize).checked_add(4).ok_or(past)?;
                self.advance(offset, total, past)?;
                self.discarded += 1;
                Ok(None)
            }
            TYPE_TIME_EXTEND => {
                let hi = u64::from(read_u32(self.data, offset + 4).ok_or(past)?);
                self.ts = self
                    .ts
                    .checked_add((hi << TS_SHIFT) | delta)
                    .ok_or(overflow)?;
                self.advance(offset, 8, past)?;
                Ok(None)
            }
            TYPE_TIME_STAMP => {
                let hi = u64::from(read_u32(self.data, offset + 4).ok_or(past)?);
                let mut abs = (hi << TS_SHIFT) | delta;
                // The record carries only the low 59 bits; the top ones come
                // from the running timestamp.
                if self.ts & TS_MSB != 0 {
                    abs |= self.ts & TS_MSB;
                    if abs < self.ts {
                        abs = abs.checked_add(1 << 59).ok_or(overflow)?;
                    }
                }
                self.ts = abs;
                self.advance(offset, 8, past)?;
                Ok(None)
            }
            _ => {
                let (body_start, body_len) = if type_len == 0 {
                    let len = read_u32(self.data, offset + 4).ok_or(past)? as usize;
                    // The array word counts itself.
                    (offset + 8, len.checked_sub(4).ok_or(past)?)
                } else {
                    (offset + 4, type_len as usize * 4)
                };
                let body_end = body_start.checked_add(body_len).ok_or(past)?;
                let payload = self.data.get(body_start..body_end).ok_or(past)?;
                self.ts = self.ts.checked_add(delta).ok_or(overflow)?;
                self.pos = body_end;
                let id = read_uint(payload, self.id_offset, self.id_size)
                    .ok_or(PageError::NoEventId { offset })?;
                // The id field is at most 4 bytes wide (checked in the layout).
                let id = u32::try_from(id).map_err(|_| PageError::NoEventId { offset })?;
                Ok(Some(Record {
                    timestamp: self.ts,
                    id,
                    payload,
                }))
            }
        }
    }

    /// Moves past a record of `len` bytes at `offset`, checking the commit.
    fn advance(&mut self, offset: usize, len: usize, past: PageError) -> Result<(), PageError> {
        let end = offset.checked_add(len).ok_or(past)?;
        if end > self.data.len() {
            return Err(past);
        }
        self.pos = end;
        Ok(())
    }
}

/// Reads a little-endian u32 at `offset`, if it is inside `bytes`.
fn read_u32(bytes: &[u8], offset: usize) -> Option<u32> {
    let end = offset.checked_add(4)?;
    let b: [u8; 4] = bytes.get(offset..end)?.try_into().ok()?;
    Some(u32::from_le_bytes(b))
}

/// Reads a little-endian unsigned integer of 1, 2, 4 or 8 bytes.
pub(crate) fn read_uint(bytes: &[u8], offset: usize, size: usize) -> Option<u64> {
    let end = offset.checked_add(size)?;
    let b = bytes.get(offset..end)?;
    Some(match size {
        1 => u64::from(b[0]),
        2 => u64::from(u16::from_le_bytes(b.try_into().ok()?)),
        4 => u64::from(u32::from_le_bytes(b.try_into().ok()?)),
        8 => u64::from_le_bytes(b.try_into().ok()?),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::super::format::{FieldKind, HeaderField};
    use super::*;

    fn layout(subbuf: usize) -> PageLayout {
        let header = HeaderPage {
            timestamp: HeaderField { offset: 0, size: 8 },
            commit: HeaderField { offset: 8, size: 8 },
            overwrite: None,
            data: HeaderField {
                offset: 16,
                size: subbuf - 16,
            },
        };
        let common_type = Field {
            name: "common_type".into(),
            type_name: "unsigned short".into(),
            array_len: None,
            offset: 0,
            size: 2,
            signed: false,
            kind: FieldKind::Int,
        };
        PageLayout::new(&header, subbuf, &common_type).unwrap()
    }

    fn page(ts: u64, commit: u64, data: &[u8], tail: &[u8]) -> Vec<u8> {
        let mut p = ts.to_le_bytes().to_vec();
        p.extend_from_slice(&commit.to_le_bytes());
        p.extend_from_slice(data);
        p.extend_from_slice(tail);
        p.resize(256, 0);
        p
    }

    fn hdr(type_len: u32, delta: u32) -> [u8; 4] {
        (type_len | (delta << 5)).to_le_bytes()
    }

    #[test]
    fn walks_all_record_types() {
        let mut d = Vec::new();
        // A small data record: type_len 2 (8 bytes), delta 10, id 7.
        d.extend_from_slice(&hdr(2, 10));
        d.extend_from_slice(&[7, 0, 0, 0, 1, 2, 3, 4]);
        // A time extend of (1 << 27) + 5.
        d.extend_from_slice(&hdr(30, 5));
        d.extend_from_slice(&1u32.to_le_bytes());
        // A discarded event of 4 bytes of body.
        d.extend_from_slice(&hdr(29, 1));
        d.extend_from_slice(&8u32.to_le_bytes());
        d.extend_from_slice(&[0; 4]);
        // A large record: length in the array word (4 + 8).
        d.extend_from_slice(&hdr(0, 3));
        d.extend_from_slice(&12u32.to_le_bytes());
        d.extend_from_slice(&[9, 0, 0, 0, 0, 0, 0, 0]);
        // An absolute timestamp, then a record with delta 1.
        d.extend_from_slice(&hdr(31, 100));
        d.extend_from_slice(&0u32.to_le_bytes());
        d.extend_from_slice(&hdr(1, 1));
        d.extend_from_slice(&[5, 0, 0, 0]);
        let bytes = page(1000, d.len() as u64, &d, &[]);
        let l = layout(256);
        let p = l.parse(&bytes).unwrap();
        assert_eq!(p.missed, MissedEvents::None);
        let mut it = p.records();
        let recs: Vec<_> = it.by_ref().map(|r| r.unwrap()).collect();
        assert_eq!(it.discarded(), 1);
        let got: Vec<_> = recs.iter().map(|r| (r.timestamp, r.id)).collect();
        let after_ext = 1010 + (1 << 27) + 5;
        assert_eq!(got, vec![(1010, 7), (after_ext + 3, 9), (101, 5)]);
        assert_eq!(recs[0].payload.len(), 8);
        assert_eq!(recs[1].payload.len(), 8);
    }

    #[test]
    fn missed_events_flags() {
        let l = layout(256);
        let d = [hdr(1, 0), [1, 0, 0, 0]].concat();
        let b = page(0, 8 | MISSED_EVENTS, &d, &[]);
        let p = l.parse(&b).unwrap();
        assert_eq!(p.missed, MissedEvents::Unknown);
        let b = page(
            0,
            8 | MISSED_EVENTS | MISSED_STORED,
            &d,
            &42u64.to_le_bytes(),
        );
        let p = l.parse(&b).unwrap();
        assert_eq!(p.missed, MissedEvents::Count(42));
        assert_eq!(p.used, 16 + 8 + 8);
        assert_eq!(p.records().count(), 1);
    }

    /// A 64-bit kernel adds the flags to the commit word as negative ints:
    /// they arrive sign-extended into the upper 32 bits.
    #[test]
    fn sign_extended_flags_of_a_64bit_commit() {
        let l = layout(256);
        let d = [hdr(1, 0), [1, 0, 0, 0]].concat();
        let b = page(0, 0xffff_ffff_c000_0000 | 8, &d, &7u64.to_le_bytes());
        let p = l.parse(&b).unwrap();
        assert_eq!(p.missed, MissedEvents::Count(7));
        assert_eq!(p.data.len(), 8);
    }

    #[test]
    fn hostile_pages_give_typed_errors() {
        let l = layout(256);
        assert!(matches!(
            l.parse(&[0; 10]),
            Err(PageError::TruncatedHeader { .. })
        ));
        assert!(matches!(
            l.parse(&page(0, 241, &[], &[])),
            Err(PageError::CommitPastEnd { .. })
        ));
        // A record claiming 28 words in an 8-byte commit.
        let d = [hdr(28, 0), [1, 0, 0, 0]].concat();
        let b = page(0, 8, &d, &[]);
        let p = l.parse(&b).unwrap();
        let r: Vec<_> = p.records().collect();
        assert_eq!(
            r,
            vec![Err(PageError::RecordPastCommit {
                offset: 0,
                type_len: 28
            })]
        );
        // Array word smaller than itself.
        let d = [hdr(0, 0), 2u32.to_le_bytes()].concat();
        let b = page(0, 8, &d, &[]);
        let p = l.parse(&b).unwrap();
        assert!(p.records().next().unwrap().is_err());
        // Missed count flagged but the page ends.
        let full = vec![0u8; 240];
        let mut bytes = page(0, 240 | MISSED_EVENTS | MISSED_STORED, &[], &[]);
        bytes[16..].copy_from_slice(&full);
        assert_eq!(l.parse(&bytes), Err(PageError::MissedCountPastEnd));
    }

    #[test]
    fn null_padding_ends_the_page() {
        let l = layout(256);
        let d = [hdr(29, 0), [0; 4], hdr(1, 0), [1, 0, 0, 0]].concat();
        let b = page(0, d.len() as u64, &d, &[]);
        let p = l.parse(&b).unwrap();
        assert_eq!(p.records().count(), 0);
    }
}

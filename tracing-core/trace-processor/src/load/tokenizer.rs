//! Splitting a `Trace` byte stream into its packets however the bytes
//! arrive: `push` takes chunks of any size, keeps the unfinished tail, and
//! hands out each complete field 1 (`TracePacket`); other fields of `Trace`
//! are skipped as upstream skips them.

use protozero::wire::MAX_FIELD_ID;

use crate::error::TraceError;

/// Largest packet accepted (upstream's limit for one packet is far
/// smaller in practice; this bounds what a hostile length can make us keep).
pub const MAX_PACKET_SIZE: u64 = 256 << 20;

/// The stream splitter.
#[derive(Debug, Default)]
pub struct TraceTokenizer {
    pending: Vec<u8>,
    /// Offset in the stream of `pending[0]`.
    offset: u64,
    /// Fields of `Trace` before `pending[0]` (named in errors as packets).
    fields: u64,
}

/// A varint read from the front of `buf`: Ok(None) when it is incomplete.
fn read_varint(buf: &[u8], at: u64, packets: u64) -> Result<Option<(u64, usize)>, TraceError> {
    let mut value: u64 = 0;
    for (i, b) in buf.iter().enumerate().take(10) {
        value |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            return Ok(Some((value, i + 1)));
        }
    }
    if buf.len() >= 10 {
        return Err(TraceError::NotATrace {
            offset: at,
            packets,
        });
    }
    Ok(None)
}

impl TraceTokenizer {
    /// Feeds bytes; calls `on_packet` with each complete packet's bytes.
    pub fn push(
        &mut self,
        data: &[u8],
        on_packet: &mut dyn FnMut(&[u8]),
    ) -> Result<(), TraceError> {
        self.push_at(data, &mut |p, _| on_packet(p))
    }

    /// As [`TraceTokenizer::push`], also telling where in the stream each
    /// packet's bytes start (after its tag and length).
    pub fn push_at(
        &mut self,
        mut data: &[u8],
        on_packet: &mut dyn FnMut(&[u8], u64),
    ) -> Result<(), TraceError> {
        // Fast path: nothing pending, parse straight from `data`.
        if self.pending.is_empty() {
            let (used, fields) = self.split(data, on_packet)?;
            self.offset += used as u64;
            self.fields += fields;
            data = &data[used..];
            self.pending.extend_from_slice(data);
            return Ok(());
        }
        self.pending.extend_from_slice(data);
        let pending = std::mem::take(&mut self.pending);
        let (used, fields) = self.split(&pending, on_packet)?;
        self.offset += used as u64;
        self.fields += fields;
        self.pending = pending[used..].to_vec();
        Ok(())
    }

    /// Parses whole fields from `buf`; returns how many bytes were used
    /// and how many fields they held.
    fn split(
        &self,
        buf: &[u8],
        on_packet: &mut dyn FnMut(&[u8], u64),
    ) -> Result<(usize, u64), TraceError> {
        let mut pos = 0usize;
        let mut fields = 0u64;
        loop {
            let at = self.offset + pos as u64;
            let packets = self.fields + fields;
            let bad = TraceError::NotATrace {
                offset: at,
                packets,
            };
            let Some((tag, tag_len)) = read_varint(&buf[pos..], at, packets)? else {
                return Ok((pos, fields));
            };
            let field = tag >> 3;
            let wire = tag & 7;
            // Field 0 does not exist, nor do fields past 2^29 - 1, and
            // `Trace.packet` (1) is a message: each is a stream that is
            // not a trace.
            if field == 0 || field > u64::from(MAX_FIELD_ID) || (field == 1 && wire != 2) {
                return Err(bad);
            }
            let body = pos + tag_len;
            let end = match wire {
                0 => match read_varint(&buf[body..], at, packets)? {
                    Some((_, n)) => body + n,
                    None => return Ok((pos, fields)),
                },
                1 => body + 8,
                5 => body + 4,
                2 => {
                    let Some((len, n)) = read_varint(&buf[body..], at, packets)? else {
                        return Ok((pos, fields));
                    };
                    if len > MAX_PACKET_SIZE {
                        return Err(TraceError::PacketTooLarge {
                            offset: at,
                            packets,
                            len,
                            max: MAX_PACKET_SIZE,
                        });
                    }
                    // len <= MAX_PACKET_SIZE fits usize on 64- and 32-bit.
                    let start = body + n;
                    let end = start.saturating_add(len as usize);
                    if end > buf.len() {
                        return Ok((pos, fields));
                    }
                    if field == 1 {
                        on_packet(&buf[start..end], self.offset + start as u64);
                    }
                    end
                }
                _ => return Err(bad),
            };
            if end > buf.len() {
                return Ok((pos, fields));
            }
            pos = end;
            fields += 1;
        }
    }

    /// Bytes of an unfinished field at the end of the stream.
    pub fn pending_len(&self) -> usize {
        self.pending.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn packets(chunks: &[&[u8]]) -> Result<Vec<Vec<u8>>, TraceError> {
        let mut t = TraceTokenizer::default();
        let mut out = Vec::new();
        for c in chunks {
            t.push(c, &mut |p| out.push(p.to_vec()))?;
        }
        Ok(out)
    }

    #[test]
    fn any_split_gives_the_same_packets() {
        // packet "ab", an unknown varint field 2, packet "" and packet "xyz".
        let trace = [
            0x0a, 2, b'a', b'b', 0x10, 0x96, 0x01, 0x0a, 0, 0x0a, 3, b'x', b'y', b'z',
        ];
        let whole = packets(&[&trace]).unwrap();
        assert_eq!(whole, vec![b"ab".to_vec(), vec![], b"xyz".to_vec()]);
        for i in 0..trace.len() {
            for j in i..trace.len() {
                let got = packets(&[&trace[..i], &trace[i..j], &trace[j..]]).unwrap();
                assert_eq!(got, whole, "split at {i},{j}");
            }
        }
    }

    #[test]
    fn offsets_are_where_the_packets_start_in_the_stream() {
        // packet "ab" at 2, a skipped varint field, packet "xyz" at 9.
        let trace = [
            0x0a, 2, b'a', b'b', 0x10, 0x96, 0x01, 0x0a, 3, b'x', b'y', b'z',
        ];
        for cut in 0..trace.len() {
            let mut t = TraceTokenizer::default();
            let mut seen = Vec::new();
            for part in [&trace[..cut], &trace[cut..]] {
                t.push_at(part, &mut |p, at| seen.push((p.to_vec(), at)))
                    .unwrap();
            }
            assert_eq!(
                seen,
                vec![(b"ab".to_vec(), 2), (b"xyz".to_vec(), 9)],
                "cut at {cut}"
            );
        }
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        assert!(packets(&[&[0x0b, 1, 2]]).is_err());
        assert!(packets(&[&[0x00]]).is_err());
        assert!(packets(&[&[0xff; 20]]).is_err());
        // `Trace.packet` as a varint after a good packet: not a trace.
        assert!(packets(&[&[0x0a, 0x00, 0x08, 0x06]]).is_err());
        // Another field as a varint is skipped.
        assert!(packets(&[&[0x0a, 0x00, 0x10, 0x06]]).is_ok());
        // The highest field number is skipped too; one past it is not a
        // field (a fuzzer's find: the schema-less decoder refused it, the
        // splitter did not).
        let tag = |field: u64| {
            let mut v = (field << 3) | 2;
            let mut out = vec![0x0a, 0x00];
            while v >= 0x80 {
                out.push((v as u8) | 0x80);
                v >>= 7;
            }
            out.extend([v as u8, 0x00]);
            out
        };
        assert!(packets(&[&tag(u64::from(MAX_FIELD_ID))]).is_ok());
        assert!(matches!(
            packets(&[&tag(u64::from(MAX_FIELD_ID) + 1)]),
            Err(TraceError::NotATrace {
                offset: 2,
                packets: 1
            })
        ));
        let huge = [0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f];
        assert!(matches!(
            packets(&[&huge]),
            Err(TraceError::PacketTooLarge { .. })
        ));
    }
}

//! Cutting a byte stream into `TraceProcessorRpc` messages: each is a
//! length-delimited field (`TraceProcessorRpcStream.msg`), and the bytes
//! may arrive split anywhere. As upstream's reader, any field number is
//! taken, but another wire type or a message over [`MAX_FRAME_BYTES`] is a
//! framing error, after which the stream is unusable.

/// The largest message accepted (upstream's 64 MiB).
pub const MAX_FRAME_BYTES: usize = 64 * 1024 * 1024;

/// What [`FrameReader::next_frame`] found.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Frame {
    /// A whole message's bytes (without the preamble).
    Message(Vec<u8>),
    /// Not enough bytes yet.
    Incomplete,
    /// The stream is broken.
    Error,
}

/// Buffers a stream's bytes until whole messages are in.
#[derive(Debug, Default)]
pub(crate) struct FrameReader {
    buf: Vec<u8>,
    read: usize,
    failed: bool,
}

impl FrameReader {
    /// Takes the next bytes of the stream.
    pub(crate) fn push(&mut self, bytes: &[u8]) {
        if self.failed {
            return;
        }
        if self.read == self.buf.len() {
            self.buf.clear();
            self.read = 0;
        } else if self.read > self.buf.len() / 2 {
            self.buf.drain(..self.read);
            self.read = 0;
        }
        self.buf.extend_from_slice(bytes);
    }

    /// The next whole message, if there is one.
    pub(crate) fn next_frame(&mut self) -> Frame {
        if self.failed {
            return Frame::Error;
        }
        let rest = self.buf.get(self.read..).unwrap_or_default();
        let Some((tag, n1)) = read_varint(rest) else {
            return Frame::Incomplete;
        };
        if tag & 7 != 2 {
            self.failed = true;
            return Frame::Error;
        }
        let Some((len, n2)) = read_varint(rest.get(n1..).unwrap_or_default()) else {
            return Frame::Incomplete;
        };
        if len > MAX_FRAME_BYTES as u64 {
            self.failed = true;
            return Frame::Error;
        }
        let start = n1 + n2;
        let end = start + len as usize;
        match rest.get(start..end) {
            Some(msg) => {
                let msg = msg.to_vec();
                self.read += end;
                Frame::Message(msg)
            }
            None => Frame::Incomplete,
        }
    }
}

/// A varint at the start of `b` and its length; `None` when `b` ends
/// first (a varint longer than ten bytes reads as ten bytes' worth).
fn read_varint(b: &[u8]) -> Option<(u64, usize)> {
    let mut v = 0u64;
    for (i, &byte) in b.iter().enumerate().take(10) {
        v |= u64::from(byte & 0x7f) << (7 * i);
        if byte & 0x80 == 0 {
            return Some((v, i + 1));
        }
    }
    if b.len() >= 10 { Some((v, 10)) } else { None }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_split_anywhere_come_out_whole() {
        let stream = [0x0a, 2, 8, 1, 0x0a, 0, 0x0a, 3, 8, 2, 9];
        for cut in 0..=stream.len() {
            let mut r = FrameReader::default();
            let mut got = Vec::new();
            for part in [&stream[..cut], &stream[cut..]] {
                r.push(part);
                while let Frame::Message(m) = r.next_frame() {
                    got.push(m);
                }
            }
            assert_eq!(got, vec![vec![8, 1], vec![], vec![8, 2, 9]], "cut at {cut}");
        }
    }

    #[test]
    fn another_wire_type_or_a_huge_length_breaks_the_stream() {
        let mut r = FrameReader::default();
        r.push(&[0x08, 1]);
        assert_eq!(r.next_frame(), Frame::Error);
        r.push(&[0x0a, 0]);
        assert_eq!(r.next_frame(), Frame::Error);
        let mut r = FrameReader::default();
        r.push(&[0x0a, 0x81, 0x80, 0x80, 0x20]);
        assert_eq!(r.next_frame(), Frame::Error);
        let mut r = FrameReader::default();
        r.push(&[0x0a, 0x80]);
        assert_eq!(r.next_frame(), Frame::Incomplete);
    }
}

//! A whole trace's packets in order, for readers that want the packets
//! themselves rather than tables (the CLI's `dump`, `stats`, `convert` and
//! profile views): the loader's own splitter and inflater, so one piece of
//! code frames every trace we read. `compressed_packets` are replaced by
//! the packets they hold, nested at most as deep as the loader accepts;
//! unlike the loader, which counts a bad packet and goes on, this fails
//! with where the trace went wrong.

use std::borrow::Cow;

use zerotrace_protos::protos::TracePacketDecoder;

use crate::error::TraceError;
use crate::load::MAX_COMPRESSION_DEPTH;
use crate::load::inflate::{self, InflateError};
use crate::load::tokenizer::TraceTokenizer;

/// Why a trace's packets could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PacketsError {
    /// The `Trace` framing is broken.
    #[error("{error} after {packets} packets")]
    Framing {
        /// What is wrong.
        error: TraceError,
        /// Packets read before it.
        packets: usize,
    },
    /// The trace ends inside a packet.
    #[error("the trace ends inside a packet, after {packets} packets")]
    Truncated {
        /// Packets read before it.
        packets: usize,
    },
    /// A `compressed_packets` payload could not be read.
    #[error("packet {packet}: compressed_packets {reason}")]
    Compressed {
        /// The index of the packet holding it.
        packet: usize,
        /// What is wrong.
        reason: &'static str,
    },
}

/// The packets of `trace`, in order.
pub fn packets(trace: &[u8]) -> Result<Vec<Cow<'_, [u8]>>, PacketsError> {
    let mut out = Vec::new();
    split(trace, 0, &mut out)?;
    Ok(out)
}

/// The top-level packets borrowed, then each expanded.
fn split<'a>(
    trace: &'a [u8],
    depth: u32,
    out: &mut Vec<Cow<'a, [u8]>>,
) -> Result<(), PacketsError> {
    let mut ranges = Vec::new();
    let base = trace.as_ptr() as usize;
    let mut tok = TraceTokenizer::default();
    tok.push(trace, &mut |p| {
        // One push into an empty splitter hands out sub-slices of `trace`:
        // keep their ranges (anything else would be a splitter bug, and
        // is kept as a copy rather than trusted).
        let range = (p.as_ptr() as usize)
            .checked_sub(base)
            .map(|start| start..start.saturating_add(p.len()))
            .filter(|r| r.end <= trace.len());
        ranges.push(range.ok_or_else(|| p.to_vec()));
    })
    .map_err(|error| PacketsError::Framing {
        error,
        packets: ranges.len(),
    })?;
    if tok.pending_len() > 0 {
        return Err(PacketsError::Truncated {
            packets: ranges.len(),
        });
    }
    for (i, r) in ranges.into_iter().enumerate() {
        let packet: Cow<'a, [u8]> = match r {
            Ok(r) => Cow::Borrowed(&trace[r]),
            Err(copy) => Cow::Owned(copy),
        };
        match TracePacketDecoder::new(&packet).compressed_packets() {
            None => out.push(packet),
            Some(compressed) => expand(compressed, i, depth, out)?,
        }
    }
    Ok(())
}

/// The packets a `compressed_packets` payload holds (owned).
fn expand(
    compressed: &[u8],
    packet: usize,
    depth: u32,
    out: &mut Vec<Cow<'_, [u8]>>,
) -> Result<(), PacketsError> {
    let bad = |reason| PacketsError::Compressed { packet, reason };
    if depth >= MAX_COMPRESSION_DEPTH {
        return Err(bad("nest deeper than the loader reads"));
    }
    let inflated = inflate::inflate(compressed, inflate::MAX_INFLATED).map_err(|e| match e {
        InflateError::Corrupt => bad("do not inflate"),
        InflateError::TooLarge => bad("inflate to more than the limit"),
    })?;
    let mut inner = Vec::new();
    split(&inflated, depth + 1, &mut inner).map_err(|_| bad("hold a broken trace"))?;
    out.extend(inner.into_iter().map(|c| Cow::Owned(c.into_owned())));
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    fn framed(packets: &[&[u8]]) -> Vec<u8> {
        let mut out = Vec::new();
        for p in packets {
            out.push(0x0a);
            out.push(p.len() as u8);
            out.extend_from_slice(p);
        }
        out
    }

    #[test]
    fn packets_come_in_order_with_compressed_ones_expanded() {
        // Packets holding only a timestamp (field 8).
        let inner = framed(&[&[0x40, 2], &[0x40, 3]]);
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        z.write_all(&inner).unwrap();
        let zlib = z.finish().unwrap();
        // compressed_packets is TracePacket field 50 (bytes).
        let mut compressed = vec![0x92, 0x03, zlib.len() as u8];
        compressed.extend_from_slice(&zlib);
        let trace = framed(&[&[0x40, 1], &compressed, &[0x40, 4]]);
        let got: Vec<Vec<u8>> = packets(&trace)
            .unwrap()
            .into_iter()
            .map(Cow::into_owned)
            .collect();
        assert_eq!(
            got,
            vec![vec![0x40, 1], vec![0x40, 2], vec![0x40, 3], vec![0x40, 4]]
        );
    }

    #[test]
    fn broken_traces_say_where() {
        let mut t = framed(&[&[0x40, 1]]);
        t.extend_from_slice(&[0x0a, 9, 1]);
        assert_eq!(packets(&t), Err(PacketsError::Truncated { packets: 1 }));
        let bad = [0x40, 1, 0x92, 0x03, 2, 0xde, 0xad];
        assert_eq!(
            packets(&framed(&[&bad])),
            Err(PacketsError::Compressed {
                packet: 0,
                reason: "do not inflate"
            })
        );
        assert!(matches!(
            packets(&[0x07]),
            Err(PacketsError::Framing { packets: 0, .. })
        ));
    }
}

//! pprof profiles (`profile.proto`, what Go's `runtime/pprof`, `pprof`
//! and many profilers write, usually gzip-compressed) as a trace input,
//! imported as Perfetto imports them: the profile is told by the shape of
//! its top-level fields (every field one `Profile` declares, with the wire
//! type it declares, and at least one of its tables), held whole until the
//! trace ends, then read into the stack-profile tables and the aggregated
//! profile tables (`import.rs`). A gzip-compressed file is inflated before
//! it is told (the file driver, the RPC feed and the archive reader all
//! see through gzip), so the bytes here are the `Profile` message itself.

mod import;

use crate::error::TraceError;
use crate::parser::Parser;

use super::reader::FormatReader;

/// `Profile` field numbers (pprof's `profile.proto`).
mod field {
    pub const SAMPLE_TYPE: u32 = 1;
    pub const SAMPLE: u32 = 2;
    pub const MAPPING: u32 = 3;
    pub const LOCATION: u32 = 4;
    pub const FUNCTION: u32 = 5;
    pub const STRING_TABLE: u32 = 6;
    pub const DROP_FRAMES: u32 = 7;
    pub const KEEP_FRAMES: u32 = 8;
    pub const TIME_NANOS: u32 = 9;
    pub const DURATION_NANOS: u32 = 10;
    pub const PERIOD_TYPE: u32 = 11;
    pub const PERIOD: u32 = 12;
    pub const COMMENT: u32 = 13;
    pub const DEFAULT_SAMPLE_TYPE: u32 = 14;
}

/// Fewest bytes a profile is told from.
const MIN_SNIFF_BYTES: usize = 10;

/// Most bytes looked at (about what upstream's first chunk holds): a
/// protobuf trace read whole is not walked to its end to be told.
const MAX_SNIFF_BYTES: usize = 1 << 20;

/// Whether `head` (the trace's first bytes, as many as were read) opens
/// a pprof `Profile`: each whole field in it is one `Profile` declares,
/// of the wire type declared (a repeated `comment` may be packed), and
/// one of them is a table (samples, mappings, locations, functions,
/// strings) or `drop_frames`/`keep_frames`. A field cut off by the end of
/// `head` ends the look, as upstream's decoder ends it.
pub fn sniff(head: &[u8]) -> bool {
    use protozero::WireType;
    if head.len() < MIN_SNIFF_BYTES {
        return false;
    }
    let head = head.get(..MAX_SNIFF_BYTES).unwrap_or(head);
    let mut core = false;
    for f in protozero::Decoder::new(head) {
        let Ok(f) = f else { break };
        let wire = f.wire_type();
        let ok = match f.id {
            field::SAMPLE
            | field::MAPPING
            | field::LOCATION
            | field::FUNCTION
            | field::STRING_TABLE => {
                core = true;
                wire == WireType::LengthDelimited
            }
            field::SAMPLE_TYPE | field::PERIOD_TYPE => wire == WireType::LengthDelimited,
            field::COMMENT => matches!(wire, WireType::LengthDelimited | WireType::Varint),
            field::DROP_FRAMES | field::KEEP_FRAMES => {
                core = true;
                wire == WireType::Varint
            }
            field::TIME_NANOS
            | field::DURATION_NANOS
            | field::PERIOD
            | field::DEFAULT_SAMPLE_TYPE => wire == WireType::Varint,
            _ => false,
        };
        if !ok {
            return false;
        }
    }
    core
}

/// The reader: the profile's bytes, read whole when the trace ends (a
/// `Profile`'s tables refer to each other in any order).
#[derive(Debug, Default)]
pub struct PprofLoad {
    bytes: Vec<u8>,
}

impl FormatReader for PprofLoad {
    fn push(&mut self, _p: &mut Parser, data: &[u8]) -> Result<(), TraceError> {
        self.bytes.extend_from_slice(data);
        Ok(())
    }

    fn held_bytes(&self) -> u64 {
        self.bytes.len() as u64
    }

    fn finish(self: Box<Self>, p: &mut Parser) -> Result<(), TraceError> {
        import::import(p, &self.bytes)
    }
}

#[cfg(test)]
mod tests;

//! Reading a trace file: its packets (bounds-checked, a malformed trace is
//! an error naming the offset), and the per-sequence interning state a
//! reader needs to name TrackEvents.

use std::collections::HashMap;

use protozero::Decoder;
use zerotrace_protos::protos::TracePacketDecoder;

use super::CliError;

/// `TracePacket.sequence_flags` bit: the sequence's incremental state was cleared.
const SEQ_INCREMENTAL_STATE_CLEARED: u32 = 1;

/// The packets of a trace (`Trace.packet`, field 1), in order.
pub fn packets<'a>(path: &str, trace: &'a [u8]) -> Result<Vec<&'a [u8]>, CliError> {
    let mut out = Vec::new();
    let mut dec = Decoder::new(trace);
    for field in &mut dec {
        let bad = |reason: String| CliError::BadTrace {
            path: path.to_owned(),
            reason,
        };
        let field = field.map_err(|e| bad(format!("{e} after {} packets", out.len())))?;
        if field.id != 1 {
            // Not a packet (Perfetto's readers skip such fields too).
            continue;
        }
        let bytes = field
            .as_bytes()
            .map_err(|e| bad(format!("packet {}: {e}", out.len())))?;
        out.push(bytes);
    }
    Ok(out)
}

/// Interned names of one sequence.
#[derive(Debug, Default, Clone)]
pub struct Interned {
    /// `event_names`.
    pub names: HashMap<u64, String>,
    /// `event_categories`.
    pub categories: HashMap<u64, String>,
    /// `debug_annotation_names`.
    pub annotation_names: HashMap<u64, String>,
}

/// Interning state of every sequence, fed packet by packet.
#[derive(Debug, Default)]
pub struct Sequences {
    seqs: HashMap<u32, Interned>,
}

impl Sequences {
    /// Takes in `p`'s interned data (after a clear, forgetting what was
    /// before) and returns its sequence's state.
    pub fn update(&mut self, p: &TracePacketDecoder<'_>) -> &Interned {
        let seq = p.trusted_packet_sequence_id().unwrap_or(0);
        if p.sequence_flags().unwrap_or(0) & SEQ_INCREMENTAL_STATE_CLEARED != 0 {
            self.seqs.remove(&seq);
        }
        let state = self.seqs.entry(seq).or_default();
        if let Some(i) = p.interned_data() {
            for e in i.event_names() {
                if let (Some(id), Some(n)) = (e.iid(), e.name()) {
                    state.names.insert(id, n.to_owned());
                }
            }
            for e in i.event_categories() {
                if let (Some(id), Some(n)) = (e.iid(), e.name()) {
                    state.categories.insert(id, n.to_owned());
                }
            }
            for e in i.debug_annotation_names() {
                if let (Some(id), Some(n)) = (e.iid(), e.name()) {
                    state.annotation_names.insert(id, n.to_owned());
                }
            }
        }
        state
    }
}

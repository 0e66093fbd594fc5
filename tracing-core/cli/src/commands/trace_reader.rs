//! Reading a trace file: its packets (bounds-checked, a malformed trace is
//! an error naming the offset; `compressed_packets` inflated in place, as
//! Perfetto's readers do), the per-sequence interning state a reader
//! needs to name TrackEvents, and a trace's CPU samples and heap dumps as
//! a [`Profile`], read by the trace processor.

use std::borrow::Cow;
use std::collections::HashMap;

use zerotrace_protos::protos::TracePacketDecoder;

use super::CliError;
use zerotrace_trace_processor::Storage;
use zerotrace_trace_processor::profile_view::Profile;

/// `TracePacket.sequence_flags` bit: the sequence's incremental state was cleared.
const SEQ_INCREMENTAL_STATE_CLEARED: u32 = 1;

/// The packets of a trace (`Trace.packet`, field 1), in order; a packet
/// holding `compressed_packets` (a zlib stream of `Trace.packet` records,
/// as Perfetto's service writes with `compression_type: DEFLATE`) is
/// replaced by the packets it holds. The trace processor's splitter reads
/// them, the one that frames every trace we read.
pub fn packets<'a>(path: &str, trace: &'a [u8]) -> Result<Vec<Cow<'a, [u8]>>, CliError> {
    zerotrace_trace_processor::packets::packets(trace).map_err(|e| CliError::BadTrace {
        path: path.to_owned(),
        reason: e.to_string(),
    })
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

/// `TracePacket.perf_sample` and `TracePacket.profile_packet`.
const PROFILE_FIELDS: [u32; 2] = [66, 37];

/// The CPU samples (`linux.perf`) and heap dumps (`android.heapprofd`) of
/// the trace in `bytes`, read from the file `path` names: loaded by the
/// trace processor (without SQL), the one reader of traces. A protobuf
/// trace with neither is not loaded; a trace of another format (a Firefox
/// profiler, simpleperf or pprof profile, plain or gzip-compressed) is
/// loaded, and the protobuf framing's error stands unless it holds
/// samples.
pub fn cpu_profile(path: &str, bytes: &[u8]) -> Result<Profile, CliError> {
    // A malformed trace is an error naming the offset, as for every command.
    let packets = match packets(path, bytes) {
        Ok(p) if Profile::is_protobuf_trace(bytes) => p,
        // Framed like a trace but of another format (a raw pprof profile).
        Ok(_) => {
            return Profile::from_trace(bytes).map_err(|e| CliError::BadTrace {
                path: path.to_owned(),
                reason: e.to_string(),
            });
        }
        Err(e) => {
            return match Profile::from_trace(bytes) {
                Ok(p) if !p.samples().is_empty() => Ok(p),
                _ => Err(e),
            };
        }
    };
    let profiled = packets.iter().any(|p| {
        protozero::Decoder::new(p)
            .filter_map(Result::ok)
            .any(|f| PROFILE_FIELDS.contains(&f.id))
    });
    if !profiled {
        return Ok(Profile::from_storage(&Storage::default()));
    }
    Profile::from_trace(bytes).map_err(|e| CliError::BadTrace {
        path: path.to_owned(),
        reason: e.to_string(),
    })
}

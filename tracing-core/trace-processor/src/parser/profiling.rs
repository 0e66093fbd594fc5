//! The profiling packets' dispatch and shared state: which parser takes a
//! packet carrying a `ProfilePacket`, `PerfSample`, `StackSample`,
//! `ModuleSymbols`, `DeobfuscationMapping` or `SmapsPacket`, the trackers
//! they share, and what runs once the trace has been read (deobfuscation,
//! the stats upstream counts at the end).

use crate::hash::{HashMap, HashSet};

use protozero::Decoder;
use zerotrace_protos::protos::TracePacketDecoder;

use super::Parser;
use super::{
    art_process_metadata, deobfuscation, heap_dump_facts, module_symbols, perf_sample,
    profile_packet, smaps, stack_sample, streaming_profile,
};
use crate::load::loaded::PacketView;
use crate::load::sequence::Generation;
use crate::storage::strings::StrId;
use crate::tracker::profiler_samples::ProfilerSampleTracker;
use crate::tracker::stack_profile::StackProfileTracker;

/// `TracePacket` field numbers of the profiling packets.
mod field {
    pub const PROFILE_PACKET: u32 = 37;
    pub const MODULE_SYMBOLS: u32 = 61;
    pub const DEOBFUSCATION_MAPPING: u32 = 64;
    pub const PERF_SAMPLE: u32 = 66;
    pub const SMAPS_PACKET: u32 = 68;
    pub const STACK_SAMPLE: u32 = 135;
    pub const STREAMING_PROFILE_PACKET: u32 = 54;
    pub const ART_PROCESS_METADATA: u32 = 131;
}

/// What the profiling parsers keep across packets.
#[derive(Debug, Default)]
pub struct ProfilingState {
    /// Mappings, frames, callsites.
    pub stacks: StackProfileTracker,
    /// Sample contexts.
    pub samples: ProfilerSampleTracker,
    /// heapprofd's state per sequence.
    pub heap: HashMap<u32, profile_packet::HeapSequence>,
    /// heapprofd's dumps being read for the profile views, per sequence.
    pub heap_facts: HashMap<u32, heap_dump_facts::OpenDump>,
    /// (upid, window end, heap) of the `heap_profile` rows made.
    pub seen_heap_profiles: HashSet<(u32, i64, StrId)>,
    /// Perf sessions per sequence.
    pub perf: HashMap<u32, perf_sample::PerfSequence>,
    /// StackSample sessions and contexts.
    pub stack_samples: stack_sample::StackSampleState,
    /// `DeobfuscationMapping`s, applied at the end.
    pub deobfuscation: Vec<Vec<u8>>,
}

/// Parses a profiling packet; false when the packet carries none.
pub fn parse(p: &mut Parser, packet: &PacketView<'_>, generation: &Generation) -> bool {
    let d = Decoder::new(packet.bytes);
    let field = |id: u32| d.find_last(id).and_then(|f| f.as_bytes().ok());
    let seq = TracePacketDecoder::new(packet.bytes)
        .trusted_packet_sequence_id()
        .unwrap_or(0);
    let g = packet.generation;
    if let Some(b) = field(field::PROFILE_PACKET) {
        profile_packet::parse(p, b, packet.ts, seq, packet.index, g, generation);
    } else if let Some(b) = field(field::PERF_SAMPLE) {
        perf_sample::parse(p, b, packet.ts, seq, packet.index, g, generation);
    } else if let Some(b) = field(field::STACK_SAMPLE) {
        stack_sample::parse(p, b, packet.ts, seq, g, generation);
    } else if let Some(b) = field(field::STREAMING_PROFILE_PACKET) {
        streaming_profile::parse(p, b, packet.ts, g, generation);
    } else if let Some(b) = field(field::MODULE_SYMBOLS) {
        module_symbols::parse(p, b);
    } else if let Some(b) = field(field::DEOBFUSCATION_MAPPING) {
        p.profiling.deobfuscation.push(b.to_vec());
    } else if let Some(b) = field(field::ART_PROCESS_METADATA) {
        art_process_metadata::parse(p, b, packet.ts);
    } else if let Some(b) = field(field::SMAPS_PACKET) {
        smaps::parse(p, b, packet.ts);
    } else {
        return false;
    }
    true
}

/// What runs once every packet has been parsed.
pub fn finish(p: &mut Parser, generations: &[Generation]) {
    deobfuscation::finish(p);
    // Dumps the trace ended before closing: the views show them resolved
    // with what was defined. Upstream never resolves them, so what their
    // resolution would count stays out of `stats`.
    let open = heap_dump_facts::open_dumps(p);
    if !open.is_empty() {
        let stats = p.storage.stats.clone();
        let empty = Generation::default();
        for (seq, g) in open {
            let st = p.profiling.heap.remove(&seq).unwrap_or_default();
            let generation = generations.get(g as usize).unwrap_or(&empty);
            let mut cache = HashMap::default();
            profile_packet::close_facts(p, &st, &mut cache, seq, (g, generation), true);
            p.profiling.heap.insert(seq, st);
        }
        p.storage.stats = stats;
    }
    let unfinished = p
        .profiling
        .heap
        .values()
        .filter(|h| h.has_pending())
        .count();
    if unfinished > 0 {
        p.storage
            .stats
            .add("heapprofd_non_finalized_profile", unfinished as i64);
    }
    let tmp_without_build_id = p
        .storage
        .profiling
        .mappings
        .iter()
        .filter(|m| {
            let path = p.storage.strings.get(m.name).unwrap_or("");
            let build_id = p.storage.strings.get(m.build_id).unwrap_or("");
            path.starts_with("/data/local/tmp/") && build_id.is_empty()
        })
        .count();
    if tmp_without_build_id > 0 {
        p.storage.stats.add(
            "symbolization_tmp_build_id_not_found",
            tmp_without_build_id as i64,
        );
    }
}

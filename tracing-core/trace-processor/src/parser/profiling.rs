//! The profiling packets' dispatch and shared state: which parser takes a
//! packet carrying a `ProfilePacket`, `PerfSample`, `StackSample`,
//! `ModuleSymbols`, `DeobfuscationMapping` or `SmapsPacket`, the trackers
//! they share, and what runs once the trace has been read (deobfuscation,
//! the stats upstream counts at the end).

use crate::hash::{HashMap, HashSet};

use zerotrace_protos::protos::TracePacket;
use zerotrace_protos::upstream_tables::packet_field;

use super::Parser;
use super::importer::Importer;
use super::{
    art_process_metadata, deobfuscation, heap_dump_facts, module_symbols, perf_sample,
    profile_packet, smaps, stack_sample, streaming_profile,
};
use crate::column_store::strings::StrId;
use crate::packet_fields::STREAMING_PROFILE_PACKET;
use crate::sequence_state::Generation;
use crate::tracker::profiler_samples::ProfilerSampleTracker;
use crate::tracker::stack_profile::StackProfileTracker;

/// `TracePacket` field numbers of the profiling packets the generated
/// code does not name.
mod field {
    pub const DEOBFUSCATION_MAPPING: u32 = 64;
    pub const SMAPS_PACKET: u32 = 68;
    pub const STACK_SAMPLE: u32 = 135;
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
    /// Java heap dumps being read, and their rows by class and field.
    pub heap_graph: crate::tracker::heap_graph::HeapGraphTracker,
}

/// The payloads this module imports.
pub const IMPORTERS: &[(u32, Importer)] = &[
    (TracePacket::FIELD_PROFILE_PACKET, |p, i| {
        let (g, seq) = (i.packet.generation, i.generation.sequence_id);
        profile_packet::parse(p, i.bytes, i.ts, seq, i.packet.index, g, i.generation);
    }),
    (packet_field::PERF_SAMPLE, |p, i| {
        let (g, seq) = (i.packet.generation, i.generation.sequence_id);
        perf_sample::parse(p, i.bytes, i.ts, seq, i.packet.index, g, i.generation);
    }),
    (field::STACK_SAMPLE, |p, i| {
        let (g, seq) = (i.packet.generation, i.generation.sequence_id);
        stack_sample::parse(p, i.bytes, i.ts, seq, g, i.generation);
    }),
    (STREAMING_PROFILE_PACKET, |p, i| {
        streaming_profile::parse(p, i.bytes, i.ts, i.packet.generation, i.generation);
    }),
    (packet_field::MODULE_SYMBOLS, |p, i| {
        module_symbols::parse(p, i.bytes)
    }),
    (field::DEOBFUSCATION_MAPPING, |p, i| {
        p.translation.add_deobfuscation_map(i.bytes);
        p.profiling.deobfuscation.push(i.bytes.to_vec());
    }),
    (field::ART_PROCESS_METADATA, |p, i| {
        art_process_metadata::parse(p, i.bytes, i.ts);
    }),
    (field::SMAPS_PACKET, |p, i| smaps::parse(p, i.bytes, i.ts)),
];

/// What runs once every packet has been parsed.
pub fn finish(p: &mut Parser, generations: &[Generation]) {
    super::heap_graph::finish(p);
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

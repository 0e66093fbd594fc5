//! heapprofd's dumps as the profile views show them, gathered while
//! `profile_packet.rs` turns the same packets into
//! `heap_profile_allocation` rows: each `process_dumps` entry with its
//! running totals per callstack as written (entries split over the
//! packets of one dump joined), its flags and stats, and which packet held
//! each sample. A dump closes with the packet whose `continued` is unset;
//! its callstacks then resolve through the same callsites as the rows
//! (the caller's resolver). Dumps still open when the trace ends close as
//! unfinished. What cannot be read is counted in
//! [`crate::storage::profile_facts::ProfileLosses`].

use zerotrace_protos::protos::ProfilePacketDecoder;
use zerotrace_protos::protos::profile_packet::{
    HeapSampleDecoder, ProcessHeapSamplesDecoder, ProcessStatsDecoder,
};

use super::Parser;
use crate::storage::profile_facts::{
    HeapDumpFacts, HeapDumpFlags, HeapDumpStats, HeapSampleFacts, Unresolved,
};

/// `BUILTIN_CLOCK_MONOTONIC_COARSE`, heapprofd's dump clock.
const MONOTONIC_COARSE: u64 = 4;

/// One sequence's dump being read.
#[derive(Debug, Default)]
pub struct OpenDump {
    /// Its entries so far.
    pub entries: Vec<HeapDumpFacts>,
    /// The generation its callstacks resolve in, as of its last packet.
    pub generation: u32,
    /// The `index` expected next on the sequence.
    next_index: Option<u64>,
}

fn stats_of(s: &ProcessStatsDecoder<'_>) -> HeapDumpStats {
    HeapDumpStats {
        unwinding_errors: s.unwinding_errors().unwrap_or(0),
        heap_samples: s.heap_samples().unwrap_or(0),
        map_reparses: s.map_reparses().unwrap_or(0),
        total_unwinding_time_us: s.total_unwinding_time_us().unwrap_or(0),
        client_spinlock_blocked_us: s.client_spinlock_blocked_us().unwrap_or(0),
    }
}

/// Takes in one `ProfilePacket` of sequence `seq` (trace packet
/// `packet`, at trace time `ts`, in generation `generation`).
pub fn on_packet(p: &mut Parser, encoded: &[u8], seq: u32, packet: u64, ts: i64, generation: u32) {
    if !p.storage.profile_facts.gathered {
        return;
    }
    let pp = ProfilePacketDecoder::new(encoded);
    let losses = &mut p.storage.profile_facts.losses;
    if pp.decode_error().is_some() {
        losses.heap_malformed += 1;
    }
    if pp.has_strings() || pp.has_mappings() || pp.has_frames() || pp.has_callstacks() {
        losses.heap_legacy_packets += 1;
    }
    let open = p.profiling.heap_facts.entry(seq).or_default();
    open.generation = generation;
    if let Some(index) = pp.index() {
        if let Some(e) = open.next_index.filter(|&e| index > e) {
            losses.heap_missing_packets = losses.heap_missing_packets.saturating_add(index - e);
        }
        open.next_index = Some(index.saturating_add(1));
    }
    for bytes in pp.process_dumps_bytes() {
        let d = ProcessHeapSamplesDecoder::new(bytes);
        if d.decode_error().is_some() {
            losses.heap_malformed += 1;
            continue;
        }
        let flags = HeapDumpFlags {
            from_startup: d.from_startup().unwrap_or(false),
            rejected_concurrent: d.rejected_concurrent().unwrap_or(false),
            disconnected: d.disconnected().unwrap_or(false),
            buffer_overran: d.buffer_overran().unwrap_or(false),
            client_error: d.client_error_raw().unwrap_or(0),
            buffer_corrupted: d.buffer_corrupted().unwrap_or(false),
            hit_guardrail: d.hit_guardrail().unwrap_or(false),
        };
        let mut samples = Vec::new();
        for sb in d.samples_bytes() {
            let s = HeapSampleDecoder::new(sb);
            if s.decode_error().is_some() {
                losses.heap_malformed += 1;
                continue;
            }
            samples.push(HeapSampleFacts {
                callstack_iid: s.callstack_id().unwrap_or(0),
                callsite: None,
                unresolved: None,
                allocated: s.self_allocated().unwrap_or(0),
                freed: s.self_freed().unwrap_or(0),
                alloc_count: s.alloc_count().unwrap_or(0),
                free_count: s.free_count().unwrap_or(0),
                self_max: s.self_max(),
                packet,
            });
        }
        let dump_ts = match d.timestamp().and_then(|t| i64::try_from(t).ok()) {
            Some(raw) => p.clocks.trace_time(MONOTONIC_COARSE, raw).unwrap_or(raw),
            None => ts,
        };
        let entry = HeapDumpFacts {
            ts: dump_ts,
            sequence: seq,
            pid: d.pid().unwrap_or(0),
            heap_name: d.heap_name().unwrap_or_default().to_owned(),
            sampling_interval_bytes: d.sampling_interval_bytes().unwrap_or(0),
            orig_sampling_interval_bytes: d.orig_sampling_interval_bytes().unwrap_or(0),
            flags,
            stats: d.stats().map(|s| stats_of(&s)),
            samples,
            unfinished: false,
        };
        match open.entries.last_mut() {
            Some(last) if last.same_heap(&entry) => {
                last.samples.extend(entry.samples);
                // The latest header wins (its stats are the newest).
                last.flags = entry.flags;
                last.stats = entry.stats.or(last.stats.take());
            }
            _ => open.entries.push(entry),
        }
    }
}

/// Closes `seq`'s dump: each sample's callstack resolved by `resolve`
/// (pid, callstack iid); `unfinished`: no closing packet was seen.
pub fn close(
    p: &mut Parser,
    seq: u32,
    unfinished: bool,
    mut resolve: impl FnMut(&mut Parser, u64, u64) -> Result<u32, Unresolved>,
) {
    let Some(open) = p.profiling.heap_facts.get_mut(&seq) else {
        return;
    };
    let entries = std::mem::take(&mut open.entries);
    for mut e in entries {
        for s in &mut e.samples {
            match resolve(p, e.pid, s.callstack_iid) {
                Ok(c) => s.callsite = Some(c),
                Err(u) => s.unresolved = Some(u),
            }
        }
        e.unfinished = unfinished;
        p.storage.profile_facts.heap_dumps.push(e);
    }
}

/// The sequences with a dump open, and the generation each resolves in.
pub fn open_dumps(p: &Parser) -> Vec<(u32, u32)> {
    let mut out: Vec<(u32, u32)> = p
        .profiling
        .heap_facts
        .iter()
        .filter(|(_, o)| !o.entries.is_empty())
        .map(|(seq, o)| (*seq, o.generation))
        .collect();
    out.sort_unstable();
    out
}

//! `ProfilePacket`: heapprofd's dumps. A dump's strings, mappings, frames
//! and callstacks are its own (held until the dump ends, `continued`
//! false) or the sequence's interned ones; each process's samples are
//! running totals per callstack, turned into rows of
//! `heap_profile_allocation` that hold what changed since the previous
//! dump (allocations positive, frees negative), and each dump's window
//! into `heap_profile`. Stats as upstream counts them: missing packets,
//! unknown ids, non-monotonic totals, the client's own errors.

use crate::hash::{HashMap, HashSet};

use zerotrace_protos::protos::{
    CallstackDecoder, FrameDecoder, MappingDecoder, ProfilePacketDecoder,
};

use super::{Parser, heap_dump_facts};
use crate::column_store::strings::StrId;
use crate::sequence_state::Generation;
use crate::storage::profile_facts::Unresolved;
use crate::storage::profiling_rows::{HeapAllocationRow, HeapProfileRow};
use crate::tracker::stack_profile::{MappingParams, mapping_name};

/// `ProcessHeapSamples.start_timestamp`, not in our generated decoder.
const START_TIMESTAMP: u32 = 15;
/// The ART heap: its frees are not rows.
const ART_HEAP: &str = "com.android.art";
/// `BUILTIN_CLOCK_MONOTONIC_COARSE`.
const MONOTONIC_COARSE: u64 = 4;

/// One sample of a dump, held until the dump ends.
#[derive(Debug, Clone)]
struct Pending {
    pid: u64,
    heap_name: StrId,
    ts: i64,
    callstack_iid: u64,
    self_allocated: u64,
    self_freed: u64,
    alloc_count: u64,
    free_count: u64,
}

/// Running (count, size) of a callsite.
type Totals = (i64, i64);

/// What one sequence's dumps keep.
#[derive(Debug, Default)]
pub struct HeapSequence {
    prev_index: Option<u64>,
    strings: HashMap<u64, Vec<u8>>,
    mappings: HashMap<u64, u32>,
    frames: HashMap<u64, u32>,
    callstacks: HashMap<u64, u32>,
    pending: Vec<Pending>,
    prev_alloc: HashMap<(u32, u32), Totals>,
    prev_free: HashMap<(u32, u32), Totals>,
    seen_callstacks: HashMap<(u32, u64, StrId), HashSet<u32>>,
    alloc_correction: HashMap<u64, Totals>,
    free_correction: HashMap<u64, Totals>,
}

impl HeapSequence {
    /// Whether a dump was left unfinished.
    pub fn has_pending(&self) -> bool {
        !self.pending.is_empty()
    }

    fn string(&self, iid: u64) -> Option<&[u8]> {
        if iid == 0 {
            return Some(self.strings.get(&0).map_or(&[][..], Vec::as_slice));
        }
        self.strings.get(&iid).map(Vec::as_slice)
    }
}

/// Callsites of the dump being closed, by (upid, callstack iid), so each
/// resolves (and counts its stat) once.
pub type Resolved = HashMap<(u32, u64), Result<u32, Unresolved>>;

/// The callsite of a callstack of the dump: the dump's own, else the
/// sequence's interned one.
fn resolve(
    p: &mut Parser,
    st: &HeapSequence,
    cache: &mut Resolved,
    generation: (u32, &Generation),
    upid: u32,
    iid: u64,
) -> Result<u32, Unresolved> {
    if let Some(r) = cache.get(&(upid, iid)) {
        return *r;
    }
    let r = match st.callstacks.get(&iid) {
        Some(c) => Ok(*c),
        None => p.profiling.stacks.resolve_callstack(
            &mut p.storage,
            generation.0,
            generation.1,
            Some(upid),
            iid,
        ),
    };
    cache.insert((upid, iid), r);
    r
}

/// Closes the open dump of `seq` for the profile views, its callstacks
/// resolved in `generation` (the caller's cache shared).
pub fn close_facts(
    p: &mut Parser,
    st: &HeapSequence,
    cache: &mut Resolved,
    seq: u32,
    generation: (u32, &Generation),
    unfinished: bool,
) {
    if !p.storage.profile_facts.gathered {
        return;
    }
    heap_dump_facts::close(p, seq, unfinished, |p, pid, iid| {
        let upid = p
            .processes
            .get_or_create_process(&mut p.storage, pid as i64);
        resolve(p, st, cache, generation, upid, iid)
    });
}

/// Parses one `ProfilePacket` of sequence `seq`, held by trace packet
/// `packet`.
#[allow(clippy::too_many_arguments)]
pub fn parse(
    p: &mut Parser,
    bytes: &[u8],
    ts: i64,
    seq: u32,
    packet: u64,
    generation_idx: u32,
    generation: &Generation,
) {
    heap_dump_facts::on_packet(p, bytes, seq, packet, ts, generation_idx);
    let pkt = ProfilePacketDecoder::new(bytes);
    let mut st = p.profiling.heap.remove(&seq).unwrap_or_default();
    let index = pkt.index().unwrap_or(0);
    let dropped = match st.prev_index {
        None => index != 0,
        Some(prev) => prev.wrapping_add(1) != index,
    };
    if dropped {
        p.storage.stats.incr("heapprofd_missing_packet");
    }
    st.prev_index = Some(index);

    for s in pkt.strings() {
        let iid = s.iid().unwrap_or(0);
        st.strings.insert(iid, s.str().unwrap_or(&[]).to_vec());
    }
    for m in pkt.mappings_bytes() {
        add_mapping(p, &mut st, m);
    }
    for f in pkt.frames_bytes() {
        add_frame(p, &mut st, f);
    }
    for c in pkt.callstacks_bytes() {
        add_callstack(p, &mut st, c);
    }
    for dump in pkt.process_dumps() {
        let end_raw = i64::try_from(dump.timestamp().unwrap_or(0)).unwrap_or(i64::MAX);
        let Ok(window_end) = p.clocks.trace_time(MONOTONIC_COARSE, end_raw) else {
            continue;
        };
        let window_start = protozero::Decoder::new(dump.raw_bytes())
            .find_last(START_TIMESTAMP)
            .and_then(|f| f.as_u64().ok())
            .and_then(|v| i64::try_from(v).ok())
            .and_then(|v| p.clocks.trace_time(MONOTONIC_COARSE, v).ok())
            .unwrap_or(window_end);
        let pid = dump.pid().unwrap_or(0);
        let pid_idx = pid as i64;
        p.storage
            .stats
            .set_indexed("heapprofd_last_profile_timestamp", pid_idx, ts);
        let heap_name = match dump.heap_name() {
            Some(h) if !h.is_empty() => p.storage.strings.intern(h),
            _ => StrId::NULL,
        };
        let upid = p.processes.get_or_create_process(&mut p.storage, pid_idx);
        if p.profiling
            .seen_heap_profiles
            .insert((upid, window_end, heap_name))
        {
            p.storage.profiling.heap_profiles.push(HeapProfileRow {
                ts: window_start,
                ts_end: window_end,
                upid,
                heap_name,
            });
        }
        let stats = &mut p.storage.stats;
        if dump.disconnected().unwrap_or(false) {
            stats.add_indexed("heapprofd_client_disconnected", pid_idx, 1);
        }
        if dump.buffer_corrupted().unwrap_or(false) {
            stats.add_indexed("heapprofd_buffer_corrupted", pid_idx, 1);
        }
        let client_error = dump.client_error_raw().unwrap_or(0);
        // CLIENT_ERROR_HIT_TIMEOUT = 1.
        if dump.buffer_overran().unwrap_or(false) || client_error == 1 {
            stats.add_indexed("heapprofd_buffer_overran", pid_idx, 1);
        }
        if client_error != 0 {
            stats.set_indexed("heapprofd_client_error", pid_idx, i64::from(client_error));
        }
        if dump.rejected_concurrent().unwrap_or(false) {
            stats.add_indexed("heapprofd_rejected_concurrent", pid_idx, 1);
        }
        if dump.hit_guardrail().unwrap_or(false) {
            stats.add_indexed("heapprofd_hit_guardrail", pid_idx, 1);
        }
        let orig = dump.orig_sampling_interval_bytes().unwrap_or(0);
        if orig != 0 {
            let now = dump.sampling_interval_bytes().unwrap_or(0);
            stats.set_indexed(
                "heapprofd_sampling_interval_adjusted",
                pid_idx,
                now as i64 - orig as i64,
            );
        }
        let ps = dump.stats();
        let (unwind_us, samples, spin) = ps.as_ref().map_or((0, 0, 0), |s| {
            (
                s.total_unwinding_time_us().unwrap_or(0),
                s.heap_samples().unwrap_or(0),
                s.client_spinlock_blocked_us().unwrap_or(0),
            )
        });
        stats.add_indexed("heapprofd_unwind_time_us", pid_idx, unwind_us as i64);
        stats.add_indexed("heapprofd_unwind_samples", pid_idx, samples as i64);
        stats.add_indexed("heapprofd_client_spinlock_blocked", pid_idx, spin as i64);
        let trustworthy_max_count = orig > 0;
        let alloc_heap = if heap_name.is_null() {
            p.storage.strings.intern("unknown")
        } else {
            heap_name
        };
        for s in dump.samples() {
            let mut a = Pending {
                pid,
                heap_name: alloc_heap,
                ts: window_end,
                callstack_iid: s.callstack_id().unwrap_or(0),
                self_allocated: 0,
                self_freed: 0,
                alloc_count: 0,
                free_count: 0,
            };
            if let Some(max) = s.self_max() {
                a.self_allocated = max;
                if trustworthy_max_count {
                    a.alloc_count = s.self_max_count().unwrap_or(0);
                }
            } else {
                a.self_allocated = s.self_allocated().unwrap_or(0);
                a.self_freed = s.self_freed().unwrap_or(0);
                a.alloc_count = s.alloc_count().unwrap_or(0);
                a.free_count = s.free_count().unwrap_or(0);
            }
            st.pending.push(a);
        }
    }
    if !pkt.continued().unwrap_or(false) {
        let pending = std::mem::take(&mut st.pending);
        let mut cache = Resolved::default();
        for a in &pending {
            let upid = p
                .processes
                .get_or_create_process(&mut p.storage, a.pid as i64);
            let gen_ref = (generation_idx, generation);
            if let Ok(callsite) = resolve(p, &st, &mut cache, gen_ref, upid, a.callstack_iid) {
                add_allocation(p, &mut st, upid, callsite, a);
            }
        }
        close_facts(p, &st, &mut cache, seq, (generation_idx, generation), false);
        st.strings.clear();
        st.mappings.clear();
        st.frames.clear();
        st.callstacks.clear();
    }
    p.profiling.heap.insert(seq, st);
}

fn add_mapping(p: &mut Parser, st: &mut HeapSequence, bytes: &[u8]) {
    let m = MappingDecoder::new(bytes);
    let Some(build_id) = st.string(m.build_id().unwrap_or(0)).map(<[u8]>::to_vec) else {
        p.storage.stats.incr("stackprofile_invalid_string_id");
        return;
    };
    let mut parts = Vec::new();
    for id in m.path_string_ids() {
        match st.string(id) {
            Some(s) => parts.push(String::from_utf8_lossy(s).into_owned()),
            None => {
                p.storage.stats.incr("stackprofile_invalid_string_id");
                break;
            }
        }
    }
    let parts: Vec<&str> = parts.iter().map(String::as_str).collect();
    let params = MappingParams {
        build_id: Some(build_id),
        exact_offset: m.exact_offset().unwrap_or(0),
        start_offset: m.start_offset().unwrap_or(0),
        start: m.start().unwrap_or(0),
        end: m.end().unwrap_or(0),
        load_bias: m.load_bias().unwrap_or(0),
        name: mapping_name(&parts),
    };
    let id = p.profiling.stacks.intern_mapping(&mut p.storage, params);
    st.mappings.insert(m.iid().unwrap_or(0), id);
}

fn add_frame(p: &mut Parser, st: &mut HeapSequence, bytes: &[u8]) {
    let f = FrameDecoder::new(bytes);
    let Some(mapping) = st.mappings.get(&f.mapping_id().unwrap_or(0)).copied() else {
        p.storage.stats.incr("stackprofile_invalid_mapping_id");
        return;
    };
    let Some(name) = st
        .string(f.function_name_id().unwrap_or(0))
        .map(|s| String::from_utf8_lossy(s).into_owned())
    else {
        p.storage.stats.incr("stackprofile_invalid_string_id");
        return;
    };
    let id = p.profiling.stacks.intern_frame(
        &mut p.storage,
        mapping,
        f.rel_pc().unwrap_or(0),
        &name,
        None,
        None,
    );
    st.frames.insert(f.iid().unwrap_or(0), id);
}

fn add_callstack(p: &mut Parser, st: &mut HeapSequence, bytes: &[u8]) {
    let c = CallstackDecoder::new(bytes);
    let mut frames = Vec::new();
    for f in c.frame_ids() {
        match st.frames.get(&f) {
            Some(id) => frames.push(*id),
            None => {
                p.storage.stats.incr("stackprofile_invalid_frame_id");
                return;
            }
        }
    }
    if let Some(id) = p
        .profiling
        .stacks
        .callsite_of_frames(&mut p.storage, &frames)
    {
        st.callstacks.insert(c.iid().unwrap_or(0), id);
    }
}

fn add_allocation(p: &mut Parser, st: &mut HeapSequence, upid: u32, callsite: u32, a: &Pending) {
    let mut alloc = (a.alloc_count as i64, a.self_allocated as i64);
    let mut free = (-(a.free_count as i64), -(a.self_freed as i64));
    let key = (upid, callsite);
    let prev_alloc = *st.prev_alloc.entry(key).or_default();
    let prev_free = *st.prev_free.entry(key).or_default();
    let new_callstack = st
        .seen_callstacks
        .entry((upid, a.callstack_iid, a.heap_name))
        .or_default()
        .insert(callsite);
    if new_callstack {
        st.alloc_correction.insert(a.callstack_iid, prev_alloc);
        st.free_correction.insert(a.callstack_iid, prev_free);
    }
    if let Some(c) = st.alloc_correction.get(&a.callstack_iid) {
        alloc.0 += c.0;
        alloc.1 += c.1;
    }
    if let Some(c) = st.free_correction.get(&a.callstack_iid) {
        free.0 += c.0;
        free.1 += c.1;
    }
    let alloc_delta = (alloc.0 - prev_alloc.0, alloc.1 - prev_alloc.1);
    let free_delta = (free.0 - prev_free.0, free.1 - prev_free.1);
    if alloc_delta.0 < 0 || alloc_delta.1 < 0 || free_delta.0 > 0 || free_delta.1 > 0 {
        p.storage
            .stats
            .add_indexed("heapprofd_malformed_packet", i64::from(upid), 1);
        return;
    }
    let row = |(count, size): Totals| HeapAllocationRow {
        ts: a.ts,
        upid,
        heap_name: a.heap_name,
        callsite_id: callsite,
        count,
        size,
    };
    if alloc_delta != (0, 0) {
        p.storage.profiling.heap_allocations.push(row(alloc_delta));
    }
    let is_art = p.storage.strings.get(a.heap_name) == Some(ART_HEAP);
    if !is_art && free_delta != (0, 0) {
        p.storage.profiling.heap_allocations.push(row(free_delta));
    }
    st.prev_alloc.insert(key, alloc);
    st.prev_free.insert(key, free);
}

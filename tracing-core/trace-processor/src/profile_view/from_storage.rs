//! The views' [`Profile`] from the trace processor's storage: CPU samples
//! from the `linux.perf` rows of `__intrinsic_profiler_sample` (thread,
//! process, CPU mode and unwinding error through the rows they point at),
//! their stacks from `stack_profile_callsite` walked from the leaf to the
//! root, frames named by `stack_profile_frame` and their
//! `stack_profile_symbol` sets, mappings from `stack_profile_mapping`;
//! kernel records lost from the `perf_cpu_lost_records` stat; and from
//! `storage/profile_facts.rs` what the tables do not hold (the
//! sequence and packet of each sample, why a callstack did not resolve,
//! timebases, heapprofd's dumps as written, the losses no stat names).

use std::collections::{BTreeMap, HashMap};

use super::heap::{HeapCounts, HeapDump, HeapSample};
use super::profile::Profile;
use super::sample::{Counts, Sample, skip_reason_name, unwind_error_name};
use super::tables::{Frame, Mapping, SymbolLine, Tables};
use crate::error::TraceError;
use crate::load::Loader;
use crate::storage::Storage;
use crate::storage::profile_facts::HeapSampleFacts;

/// `Profiling.CpuMode` number of the trace processor's mode name.
fn cpu_mode_number(name: &str) -> i32 {
    match name {
        "kernel" => 1,
        "user" => 2,
        "hypervisor" => 3,
        "guest_kernel" => 4,
        "guest_user" => 5,
        _ => 0,
    }
}

/// `Profiling.StackUnwindError` number of the trace processor's name;
/// `None` for `none` (unwinding succeeded).
fn unwind_error_number(name: &str) -> Option<i32> {
    let n = match name {
        "none" => return None,
        "memory_invalid" => 2,
        "unwind_info" => 3,
        "unsupported" => 4,
        "invalid_map" => 5,
        "max_frames_exceeded" => 6,
        "repeated_frame" => 7,
        "invalid_elf" => 8,
        "system_call" => 9,
        "thread_timeout" => 10,
        "thread_does_not_exist" => 11,
        "bad_arch" => 12,
        "maps_parse" => 13,
        "invalid_parameter" => 14,
        "ptrace_call" => 15,
        _ => 0,
    };
    Some(n)
}

/// The raw bytes of a hex build id (empty when it is not hex).
fn unhex(s: &str) -> Vec<u8> {
    let b = s.as_bytes();
    if b.len() % 2 != 0 {
        return Vec::new();
    }
    let digit = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    let mut out = Vec::with_capacity(b.len() / 2);
    for pair in b.chunks_exact(2) {
        match (digit(pair[0]), digit(pair[1])) {
            (Some(h), Some(l)) => out.push(h << 4 | l),
            _ => return Vec::new(),
        }
    }
    out
}

/// `DataSourceStopReason` name of a `producer_event`'s reason.
fn stop_reason_name(v: i32) -> String {
    match v {
        1 => "PROFILER_STOP_GUARDRAIL".to_owned(),
        0 => "PROFILER_STOP_UNKNOWN".to_owned(),
        n => format!("DataSourceStopReason({n})"),
    }
}

/// Folds the storage's mappings, frames and callsites into the views'
/// tables as stacks are asked for.
struct Stacks<'s> {
    storage: &'s Storage,
    tables: Tables,
    /// Storage mapping id → view index (`None`: a mapping-less frame's
    /// placeholder).
    mappings: HashMap<u32, Option<usize>>,
    /// Storage frame id → view index.
    frames: HashMap<u32, usize>,
    /// Callsite id → its frames, root first.
    callsites: HashMap<u32, Vec<usize>>,
    /// Symbol set id → its lines, innermost first.
    symbols: HashMap<u32, Vec<SymbolLine>>,
}

impl<'s> Stacks<'s> {
    fn new(storage: &'s Storage) -> Self {
        let mut symbols: HashMap<u32, Vec<SymbolLine>> = HashMap::new();
        for row in &storage.profiling.symbols {
            let name = storage.strings.get(row.name).unwrap_or("");
            symbols
                .entry(row.symbol_set_id)
                .or_default()
                .push(SymbolLine {
                    function_name: name.to_owned(),
                    source_file: storage.strings.get(row.source_file).map(str::to_owned),
                    line: row.line_number.unwrap_or(0),
                });
        }
        Stacks {
            storage,
            tables: Tables::default(),
            mappings: HashMap::new(),
            frames: HashMap::new(),
            callsites: HashMap::new(),
            symbols,
        }
    }

    fn mapping(&mut self, id: u32) -> Option<usize> {
        if let Some(m) = self.mappings.get(&id) {
            return *m;
        }
        let strings = &self.storage.strings;
        let m = self
            .storage
            .profiling
            .mappings
            .get(id as usize)
            .and_then(|row| {
                let path = strings.get(row.name).unwrap_or("");
                // The placeholder of frames that named no mapping.
                if path.is_empty() && row.start == 0 && row.end as u64 == u64::MAX {
                    return None;
                }
                Some(self.tables.intern_mapping(Mapping {
                    path: path.to_owned(),
                    build_id: unhex(strings.get(row.build_id).unwrap_or("")),
                    start: row.start as u64,
                    end: row.end as u64,
                    exact_offset: row.exact_offset as u64,
                    start_offset: row.start_offset as u64,
                    load_bias: row.load_bias as u64,
                }))
            });
        self.mappings.insert(id, m);
        m
    }

    fn frame(&mut self, id: u32) -> usize {
        if let Some(f) = self.frames.get(&id) {
            return *f;
        }
        let (frame, symbols) = match self.storage.profiling.frames.get(id as usize) {
            Some(row) => {
                let name = self
                    .storage
                    .strings
                    .get(row.name)
                    .filter(|n| !n.is_empty())
                    .map(str::to_owned);
                let symbols = row
                    .symbol_set_id
                    .and_then(|s| self.symbols.get(&s))
                    .cloned();
                let frame = Frame {
                    mapping: self.mapping(row.mapping),
                    rel_pc: row.rel_pc as u64,
                    name,
                };
                (frame, symbols)
            }
            None => (
                Frame {
                    mapping: None,
                    rel_pc: 0,
                    name: None,
                },
                None,
            ),
        };
        let f = self.tables.intern_frame(frame, symbols);
        self.frames.insert(id, f);
        f
    }

    /// The frames of callsite `id`, root first.
    fn stack(&mut self, id: u32) -> Vec<usize> {
        if let Some(s) = self.callsites.get(&id) {
            return s.clone();
        }
        let callsites = &self.storage.profiling.callsites;
        let mut frame_ids = Vec::new();
        let mut next = Some(id);
        // A parent chain never runs longer than the table (no cycles).
        while let Some(c) = next.filter(|_| frame_ids.len() <= callsites.len()) {
            let Some(row) = callsites.get(c as usize) else {
                break;
            };
            frame_ids.push(row.frame_id);
            next = row.parent_id;
        }
        frame_ids.reverse();
        let stack: Vec<usize> = frame_ids.into_iter().map(|f| self.frame(f)).collect();
        self.callsites.insert(id, stack.clone());
        stack
    }
}

impl Profile {
    /// The profile of a loaded trace; its samples and heap dumps are there
    /// when the loader gathered them ([`Loader::with_profile_facts`]).
    pub fn from_storage(storage: &Storage) -> Profile {
        let mut stacks = Stacks::new(storage);
        let (samples, counts) = cpu_samples(storage, &mut stacks);
        let (heap_dumps, heap_counts) = heap_dumps(storage, &mut stacks);
        Profile {
            samples,
            tables: stacks.tables,
            counts,
            timebases: storage.profile_facts.perf_timebases.clone(),
            heap_dumps,
            heap_counts,
        }
    }

    /// Whether the loader reads `bytes` as a Perfetto protobuf trace:
    /// plain (not gzip-compressed) and of no other format (a pprof
    /// profile's first tag may be a trace's).
    pub fn is_protobuf_trace(bytes: &[u8]) -> bool {
        let head = bytes.get(..1 << 20).unwrap_or(bytes);
        crate::load::format::sniff(head) == Ok(crate::load::format::Format::Proto)
    }

    /// The profile of the trace in `bytes` (loaded without SQL), plain
    /// or gzip-compressed (a pprof file usually is).
    pub fn from_trace(bytes: &[u8]) -> Result<Profile, TraceError> {
        let mut loader = Loader::with_profile_facts();
        if bytes.starts_with(&GZIP_MAGIC) {
            push_gunzipped(&mut loader, bytes)?;
        } else {
            loader.push(bytes)?;
        }
        Ok(Profile::from_storage(&loader.finish()?))
    }
}

/// The gzip magic.
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// Pushes what the gzip stream `bytes` inflates to, a chunk at a time,
/// telling the loader how many compressed bytes were read (its budget
/// bounds the inflation ratio).
fn push_gunzipped(loader: &mut Loader, bytes: &[u8]) -> Result<(), TraceError> {
    use std::io::Read;
    let mut input = bytes;
    let mut gz = flate2::bufread::MultiGzDecoder::new(&mut input);
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = gz
            .read(&mut buf)
            .map_err(|e| TraceError::Gzip(e.to_string()))?;
        if n == 0 {
            return Ok(());
        }
        let left = gz.get_ref().len();
        loader.set_source_bytes(bytes.len().saturating_sub(left) as u64);
        loader.push(buf.get(..n).unwrap_or(&[]))?;
    }
}

/// The CPU samples and their counts.
fn cpu_samples(storage: &Storage, stacks: &mut Stacks<'_>) -> (Vec<Sample>, Counts) {
    let facts = &storage.profile_facts;
    let rows = &storage.profiling;
    let strings = &storage.strings;
    let mut counts = Counts {
        kernel_records_lost: u64::try_from(storage.stats.sum_indexed("perf_cpu_lost_records"))
            .unwrap_or(0),
        packets_without_state: facts.losses.perf_packets_without_state,
        malformed: facts.losses.perf_malformed,
        ..Counts::default()
    };
    for (reason, n) in &facts.losses.perf_skipped {
        *counts.skipped.entry(skip_reason_name(*reason)).or_default() += n;
    }
    for (reason, n) in &facts.losses.perf_producer_events {
        *counts
            .producer_events
            .entry(stop_reason_name(*reason))
            .or_default() += n;
    }
    let mut samples = Vec::with_capacity(facts.perf_samples.len());
    for f in &facts.perf_samples {
        let Some(row) = rows.samples.get(f.row as usize) else {
            continue;
        };
        let task = row
            .task_context_id
            .and_then(|t| rows.task_contexts.get(t as usize));
        let pid = task
            .and_then(|t| t.upid)
            .and_then(|u| storage.processes.get(u as usize))
            .map_or(0, |p| p.pid);
        let tid = task
            .and_then(|t| t.utid)
            .and_then(|u| storage.threads.get(u as usize))
            .map_or(0, |t| t.tid);
        let cpu_mode = row
            .execution_context_id
            .and_then(|e| rows.execution_contexts.get(e as usize))
            .and_then(|e| strings.get(e.cpu_mode))
            .map_or(0, cpu_mode_number);
        let unwind_error = strings.get(row.unwind_error).and_then(unwind_error_number);
        let stack = row.callsite_id.map(|c| stacks.stack(c)).unwrap_or_default();
        counts.samples += 1;
        if f.callstack_iid.is_none() {
            counts.without_callstack += 1;
        }
        if let Some(u) = &f.unresolved {
            counts.unresolved += 1;
            *counts.unresolved_by_kind.entry(u.kind()).or_default() += 1;
        }
        if let Some(e) = unwind_error {
            *counts
                .unwind_errors
                .entry(unwind_error_name(e))
                .or_default() += 1;
        }
        samples.push(Sample {
            ts: u64::try_from(row.ts).unwrap_or(0),
            sequence: f.sequence,
            packet: f.packet,
            cpu: f.cpu,
            pid: u32::try_from(pid).unwrap_or(0),
            tid: u32::try_from(tid).unwrap_or(0),
            cpu_mode,
            timebase_count: f.timebase_count,
            stack,
            unwind_error,
            unresolved: f.unresolved,
            weight: 1,
        });
    }
    aggregate_samples(storage, stacks, &mut samples, &mut counts);
    (samples, counts)
}

/// The sample type an aggregated profile's samples are weighed by: the
/// one counting samples (`samples`/`count`, what a CPU profile such as
/// Go's has beside its CPU time), else the first counting anything
/// (unit `count`), else the first; as (type, unit).
fn weighing_type(storage: &Storage) -> Option<(&str, &str)> {
    let strings = &storage.strings;
    let types: Vec<(&str, &str)> = storage
        .profiling
        .aggregate_profiles
        .iter()
        .map(|r| {
            (
                strings.get(r.sample_type_type).unwrap_or(""),
                strings.get(r.sample_type_unit).unwrap_or(""),
            )
        })
        .collect();
    types
        .iter()
        .find(|t| **t == ("samples", "count"))
        .or_else(|| types.iter().find(|t| t.1 == "count"))
        .or_else(|| types.first())
        .copied()
}

/// The samples of aggregated profiles (pprof inputs,
/// `__intrinsic_aggregate_sample`) of the weighing sample type, each a
/// sample of its value's weight at time 0 on no thread; values below 1
/// (nothing to weigh) are left out.
fn aggregate_samples(
    storage: &Storage,
    stacks: &mut Stacks<'_>,
    samples: &mut Vec<Sample>,
    counts: &mut Counts,
) {
    let Some(chosen) = weighing_type(storage) else {
        return;
    };
    let rows = &storage.profiling;
    let strings = &storage.strings;
    let weighed: Vec<bool> = rows
        .aggregate_profiles
        .iter()
        .map(|r| {
            (
                strings.get(r.sample_type_type).unwrap_or(""),
                strings.get(r.sample_type_unit).unwrap_or(""),
            ) == chosen
        })
        .collect();
    for row in &rows.aggregate_samples {
        if !weighed
            .get(row.aggregate_profile_id as usize)
            .copied()
            .unwrap_or(false)
        {
            continue;
        }
        // Saturating: NaN and negatives to 0, beyond u64 to its max.
        let weight = row.value as u64;
        if weight == 0 {
            continue;
        }
        counts.samples += 1;
        samples.push(Sample {
            ts: 0,
            sequence: 0,
            packet: 0,
            cpu: None,
            pid: 0,
            tid: 0,
            cpu_mode: 0,
            timebase_count: None,
            stack: stacks.stack(row.callsite_id),
            unwind_error: None,
            unresolved: None,
            weight,
        });
    }
}

/// One heap sample with its stack.
fn heap_sample(s: &HeapSampleFacts, stacks: &mut Stacks<'_>) -> HeapSample {
    HeapSample {
        stack: s.callsite.map(|c| stacks.stack(c)).unwrap_or_default(),
        callstack_iid: s.callstack_iid,
        unresolved: s.unresolved,
        allocated: s.allocated,
        freed: s.freed,
        alloc_count: s.alloc_count,
        free_count: s.free_count,
        self_max: s.self_max,
        packet: s.packet,
    }
}

/// The heap dumps and their counts.
fn heap_dumps(storage: &Storage, stacks: &mut Stacks<'_>) -> (Vec<HeapDump>, HeapCounts) {
    let facts = &storage.profile_facts;
    let mut counts = HeapCounts {
        missing_packets: facts.losses.heap_missing_packets,
        legacy_packets: facts.losses.heap_legacy_packets,
        packets_without_state: facts.losses.heap_packets_without_state,
        malformed: facts.losses.heap_malformed,
        unresolved_by_kind: BTreeMap::new(),
        ..HeapCounts::default()
    };
    let mut dumps = Vec::with_capacity(facts.heap_dumps.len());
    for d in &facts.heap_dumps {
        let samples: Vec<HeapSample> = d.samples.iter().map(|s| heap_sample(s, stacks)).collect();
        counts.dumps += 1;
        counts.samples += samples.len() as u64;
        for u in samples.iter().filter_map(|s| s.unresolved) {
            counts.unresolved += 1;
            *counts.unresolved_by_kind.entry(u.kind()).or_default() += 1;
        }
        if d.flags.rejected_concurrent {
            counts.rejected += 1;
        }
        if d.unfinished {
            counts.unfinished += 1;
        }
        dumps.push(HeapDump {
            ts: u64::try_from(d.ts).unwrap_or(0),
            sequence: d.sequence,
            pid: d.pid,
            heap_name: d.heap_name.clone(),
            sampling_interval_bytes: d.sampling_interval_bytes,
            orig_sampling_interval_bytes: d.orig_sampling_interval_bytes,
            flags: d.flags,
            stats: d.stats.clone(),
            samples,
            unfinished: d.unfinished,
        });
    }
    (dumps, counts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_map_back_to_numbers() {
        assert_eq!(cpu_mode_number("user"), 2);
        assert_eq!(cpu_mode_number("???"), 0);
        assert_eq!(unwind_error_number("none"), None);
        assert_eq!(unwind_error_number("memory_invalid"), Some(2));
        assert_eq!(unhex("00ab7F"), [0x00, 0xab, 0x7f]);
        assert!(unhex("abc").is_empty() && unhex("zz").is_empty());
        assert_eq!(stop_reason_name(1), "PROFILER_STOP_GUARDRAIL");
    }

    #[test]
    fn an_empty_trace_has_an_empty_profile() {
        let p = Profile::from_trace(&[]).unwrap();
        assert!(p.samples().is_empty() && p.heap_dumps().is_empty());
        assert_eq!(p.counts(), &Counts::default());
        assert_eq!(p.cpu_ns_per_sample(), None);
    }
}

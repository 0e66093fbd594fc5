//! The sample reader: a trace's packets in, CPU samples out. It does no
//! I/O: the caller feeds it packets one at a time in trace order
//! ([`SampleReader::push_packet`]) and gets back the sample each held, its
//! callstack resolved against the packet's sequence as it stood at that
//! packet; [`SampleReader::finish`] hands over the [`Profile`]: every
//! sample, the trace-wide frames and mappings, the counts of what was lost
//! or did not resolve, and the sequences' timebases.
//!
//! Packets without `callstack_iid` that say `kernel_records_lost` or
//! `sample_skipped_reason` report losses: they are counted, not samples.
//! `module_symbols` packets, wherever they are, name frames when a
//! profile's frames are named (so at the end, symbols appended after the
//! samples apply to them all).

use std::collections::{BTreeMap, HashMap};

use protozero::Decoder;
use zerotrace_protos::protos::TracePacketDecoder;
use zerotrace_protos::protos::{PerfSampleDecoder, PerfSampleDefaultsDecoder};
use zerotrace_protos::upstream_tables::{packet_defaults_field, packet_field};

use super::heap::{HeapCounts, HeapDump, HeapReader};
use super::interning::Sequence;
use super::sample::{Counts, Sample, Timebase, skip_reason_name, unwind_error_name};
use super::symbols::{SymbolLine, module_symbols_of};
use super::tables::{Frame, Mapping, Tables};

/// `TracePacket.sequence_flags`: the sequence's incremental state was cleared.
const SEQ_INCREMENTAL_STATE_CLEARED: u32 = 1;
/// `TracePacket.sequence_flags`: the packet needs the incremental state.
const SEQ_NEEDS_INCREMENTAL_STATE: u32 = 2;
/// `Profiling.StackUnwindError.UNWIND_ERROR_NONE`: unwinding succeeded.
const UNWIND_ERROR_NONE: i32 = 1;

/// Reads CPU samples out of packets (see the module's documentation).
#[derive(Debug, Default)]
pub struct SampleReader {
    seqs: HashMap<u32, Sequence>,
    tables: Tables,
    samples: Vec<Sample>,
    counts: Counts,
    timebases: BTreeMap<u32, Timebase>,
    heap: HeapReader,
    /// Packets pushed so far.
    pushed: u64,
}

/// Every sample and heap dump of a trace, and what they refer to.
#[derive(Debug)]
pub struct Profile {
    samples: Vec<Sample>,
    tables: Tables,
    counts: Counts,
    timebases: BTreeMap<u32, Timebase>,
    heap_dumps: Vec<HeapDump>,
    heap_counts: HeapCounts,
}

/// The value of the last occurrence of field `id` in `msg`, as bytes.
fn bytes_of(msg: &[u8], id: u32) -> Option<&[u8]> {
    Decoder::new(msg).find_last(id)?.as_bytes().ok()
}

impl SampleReader {
    /// A reader that has seen nothing.
    pub fn new() -> SampleReader {
        SampleReader::default()
    }

    /// Takes in `module_symbols` from `packet`, if it has some, and nothing
    /// else: a viewer that names frames as it goes can preload the symbols
    /// a trace carries at its end before pushing its packets.
    pub fn preload_symbols(&mut self, packet: &[u8]) {
        if let Some(m) = module_symbols_of(packet, packet_field::MODULE_SYMBOLS) {
            self.counts.malformed += self.tables.symbols.add(m);
        }
    }

    /// Takes in one encoded `TracePacket`; returns the CPU sample it held,
    /// if it held one. A heap dump's packets are collected until the
    /// packet that closes the dump (see `profile/heap.rs`).
    pub fn push_packet(&mut self, packet: &[u8]) -> Option<&Sample> {
        let number = self.pushed;
        self.pushed += 1;
        self.preload_symbols(packet);
        let p = TracePacketDecoder::new(packet);
        let seq_id = p.trusted_packet_sequence_id().unwrap_or(0);
        let flags = p.sequence_flags().unwrap_or(0);
        let seen = self.seqs.contains_key(&seq_id);
        let seq = self.seqs.entry(seq_id).or_default();
        if flags & SEQ_INCREMENTAL_STATE_CLEARED != 0 || p.incremental_state_cleared() == Some(true)
        {
            // A dump still open refers to what the clear forgets.
            if self.heap.is_open(seq_id) {
                self.heap.close(seq_id, seq, &mut self.tables, true);
            }
            seq.clear();
            seq.valid = true;
            self.timebases.remove(&seq_id);
        } else if seen
            && p.first_packet_on_sequence() != Some(true)
            && p.previous_packet_dropped().is_some_and(|v| v != 0)
        {
            seq.valid = false;
        }
        if flags & SEQ_NEEDS_INCREMENTAL_STATE != 0 && !seq.valid {
            // Counted when it is linux.perf's (other data sources' packets
            // are not this reader's to report).
            if bytes_of(packet, packet_field::PERF_SAMPLE).is_some() {
                self.counts.packets_without_state += 1;
            }
            if p.profile_packet_bytes().is_some() {
                self.heap.counts.packets_without_state += 1;
            }
            return None;
        }
        if let Some(t) = p
            .trace_packet_defaults_bytes()
            .and_then(|d| bytes_of(d, packet_defaults_field::PERF_SAMPLE_DEFAULTS))
            .and_then(|d| PerfSampleDefaultsDecoder::new(d).timebase())
        {
            self.timebases.insert(
                seq_id,
                Timebase {
                    counter: t.counter_raw(),
                    period: t.period(),
                    frequency: t.frequency(),
                },
            );
        }
        if let Some(i) = p.interned_data_bytes() {
            self.counts.malformed += seq.intern(i);
        }
        if let Some(pp) = p.profile_packet_bytes() {
            let ts = p.timestamp().unwrap_or(0);
            if self.heap.push(seq_id, number, ts, pp) {
                self.heap.close(seq_id, seq, &mut self.tables, false);
            }
        }
        let raw = bytes_of(packet, packet_field::PERF_SAMPLE)?;
        let s = PerfSampleDecoder::new(raw);
        if s.decode_error().is_some() {
            self.counts.malformed += 1;
            return None;
        }
        if let Some(e) = s.producer_event() {
            let reason = e.source_stop_reason_raw().unwrap_or(0);
            let name = match reason {
                1 => "PROFILER_STOP_GUARDRAIL".to_owned(),
                0 => "PROFILER_STOP_UNKNOWN".to_owned(),
                n => format!("DataSourceStopReason({n})"),
            };
            *self.counts.producer_events.entry(name).or_default() += 1;
        }
        let Some(callstack) = s.callstack_iid() else {
            let mut loss = false;
            if let Some(n) = s.kernel_records_lost() {
                self.counts.kernel_records_lost = self.counts.kernel_records_lost.saturating_add(n);
                loss = true;
            }
            if let Some(r) = s.sample_skipped_reason_raw() {
                *self.counts.skipped.entry(skip_reason_name(r)).or_default() += 1;
                loss = true;
            }
            if loss || s.has_producer_event() {
                return None;
            }
            // A sample the recorder took without a callstack.
            return Some(self.add(&p, seq_id, &s, Vec::new(), None));
        };
        let (stack, unresolved) = match seq.resolve(callstack, &mut self.tables) {
            Ok(frames) => (frames.to_vec(), None),
            Err(u) => {
                self.counts.unresolved += 1;
                *self.counts.unresolved_by_kind.entry(u.kind()).or_default() += 1;
                (Vec::new(), Some(u))
            }
        };
        Some(self.add(&p, seq_id, &s, stack, unresolved))
    }

    /// Records a sample and counts it.
    fn add(
        &mut self,
        p: &TracePacketDecoder<'_>,
        sequence: u32,
        s: &PerfSampleDecoder<'_>,
        stack: Vec<usize>,
        unresolved: Option<super::Unresolved>,
    ) -> &Sample {
        self.counts.samples += 1;
        if s.callstack_iid().is_none() {
            self.counts.without_callstack += 1;
        }
        let unwind_error = s.unwind_error_raw().filter(|&e| e != UNWIND_ERROR_NONE);
        if let Some(e) = unwind_error {
            *self
                .counts
                .unwind_errors
                .entry(unwind_error_name(e))
                .or_default() += 1;
        }
        let i = self.samples.len();
        self.samples.push(Sample {
            ts: p.timestamp().unwrap_or(0),
            sequence,
            cpu: s.cpu(),
            pid: s.pid().unwrap_or(0),
            tid: s.tid().unwrap_or(0),
            cpu_mode: s.cpu_mode_raw().unwrap_or(0),
            timebase_count: s.timebase_count(),
            stack,
            unwind_error,
            unresolved,
        });
        &self.samples[i]
    }

    /// The names along a sample's stack, root first (inlined functions
    /// expanded), with the symbols known so far.
    pub fn stack_names(&self, sample: &Sample) -> Vec<String> {
        self.tables.stack_names(&sample.stack)
    }

    /// The profile of every packet pushed; heap dumps still open are
    /// closed as they stand (and counted as unfinished).
    pub fn finish(mut self) -> Profile {
        for seq_id in self.heap.open_sequences() {
            let seq = self.seqs.entry(seq_id).or_default();
            self.heap.close(seq_id, seq, &mut self.tables, true);
        }
        Profile {
            samples: self.samples,
            tables: self.tables,
            counts: self.counts,
            timebases: self.timebases,
            heap_dumps: self.heap.dumps,
            heap_counts: self.heap.counts,
        }
    }
}

impl Profile {
    /// Every sample, in trace order.
    pub fn samples(&self) -> &[Sample] {
        &self.samples
    }

    /// What the trace lost or could not resolve.
    pub fn counts(&self) -> &Counts {
        &self.counts
    }

    /// Every heap dump (one per process and heap and dump), in the order
    /// they closed.
    pub fn heap_dumps(&self) -> &[HeapDump] {
        &self.heap_dumps
    }

    /// What the heap dumps add up to, losses included.
    pub fn heap_counts(&self) -> &HeapCounts {
        &self.heap_counts
    }

    /// The last dump of each process and heap (the latest timestamp, the
    /// later one in the trace on a tie), processes that were not profiled
    /// (`rejected_concurrent`) left out, optionally only of process
    /// `pid`; sorted by pid and heap name. Totals are cumulative, so these
    /// hold the whole profile.
    pub fn last_heap_dumps(&self, pid: Option<u64>) -> Vec<&HeapDump> {
        let mut last: BTreeMap<(u64, &str), &HeapDump> = BTreeMap::new();
        for d in &self.heap_dumps {
            if d.flags.rejected_concurrent || pid.is_some_and(|p| p != d.pid) {
                continue;
            }
            let slot = last.entry((d.pid, d.heap_name.as_str())).or_insert(d);
            if d.ts >= slot.ts {
                *slot = d;
            }
        }
        last.into_values().collect()
    }

    /// The names along `stack` (frame indices, root first), root first,
    /// inlined functions expanded: a heap sample's stack, say.
    pub fn names_of(&self, stack: &[usize]) -> Vec<String> {
        self.tables.stack_names(stack)
    }

    /// Every frame, by the index samples' stacks use.
    pub fn frames(&self) -> &[Frame] {
        self.tables.frames()
    }

    /// Every mapping, by the index frames use.
    pub fn mappings(&self) -> &[Mapping] {
        self.tables.mappings()
    }

    /// The functions at frame `index`, innermost first (several where
    /// functions were inlined), each with its source file and line when
    /// `ModuleSymbols` gave them.
    pub fn functions(&self, index: usize) -> Vec<SymbolLine> {
        if let Some(lines) = self
            .tables
            .frames()
            .get(index)
            .and_then(|f| self.tables.symbol_lines(f))
        {
            return lines.to_vec();
        }
        self.tables
            .function_names(index)
            .into_iter()
            .map(|function_name| SymbolLine {
                function_name,
                source_file: None,
                line: 0,
            })
            .collect()
    }

    /// The names along `sample`'s stack, root first, inlined functions
    /// expanded (the caller before the function inlined into it).
    pub fn stack_names(&self, sample: &Sample) -> Vec<String> {
        self.tables.stack_names(&sample.stack)
    }

    /// Nanoseconds of CPU time each sample stands for, when every sequence
    /// that declared a timebase declared the same `SW_CPU_CLOCK` period.
    pub fn cpu_ns_per_sample(&self) -> Option<u64> {
        let mut periods = self.timebases.values().map(Timebase::cpu_ns_per_sample);
        let first = periods.next()??;
        periods.all(|p| p == Some(first)).then_some(first)
    }
}

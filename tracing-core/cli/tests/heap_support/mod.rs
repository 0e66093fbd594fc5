//! Synthetic heap profiles (`android.heapprofd`): written by zerotrace's
//! own dump writer (`zerotrace_heap_profile::DumpWriter`, heapprofd's
//! layout: fixed internings, `ProfilePacket`s with `process_dumps` and
//! samples, the new callstacks defined after them, a closing packet), and
//! by hand ([`HeapSeq::split_dump`]) where a test wants the samples and
//! the definitions spread over more packets than a small dump gets.
//! Shared by the cli's unit tests of the heap reader and its integration
//! tests; frames live in `/bin/app` (build id 01020304), named.

#![allow(dead_code)]

use zerotrace_heap_profile::{DumpSample, DumpWriter, ProcessHeader};
use zerotrace_profiling::PacketSink;
use zerotrace_profiling::intern::{FrameDesc, Interner, MappingDesc};
use zerotrace_protos::protos::TracePacket;

use super::perf_support::Trace;

/// A frame of `/bin/app` named `name` at `rel_pc`.
pub fn hf(name: &str, rel_pc: u64) -> FrameDesc {
    FrameDesc {
        mapping: MappingDesc {
            build_id: vec![1, 2, 3, 4],
            path: "/bin/app".to_owned(),
            start: 0x1000,
            end: 0x10_0000,
            ..MappingDesc::default()
        },
        rel_pc,
        function: Some(name.to_owned()),
    }
}

/// One callstack's line: the stack **root first**, allocated, freed,
/// allocations, frees.
pub type Line<'a> = (&'a [FrameDesc], u64, u64, u64, u64);

/// A header for `pid`'s heap `heap` at `ts`, sampled every `interval` bytes.
pub fn header(pid: u64, heap: &str, ts: u64, interval: u64) -> ProcessHeader {
    ProcessHeader {
        pid,
        timestamp: ts,
        heap_name: heap.to_owned(),
        sampling_interval_bytes: interval,
        orig_sampling_interval_bytes: interval,
        ..ProcessHeader::default()
    }
}

/// Packets to a [`Trace`] on one sequence.
struct Sink<'t> {
    trace: &'t mut Trace,
    seq: u32,
}

impl PacketSink for Sink<'_> {
    fn packet(&mut self, fill: &mut dyn FnMut(&mut TracePacket<'_>)) {
        let seq = self.seq;
        self.trace.packet(|p| {
            p.set_trusted_packet_sequence_id(seq);
            fill(p);
        });
    }
}

/// One heapprofd sequence.
#[derive(Debug)]
pub struct HeapSeq {
    /// `trusted_packet_sequence_id`.
    pub seq: u32,
    writer: DumpWriter,
    interner: Interner,
}

impl HeapSeq {
    /// A sequence that has written nothing.
    pub fn new(seq: u32) -> HeapSeq {
        HeapSeq {
            seq,
            writer: DumpWriter::new(),
            interner: Interner::new(),
        }
    }

    fn samples(&mut self, lines: &[Line<'_>]) -> Vec<DumpSample> {
        lines
            .iter()
            .map(|(stack, allocated, freed, ac, fc)| {
                let leaf_first: Vec<FrameDesc> = stack.iter().rev().cloned().collect();
                DumpSample {
                    callstack_iid: self.interner.callstack(&leaf_first),
                    allocated: *allocated,
                    freed: *freed,
                    alloc_count: *ac,
                    free_count: *fc,
                    at_max: None,
                }
            })
            .collect()
    }

    /// One dump of one process's heap, by zerotrace's heapprofd writer.
    pub fn dump(&mut self, t: &mut Trace, h: &ProcessHeader, lines: &[Line<'_>]) {
        let samples = self.samples(lines);
        let mut sink = Sink {
            trace: t,
            seq: self.seq,
        };
        self.writer
            .dump(&mut sink, h.timestamp, h, &samples, &mut self.interner);
    }

    /// A dump laid out by hand, as heapprofd lays out a large one: the
    /// samples `per_packet` to a `continued` packet (each repeating the
    /// header), the definitions after them in the last of those and in
    /// packets of their own, about `defs_budget` bytes each, then the
    /// closing packet. Indices count from `first_index`; returns the next.
    pub fn split_dump(
        &mut self,
        t: &mut Trace,
        h: &ProcessHeader,
        lines: &[Line<'_>],
        per_packet: usize,
        defs_budget: usize,
        first_index: u64,
    ) -> u64 {
        let samples = self.samples(lines);
        let seq = self.seq;
        let mut index = first_index;
        self.start(t);
        let chunks: Vec<&[DumpSample]> = samples.chunks(per_packet.max(1)).collect();
        let mut more = false;
        for (i, chunk) in chunks.iter().enumerate() {
            let last = i + 1 == chunks.len();
            let interner = &mut self.interner;
            t.packet(|p| {
                p.set_trusted_packet_sequence_id(seq)
                    .set_timestamp(h.timestamp);
                {
                    let mut pp = p.begin_profile_packet();
                    {
                        let mut d = pp.add_process_dumps();
                        d.set_pid(h.pid)
                            .set_timestamp(h.timestamp)
                            .set_heap_name(&h.heap_name)
                            .set_sampling_interval_bytes(h.sampling_interval_bytes);
                        for s in *chunk {
                            d.add_samples()
                                .set_callstack_id(s.callstack_iid)
                                .set_self_allocated(s.allocated)
                                .set_self_freed(s.freed)
                                .set_alloc_count(s.alloc_count)
                                .set_free_count(s.free_count);
                        }
                    }
                    pp.set_continued(true).set_index(index);
                }
                if last {
                    let mut d = p.begin_interned_data();
                    more = interner.write_new_bounded(d.message(), defs_budget);
                }
            });
            index += 1;
        }
        while more {
            let interner = &mut self.interner;
            t.packet(|p| {
                p.set_trusted_packet_sequence_id(seq)
                    .set_timestamp(h.timestamp);
                let mut d = p.begin_interned_data();
                more = interner.write_new_bounded(d.message(), defs_budget);
            });
        }
        t.packet(|p| {
            p.set_trusted_packet_sequence_id(seq)
                .set_timestamp(h.timestamp);
            p.begin_profile_packet().set_index(index);
        });
        index + 1
    }

    /// Writes the sequence's first packet (incremental state cleared, the
    /// fixed internings) unless it is out already.
    pub fn start(&mut self, t: &mut Trace) {
        let mut sink = Sink {
            trace: t,
            seq: self.seq,
        };
        self.writer.start(&mut sink, 0);
    }
}

//! The sans-IO loading core: `push` bytes of a `Trace` in chunks split
//! anywhere, `finish`, and get the tables. Inside: the stream splitter, the
//! per-sequence state (incremental state, interning, defaults, losses),
//! clock conversion, `compressed_packets` expansion with bounds, then the
//! sort window across sequences and the parsers behind it.
//!
//! Sorting: packets wait in the sort window (`sorter.rs`, upstream's
//! merge of per-stream queues: equal timestamps on two streams come in
//! the order its draining gives) and leave it, to be parsed while the
//! trace is still read, when the tracing service's flush and read events
//! say that nothing earlier can follow, as upstream's sorter lets them;
//! the rest leave at `finish`. A packet's bytes and side-table entries go
//! back as it is parsed. Packets whose clock cannot be converted yet are
//! held to `finish` and converted then (the window then sorts the whole
//! trace), as upstream defers them to the end of the trace.
//!
//! A packet's time (clock snapshots, conversion to the trace's clock, its
//! place in the sort's queue) is `packet_time.rs`.
//!
//! Hostile input: the bytes taken in (pushed, and inflated from
//! `compressed_packets`) are held to the load's budget (`budget.rs`) as
//! they arrive, and the packets read are counted into the load's work
//! (`Storage::work`), which the trackers' steps join in the parsers.

mod android_log_queue;
pub mod archive;
pub mod art_method;
pub mod budget;
pub mod collapsed_stack;
mod dispatch;
mod dummy_frames;
pub mod dumpstate;
mod etw_queue;
pub mod format;
pub mod ftrace_bundle;
mod ftrace_queue;
#[cfg(test)]
mod ftrace_walks_once;
pub mod fuchsia;
pub mod gecko;
pub mod inflate;
pub mod instruments;
pub mod json;
mod machines;
mod packet_time;
pub mod perf_text;
pub mod pprof;
pub mod remote_clock;
pub mod simpleperf;
#[cfg(test)]
mod sort_window_tests;
pub mod sorter;
mod state_packets;
pub mod strace;
pub mod streaming_profile;
pub mod systrace;
mod text_lines;
pub mod tokenizer;
pub mod trace_identity;
pub mod track_event_times;
#[cfg(test)]
mod walks_once;

use crate::hash::HashMap;

use protozero::Decoder;
use zerotrace_protos::protos::{TraceAttributesDecoder, TracePacket, TraceStatsDecoder};

use crate::arena::PacketArena;
use crate::clock::MachineClocks;
use crate::error::TraceError;
use crate::packet_fields::{self, PacketFields, Payload};
use crate::packet_view::{NO_EXTRA, Packet, PacketKind, PacketSource, SideTables, TrackEventTimes};
use crate::parser::Parser;
use crate::sequence_state::{Generation, SequenceState};
use crate::storage::Storage;
use budget::LoadBudget;
use dispatch::Content;
use sorter::{Leaving, Sorter, Stream, WindowStats};
use tokenizer::TraceTokenizer;

/// Deepest nesting of `compressed_packets` inside `compressed_packets`.
pub const MAX_COMPRESSION_DEPTH: u32 = 2;

/// `TracePacket.perf_sample` (not in the generated `TracePacket`).
const PERF_SAMPLE: u32 = 66;
/// `InternedData` fields of the stack profiles: function names, frames,
/// callstacks, build ids, mapping paths, mappings.
const STACK_PROFILE_INTERNED: [u32; 6] = [5, 6, 7, 16, 17, 19];

/// `TracePacket.sequence_flags` bits.
const SEQ_INCREMENTAL_STATE_CLEARED: u32 = 1;
const SEQ_NEEDS_INCREMENTAL_STATE: u32 = 2;

/// A packet whose clock could not be converted when it was read.
#[derive(Debug)]
struct Deferred {
    clock: u64,
    ns: i64,
    /// Its stream and arrival in the sort window.
    stream: Stream,
    arrival: u64,
    packet: Packet,
}

/// The loading core: bytes in, [`Storage`] out.
pub struct Loader {
    /// The trace's format, once told.
    content: Content,
    tokenizer: TraceTokenizer,
    sequences: HashMap<u32, SequenceState>,
    generations: Vec<Generation>,
    /// The parsers behind the window; they own the storage, the clocks
    /// and the track descriptors the loader fills while reading.
    parser: Parser,
    /// The packets waiting to be parsed.
    sorter: Sorter,
    arena: PacketArena,
    /// What waiting packets carry beside their bytes.
    side: SideTables,
    /// The fields of the TrackEvent being read that its tokenizing left
    /// for the parser (reused from one event to the next).
    track_event_rest: Vec<u8>,
    deferred: Vec<Deferred>,
    latest_ts: i64,
    /// The last service event saying tracing started, in stream order:
    /// its arrival and time (None while held for its clock).
    tracing_started: Option<(u64, Option<i64>)>,
    /// sequence id → buffer, from TraceStats.writer_stats (read at finish).
    writer_buffers: Vec<(u32, u32)>,
    bytes_pushed: u64,
    /// Trace packets read so far (`compressed_packets` expanded).
    packet_index: u64,
    identity: trace_identity::TraceIdentity,
    /// Raw machine ids by machine index (0: the host, raw id 0).
    machines: Vec<i64>,
    /// Machine index by raw machine id.
    machine_ids: HashMap<i64, u32>,
    /// The machine of the packet being read.
    machine: u32,
    /// The last ftrace clock value snapshotted from a bundle.
    ftrace_clock_ts: Option<i64>,
    /// CPUs whose first ftrace bundle was read.
    ftrace_cpus_seen: crate::hash::HashSet<u32>,
    /// How much the load may take in.
    budget: LoadBudget,
    /// Bytes `compressed_packets` inflated to so far.
    inflated: u64,
    /// Bytes of the top-level packets read so far, with their framing.
    top_level_bytes: u64,
    /// Bytes of the source the pushed bytes came from (a gzip file's
    /// compressed bytes read so far), when the driver says.
    source_bytes: Option<u64>,
    /// Why the load stopped, once it went over its budget.
    failed: Option<TraceError>,
    /// The archive member being read, when the trace is an archive.
    archive: archive::ArchiveState,
}

impl std::fmt::Debug for Loader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Loader")
            .field("bytes_pushed", &self.bytes_pushed)
            .field("packet_index", &self.packet_index)
            .field("window", &self.sorter.stats())
            .field("failed", &self.failed)
            .finish_non_exhaustive()
    }
}

impl Default for Loader {
    fn default() -> Self {
        let mut storage = Storage::default();
        // The host; other machines join as their packets are read.
        storage.machines = vec![crate::storage::rows::MachineRow::default()];
        Loader {
            content: Content::Sniffing(Vec::new()),
            tokenizer: TraceTokenizer::default(),
            sequences: HashMap::default(),
            // Generation 0: packets without a sequence.
            generations: vec![Generation::default()],
            parser: Parser::new(storage),
            sorter: Sorter::default(),
            arena: PacketArena::default(),
            side: SideTables::default(),
            track_event_rest: Vec::new(),
            deferred: Vec::new(),
            latest_ts: 0,
            tracing_started: None,
            writer_buffers: Vec::new(),
            bytes_pushed: 0,
            packet_index: 0,
            identity: trace_identity::TraceIdentity::default(),
            machines: vec![0],
            machine_ids: HashMap::default(),
            machine: 0,
            ftrace_clock_ts: None,
            ftrace_cpus_seen: Default::default(),
            budget: LoadBudget::default(),
            inflated: 0,
            top_level_bytes: 0,
            source_bytes: None,
            failed: None,
            archive: archive::ArchiveState::default(),
        }
    }
}

impl Loader {
    /// A loader for a new trace.
    pub fn new() -> Self {
        Self::default()
    }

    /// A loader that also gathers what the profile views print beyond the
    /// tables (`storage/profile_facts.rs`, read by
    /// [`crate::profile_view::Profile::from_storage`]).
    pub fn with_profile_facts() -> Self {
        let mut l = Self::default();
        l.parser.storage.profile_facts.gathered = true;
        l
    }

    /// Holds this load to `budget` rather than the default one.
    pub fn with_budget(budget: LoadBudget) -> Self {
        Loader {
            budget,
            ..Self::default()
        }
    }

    /// Says how many bytes of its source the bytes pushed so far came
    /// from, when they were decompressed from it (a gzip file's bytes read
    /// so far): the budget's inflation ratio is then checked against them.
    pub fn set_source_bytes(&mut self, compressed: u64) {
        self.source_bytes = Some(compressed);
    }

    /// The sort window's counts so far: packets waiting now, the most
    /// that waited at once, those parsed before the end.
    pub fn window_stats(&self) -> WindowStats {
        WindowStats {
            arena_high_water_bytes: self.arena.high_water_bytes() as u64,
            ..self.sorter.stats()
        }
    }

    /// Memory the loader holds beyond the bytes pushed: what
    /// `compressed_packets` inflated to and its record of each packet
    /// waiting to be parsed.
    fn grown(&self) -> u64 {
        let waiting = self
            .sorter
            .stats()
            .held
            .saturating_add(self.deferred.len() as u64);
        let records = waiting
            .saturating_mul(std::mem::size_of::<Packet>() as u64)
            .saturating_add(
                (self.side.track_event_times.len() as u64)
                    .saturating_mul(std::mem::size_of::<TrackEventTimes>() as u64),
            );
        self.inflated.saturating_add(records)
    }

    /// The memory counted so far within the budget, or why not.
    fn check_budget(&self) -> Result<(), TraceError> {
        let grown = self.grown();
        let taken = self.bytes_pushed.saturating_add(grown);
        self.budget.check_bytes(taken)?;
        match self.source_bytes {
            Some(source) => self.budget.check_ratio(taken, source),
            None => self.budget.check_ratio(grown, self.top_level_bytes),
        }
    }

    /// Feeds the protobuf loading core.
    fn push_proto(&mut self, data: &[u8]) -> Result<(), TraceError> {
        self.bytes_pushed += data.len() as u64;
        self.parser.storage.work.take(data.len() as u64);
        if let Err(e) = self.check_budget() {
            self.failed = Some(e.clone());
            return Err(e);
        }
        self.identity.on_bytes(data);
        // The tokenizer hands out slices of `data` (or of its buffer for a
        // packet split across pushes), read in place.
        let mut tokenizer = std::mem::take(&mut self.tokenizer);
        let res = tokenizer.push(data, &mut |p| self.on_packet(p, 0));
        self.tokenizer = tokenizer;
        res?;
        if self.failed.is_none() {
            if let Err(e) = self.check_budget() {
                self.failed = Some(e);
            }
        }
        match &self.failed {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }

    /// Ends the trace: converts held packets, sorts, parses.
    pub fn finish(mut self) -> Result<Storage, TraceError> {
        if let Some(e) = self.failed.take() {
            return Err(e);
        }
        if matches!(self.content, Content::Sniffing(_)) {
            self.told()?;
        }
        if self.finish_archive()? {
            self.told()?;
        }
        self.root_trace_file();
        if let Some(res) = self.finish_text() {
            res?;
            self.identity
                .write(&mut self.parser.storage, self.parser.clocks.trace_clock());
            let Loader {
                parser,
                generations,
                ..
            } = self;
            return Ok(parser.finish(&generations));
        }
        if self.tokenizer.pending_len() > 0 {
            // A truncated last packet: what came before it still loads.
            self.parser.storage.stats.incr("tokenizer_skipped_packets");
            let pending = self.tokenizer.pending_len();
            let offset = self.bytes_pushed.saturating_sub(pending as u64);
            (self.parser.storage.warnings).push(crate::LoadWarning::truncated(
                offset,
                pending,
                self.packet_index,
            ));
        }
        if self.archive.active {
            let held: Vec<(u64, i64)> = self.deferred.iter().map(|d| (d.clock, d.ns)).collect();
            archive::clocks::place_deferred(&mut self, &held);
        }
        let deferred = std::mem::take(&mut self.deferred);
        for mut d in deferred {
            match self.parser.clocks.trace_time(d.clock, d.ns) {
                Ok(ts) => {
                    d.packet.ts = ts;
                    if self.tracing_started.is_some_and(|(a, _)| a == d.arrival) {
                        self.tracing_started = Some((d.arrival, Some(ts)));
                    }
                    self.sorter.push_arrived(d.stream, d.arrival, d.packet);
                }
                Err(_) => {
                    self.drop_packet(&d.packet);
                    self.parser.storage.stats.incr("clock_sync_failure");
                    self.parser
                        .storage
                        .stats
                        .incr("clock_sync_failure_undeferrable_packet_loss");
                }
            }
        }
        self.sequence_stats();
        self.identity
            .write(&mut self.parser.storage, self.parser.clocks.trace_clock());
        self.parse_leaving(true);
        let Loader {
            parser,
            generations,
            ..
        } = self;
        Ok(parser.finish(&generations))
    }

    /// Queues `packet` in the sort window, or holds it to `finish` when
    /// its clock (`pending`: the clock and its time) does not convert yet
    /// (the window then sorts the whole trace); a packet that can no
    /// longer be held, packets having left the window, is lost, as
    /// upstream loses it. Its arrival, unless lost.
    fn enqueue(&mut self, packet: Packet, pending: Option<(u64, i64)>) -> Option<u64> {
        let inline = self.side.inline_sched.get(packet.extra as usize);
        let stream = Stream::of(&packet, inline);
        let Some((clock, ns)) = pending else {
            return Some(self.sorter.push(stream, packet));
        };
        if !self.sorter.set_full_sort() {
            self.drop_packet(&packet);
            self.parser
                .storage
                .stats
                .incr("clock_sync_failure_undeferrable_packet_loss");
            return None;
        }
        let arrival = self.sorter.arrive(stream);
        self.deferred.push(Deferred {
            clock,
            ns,
            stream,
            arrival,
            packet,
        });
        Some(arrival)
    }

    /// A packet that will not be parsed gives its bytes and side-table
    /// entries back.
    fn drop_packet(&mut self, packet: &Packet) {
        self.arena.release(packet.bytes);
        self.side.release(packet);
    }

    /// A service event read: the sort window counts its flushes, and on a
    /// read of the buffers lets the packets go that the rule allows.
    fn on_service_event(&mut self, bytes: &[u8]) {
        let ev = zerotrace_protos::protos::TracingServiceEventDecoder::new(bytes);
        if ev.all_data_sources_flushed() == Some(true) {
            self.sorter.on_flush();
        }
        if ev.read_tracing_buffers_completed() == Some(true) {
            self.parse_leaving(false);
        }
    }

    /// Parses the packets leaving the window (all of them at the end),
    /// giving back their bytes and side-table entries.
    fn parse_leaving(&mut self, at_end: bool) {
        self.parser
            .set_tracing_started(self.tracing_started.and_then(|(_, ts)| ts));
        let mut sorter = std::mem::take(&mut self.sorter);
        let empty = Generation::default();
        let mut sink = |leaving: Leaving| match leaving {
            Leaving::InOrder(packet) => {
                let generation = self
                    .generations
                    .get(packet.generation as usize)
                    .unwrap_or(&empty);
                let source = PacketSource {
                    arena: &self.arena,
                    side: &self.side,
                };
                source.with_view(&packet, |view| {
                    self.parser.parse_packet(view, generation);
                });
                self.arena.release(packet.bytes);
                self.side.release(&packet);
            }
            Leaving::OutOfOrder(packet) => {
                self.parser
                    .storage
                    .stats
                    .incr("sorter_push_event_out_of_order");
                self.arena.release(packet.bytes);
                self.side.release(&packet);
            }
        };
        if at_end {
            sorter.finish(&mut sink);
        } else {
            sorter.on_read_buffers(&mut sink);
        }
        self.sorter = sorter;
    }

    /// Packet loss per buffer, as upstream derives it from the sequences
    /// named in `TraceStats.writer_stats`.
    fn sequence_stats(&mut self) {
        let mut per_buffer: std::collections::BTreeMap<u32, (i64, i64)> = Default::default();
        let mut seen = crate::hash::HashSet::default();
        for &(seq, buf) in &self.writer_buffers {
            if !seen.insert((seq, buf)) {
                continue;
            }
            if let Some(s) = self.sequences.get(&seq) {
                let e = per_buffer.entry(buf).or_default();
                e.0 += i64::from(s.previous_packet_dropped_count);
                if s.needs_incremental_state_skipped > 0
                    && s.needs_incremental_state_skipped == s.needs_incremental_state_total
                {
                    e.1 += 1;
                }
            }
        }
        for (buf, (loss, dropped)) in per_buffer {
            let stats = &mut self.parser.storage.stats;
            stats.set_indexed("traced_buf_sequence_packet_loss", i64::from(buf), loss);
            stats.set_indexed(
                "traced_buf_incremental_sequences_dropped",
                i64::from(buf),
                dropped,
            );
        }
    }

    /// A packet record's `extra` for a plain packet: the index of the
    /// trace packet it came from (see [`crate::packet_view::PacketView::index`]).
    fn packet_extra(&self) -> u32 {
        u32::try_from(self.packet_index.saturating_sub(1)).unwrap_or(NO_EXTRA)
    }

    fn new_generation(&mut self, valid: bool, inherit: Option<u32>) -> u32 {
        let id = u32::try_from(self.generations.len()).unwrap_or(u32::MAX);
        let mut g = Generation {
            valid,
            ..Generation::default()
        };
        if let Some(prev) = inherit.and_then(|i| self.generations.get(i as usize)) {
            g.trusted_pid = prev.trusted_pid;
            g.thread = prev.thread;
        }
        self.generations.push(g);
        id
    }

    fn on_packet(&mut self, bytes: &[u8], depth: u32) {
        if self.failed.is_some() {
            return;
        }
        // What the packets before this one left within the budget.
        if let Err(e) = self.check_budget() {
            self.failed = Some(e);
            return;
        }
        self.parser.storage.work.step(1);
        if depth == 0 {
            // The packet, its length's varint and its tag.
            let len = bytes.len() as u64;
            let varint = u64::from((64 - len.leading_zeros()).max(1).div_ceil(7));
            self.top_level_bytes = self.top_level_bytes.saturating_add(len + varint + 1);
        }
        // The packet's one walk: everything below reads what it found.
        let pkt = PacketFields::walk(bytes, crate::parser::registry::has_importer);
        self.machine = self.machine_index(pkt.machine_id);
        if let Some(compressed) = pkt.payload_of(TracePacket::FIELD_COMPRESSED_PACKETS) {
            let machine = self.machine;
            self.on_compressed(compressed, depth);
            self.machine = machine;
            return;
        }
        self.packet_index += 1;
        if let Some(sync) = pkt.payload_of(TracePacket::FIELD_REMOTE_CLOCK_SYNC) {
            if self.machine != 0 {
                self.on_remote_clock_sync(sync);
            }
            return;
        }
        let seq_id = pkt.trusted_packet_sequence_id;
        let seq = seq_id.unwrap_or(0);
        let inserted = !self.sequences.contains_key(&seq);
        if inserted {
            let g = if seq == 0 {
                0
            } else {
                self.new_generation(false, None)
            };
            self.sequences.insert(
                seq,
                SequenceState {
                    generation: g,
                    ..SequenceState::default()
                },
            );
        }
        let dropped = pkt.previous_packet_dropped;
        if seq_id.is_some() && !inserted && dropped {
            if let Some(s) = self.sequences.get_mut(&seq) {
                s.previous_packet_dropped_count += 1;
            }
        }
        if pkt.first_packet_on_sequence && seq_id.is_some() {
            (self.parser.track_resolution)
                .descriptors_mut()
                .first_packet_sequences
                .insert(seq);
        }
        let flags = pkt.sequence_flags.unwrap_or(0);
        let cleared = pkt.incremental_state_cleared || flags & SEQ_INCREMENTAL_STATE_CLEARED != 0;
        if cleared {
            if seq_id.is_none() {
                self.parser
                    .storage
                    .stats
                    .incr("incremental_state_cleared_missing_sequence_id");
            } else {
                self.clear_incremental_state(seq);
            }
        } else if dropped && seq_id.is_some() {
            // Loss invalidates the state until the next clear.
            let cur = self.sequences.get(&seq).map_or(0, |s| s.generation);
            let g = self.new_generation(false, Some(cur));
            if let Some(s) = self.sequences.get_mut(&seq) {
                s.generation = g;
            }
        }
        let gen_idx = self.sequences.get(&seq).map_or(0, |s| s.generation);
        if let Some(g) = self.generations.get_mut(gen_idx as usize) {
            g.sequence_id = seq;
            if let Some(pid) = pkt.trusted_pid {
                g.trusted_pid = Some(i64::from(pid));
            }
        }
        if let Some(defaults) = pkt.trace_packet_defaults {
            if seq_id.is_none() {
                self.parser
                    .storage
                    .stats
                    .incr("trace_packet_defaults_missing_sequence_id");
            } else if let Some(g) = self.generations.get_mut(gen_idx as usize) {
                g.set_defaults(defaults);
            }
        }
        if let Some(interned) = pkt.interned_data {
            if seq_id.is_none() {
                self.parser
                    .storage
                    .stats
                    .incr("interned_data_missing_sequence_id");
            } else {
                self.add_interned(gen_idx, interned);
            }
        }
        let payload = pkt.payload.unwrap_or(Payload {
            field: 0,
            bytes: &[],
        });
        match payload.field {
            TracePacket::FIELD_CLOCK_SNAPSHOT => {
                self.on_clock_snapshot(payload.bytes, seq);
                return;
            }
            TracePacket::FIELD_TRACE_STATS => {
                for w in TraceStatsDecoder::new(payload.bytes).writer_stats() {
                    let s = u32::try_from(w.sequence_id().unwrap_or(0)).unwrap_or(0);
                    self.writer_buffers.push((s, w.buffer().unwrap_or(0)));
                }
            }
            _ => {}
        }
        if flags & SEQ_NEEDS_INCREMENTAL_STATE != 0 && seq_id.is_some() {
            let valid = self
                .generations
                .get(gen_idx as usize)
                .is_some_and(|g| g.valid);
            if let Some(s) = self.sequences.get_mut(&seq) {
                s.needs_incremental_state_total += 1;
                if !valid {
                    s.needs_incremental_state_skipped += 1;
                }
            }
            if !valid {
                self.parser
                    .storage
                    .stats
                    .incr("packet_skipped_seq_needs_incremental_state_invalid");
                let losses = &mut self.parser.storage.profile_facts.losses;
                if payload.field == PERF_SAMPLE {
                    losses.perf_packets_without_state += 1;
                }
                if payload.field == TracePacket::FIELD_PROFILE_PACKET {
                    losses.heap_packets_without_state += 1;
                }
                return;
            }
        }
        match payload.field {
            TracePacket::FIELD_TRACE_ATTRIBUTES => {
                self.trace_attributes(&TraceAttributesDecoder::new(payload.bytes));
            }
            TracePacket::FIELD_TRACE_UUID => {
                let d = Decoder::new(payload.bytes);
                let field = |n| d.find_last(n).and_then(|f| f.as_u64().ok()).unwrap_or(0) as i64;
                self.identity.on_uuid_packet(field(1), field(2));
            }
            TracePacket::FIELD_TRACE_CONFIG => self.on_trace_config(payload.bytes),
            TracePacket::FIELD_TRACK_DESCRIPTOR => {
                self.on_track_descriptor(payload.bytes, seq, gen_idx);
            }
            TracePacket::FIELD_THREAD_DESCRIPTOR => {
                self.on_thread_descriptor(payload.bytes, seq, gen_idx);
            }
            packet_fields::FTRACE_EVENTS => {
                self.split_ftrace(payload.bytes, gen_idx, seq);
                return;
            }
            packet_fields::STREAMING_PROFILE_PACKET => {
                self.queue_streaming_profile(payload.bytes, seq, gen_idx);
                return;
            }
            packet_fields::ETW_EVENTS => {
                self.split_etw(payload.bytes, gen_idx);
                return;
            }
            packet_fields::TRANSLATION_TABLE => {
                crate::parser::translation_table::on_packet(&mut self.parser, payload.bytes);
                return;
            }
            packet_fields::ANDROID_LOG => {
                self.split_android_log(payload.bytes, gen_idx);
                return;
            }
            crate::parser::winscope::protolog::PROTOLOG_VIEWER_CONFIG => {
                // Read before sorting: it decodes messages written before it.
                crate::parser::winscope::protolog::on_viewer_config(
                    &mut self.parser,
                    payload.bytes,
                );
                return;
            }
            _ => {}
        }
        self.timestamp_and_queue(payload, &pkt, seq, seq_id.is_some(), gen_idx);
        if payload.field == TracePacket::FIELD_SERVICE_EVENT {
            self.on_service_event(payload.bytes);
        }
    }

    /// Queues each sample of a `StreamingProfilePacket` at its own time.
    fn queue_streaming_profile(&mut self, sp: &[u8], seq: u32, gen_idx: u32) {
        let state = self.sequences.entry(seq).or_default();
        let samples = streaming_profile::tokenize(
            sp,
            state,
            MachineClocks::new(&mut self.parser.clocks, self.machine),
            &mut self.parser.storage.stats,
        );
        for s in samples {
            self.latest_ts = self.latest_ts.max(s.ts);
            let Some(bytes) = self.arena.push(&s.bytes) else {
                self.parser.storage.stats.incr("tokenizer_skipped_packets");
                continue;
            };
            let packet = Packet {
                ts: s.ts,
                bytes,
                generation: gen_idx,
                machine: self.machine,
                cpu: 0,
                extra: self.packet_extra(),
                kind: PacketKind::Packet,
                field: packet_fields::STREAMING_PROFILE_PACKET as u16,
            };
            self.enqueue(packet, None);
        }
    }

    fn on_compressed(&mut self, compressed: &[u8], depth: u32) {
        if depth >= MAX_COMPRESSION_DEPTH {
            self.parser.storage.stats.incr("tokenizer_skipped_packets");
            return;
        }
        let taken = self.bytes_pushed.saturating_add(self.grown());
        let left = self.budget.max_memory.saturating_sub(taken);
        let inflated = match inflate::inflate(compressed, left) {
            Ok(b) => b,
            Err(inflate::InflateError::TooLarge) if left < inflate::MAX_INFLATED => {
                self.failed = Some(TraceError::OverBudget {
                    limit: self.budget.max_memory,
                });
                return;
            }
            Err(_) => {
                self.parser.storage.stats.incr("tokenizer_skipped_packets");
                return;
            }
        };
        self.inflated = self.inflated.saturating_add(inflated.len() as u64);
        self.parser.storage.work.take(inflated.len() as u64);
        if let Err(e) = self.check_budget() {
            self.failed = Some(e);
            return;
        }
        let mut inner = TraceTokenizer::default();
        let res = inner.push(&inflated, &mut |p| self.on_packet(p, depth + 1));
        if res.is_err() || inner.pending_len() > 0 {
            self.parser.storage.stats.incr("tokenizer_skipped_packets");
        }
    }
}

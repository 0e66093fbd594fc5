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
mod app_wakelock_queue;
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
mod load_flags;
mod machines;
mod packet_time;
pub(crate) mod parallel;
pub mod perf_text;
mod pixel_modem_queue;
pub mod pprof;
pub mod proto_content;
mod reader;
pub mod remote_clock;
pub mod simpleperf;
#[cfg(test)]
mod sort_window_tests;
pub mod sorter;
mod state_packets;
mod statsd_queue;
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
use crate::error::TraceError;
use crate::packet_fields::{self, Payload};
use crate::packet_view::{NO_EXTRA, Packet, PacketSource, SideTables, TrackEventTimes};
use crate::parser::{Parser, android_power};
use crate::sequence_state::{Generation, SequenceState};
use crate::storage::{Storage, args::ArgValue, import_logs::LogPlace};
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
    /// Where its packet was read (for the log if it is lost).
    offset: Option<i64>,
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
    /// CPUs whose first ftrace bundle was read, by (machine, CPU).
    ftrace_cpus_seen: crate::hash::HashSet<(u32, u32)>,
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
    /// The proto content analysis, when asked for (`proto_content.rs`).
    proto_content: Option<Box<proto_content::ProtoContent>>,
    /// What the parallel pre-stage prepared for the top-level packet read.
    ahead: parallel::Ahead,
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
            proto_content: None,
            ahead: parallel::Ahead::default(),
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
        let res = tokenizer.push_at(data, &mut |p, at| self.on_top_packet(p, at));
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
            (self.parser.storage.warnings).push(crate::load_warning::LoadWarning::truncated(
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
                    let place = LogPlace {
                        ts: None,
                        byte_offset: d.offset,
                    };
                    self.parser.storage.stats.log_at(
                        "clock_sync_failure_undeferrable_packet_loss",
                        place,
                        &[],
                    );
                }
            }
        }
        self.sequence_stats();
        self.parser.storage.take_pending_logs();
        self.identity
            .write(&mut self.parser.storage, self.parser.clocks.trace_clock());
        self.parse_leaving(true);
        if let Some(content) = self.proto_content.take() {
            content.finish(&mut self.parser.storage);
        }
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
                .log_tokenization("clock_sync_failure_undeferrable_packet_loss", &[]);
            return None;
        }
        let arrival = self.sorter.arrive(stream);
        let offset = self.parser.storage.stats.packet_offset;
        self.deferred.push(Deferred {
            clock,
            ns,
            stream,
            arrival,
            packet,
            offset,
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

    /// A packet record's `extra` for a plain packet: the index of the
    /// trace packet it came from (see [`crate::packet_view::PacketView::index`]).
    fn packet_extra(&self) -> u32 {
        u32::try_from(self.packet_index.saturating_sub(1)).unwrap_or(NO_EXTRA)
    }

    fn new_generation(&mut self, valid: bool, inherit: Option<u32>) -> u32 {
        let id = u32::try_from(self.generations.len()).unwrap_or(u32::MAX);
        let mut g = Generation {
            valid,
            file: self.archive.members_started,
            ..Generation::default()
        };
        if let Some(prev) = inherit.and_then(|i| self.generations.get(i as usize)) {
            g.trusted_pid = prev.trusted_pid;
            g.thread = prev.thread;
        }
        self.generations.push(g);
        id
    }

    /// A packet of the stream itself (not inside `compressed_packets`),
    /// whose bytes start at `offset` in it: where the import logs of its
    /// reading say it was. The packets inside `compressed_packets` are
    /// placed at their container.
    fn on_top_packet(&mut self, bytes: &[u8], offset: u64) {
        let stats = &mut self.parser.storage.stats;
        stats.packet_offset = i64::try_from(offset).ok();
        self.on_packet(bytes, 0);
        if self.parser.storage.stats.has_pending_logs() {
            self.parser.storage.take_pending_logs();
        }
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
        let pkt = self.walk_packet(bytes);
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
            // An archive member's packets without a sequence: its own.
            let g = if seq == 0 && self.archive.members_started == 0 {
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
        let dropped = pkt.previous_packet_dropped != 0;
        if seq_id.is_some() && !inserted && dropped {
            if let Some(s) = self.sequences.get_mut(&seq) {
                s.record_loss(pkt.previous_packet_dropped);
            }
        }
        if pkt.first_packet_on_sequence && seq_id.is_some() {
            self.first_packet_on(seq);
        }
        let flags = pkt.sequence_flags.unwrap_or(0);
        let cleared = pkt.incremental_state_cleared || flags & SEQ_INCREMENTAL_STATE_CLEARED != 0;
        if cleared {
            if seq_id.is_none() {
                self.parser
                    .storage
                    .stats
                    .log_tokenization("incremental_state_cleared_missing_sequence_id", &[]);
            } else {
                self.clear_incremental_state(seq);
            }
        } else if dropped && seq_id.is_none() {
            self.parser
                .storage
                .stats
                .log_tokenization("previous_packet_dropped_missing_sequence_id", &[]);
        } else if dropped {
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
                let place = LogPlace::of_field(
                    self.parser.storage.stats.packet_offset,
                    bytes,
                    defaults,
                    depth,
                );
                self.parser.storage.stats.log_at(
                    "trace_packet_defaults_missing_sequence_id",
                    place,
                    &[],
                );
            } else if let Some(g) = self.generations.get_mut(gen_idx as usize) {
                g.set_defaults(defaults);
            }
        }
        if let Some(interned) = pkt.interned_data {
            let place = LogPlace::of_field(
                self.parser.storage.stats.packet_offset,
                bytes,
                interned,
                depth,
            );
            let valid = self
                .generations
                .get(gen_idx as usize)
                .is_some_and(|g| g.valid);
            let stats = &mut self.parser.storage.stats;
            if seq_id.is_none() {
                stats.log_at("interned_data_missing_sequence_id", place, &[]);
            } else if !valid {
                // Entries read before the state is valid could be taken
                // for a later generation's: upstream skips them.
                stats.log_at(
                    "interned_data_skipped_incremental_state_invalid",
                    place,
                    &[("packet_sequence_id", ArgValue::Uint(u64::from(seq)))],
                );
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
                self.parser.storage.stats.log_tokenization(
                    "packet_skipped_seq_needs_incremental_state_invalid",
                    &[("packet_sequence_id", ArgValue::Uint(u64::from(seq)))],
                );
                if let Some(content) = self.proto_content.as_mut() {
                    content.add_packet(bytes, proto_content::Group::SkippedInvalidState);
                }
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
        if let Some(content) = self.proto_content.as_mut() {
            content.add_plain(bytes, payload.field);
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
            crate::parser::android_framework_track_event::EXTENSION_DESCRIPTOR => {
                // Its extensions hold for every event, as upstream reads them.
                self.parser.track_event.add_extensions(payload.bytes);
            }
            f if android_power::DESCRIBED.contains(&f) => {
                android_power::read_descriptors(&mut self.parser, f, payload.bytes, self.machine);
            }
            TracePacket::FIELD_TRACK_DESCRIPTOR => {
                let registered = self.on_track_descriptor(payload.bytes, seq, gen_idx);
                if !registered {
                    return;
                }
            }
            TracePacket::FIELD_THREAD_DESCRIPTOR => {
                if !self.accept_thread_descriptor(seq_id.is_some(), seq, gen_idx) {
                    return;
                }
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
            statsd_queue::STATSD_ATOM => {
                self.split_statsd_atoms(payload.bytes, &pkt, seq, seq_id.is_some(), gen_idx);
                return;
            }
            app_wakelock_queue::APP_WAKELOCK_BUNDLE => {
                self.split_app_wakelocks(payload.bytes, &pkt, seq, seq_id.is_some(), gen_idx);
                return;
            }
            pixel_modem_queue::PIXEL_MODEM_EVENTS => {
                self.split_pixel_modem_events(payload.bytes, &pkt, seq, gen_idx);
                return;
            }
            pixel_modem_queue::PIXEL_MODEM_TOKEN_DATABASE => {
                self.on_pixel_modem_database(payload.bytes);
                return;
            }
            crate::packet_fields::TRACK_EVENT_RANGE_OF_INTEREST => {
                crate::parser::range_of_interest::on_range_of_interest(
                    &mut self.parser,
                    payload.bytes,
                );
                return;
            }
            crate::packet_fields::PROTOLOG_VIEWER_CONFIG => {
                // Read before sorting: it decodes messages written before it.
                crate::parser::winscope::protolog::on_viewer_config(
                    &mut self.parser,
                    payload.bytes,
                );
                return;
            }
            _ => {}
        }
        let queued = self.timestamp_and_queue(payload, &pkt, seq, seq_id.is_some(), gen_idx);
        if queued && payload.field == TracePacket::FIELD_TRACK_EVENT && self.proto_content.is_some()
        {
            let generation = self.generations.get(gen_idx as usize);
            if let Some(group) = proto_content::event_group(payload.bytes, generation) {
                if let Some(content) = self.proto_content.as_mut() {
                    content.add_packet(bytes, group);
                }
            }
        }
        if payload.field == TracePacket::FIELD_SERVICE_EVENT {
            self.on_service_event(payload.bytes);
        }
    }
}

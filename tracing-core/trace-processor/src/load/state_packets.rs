//! The packets that set state rather than carry events, read as they
//! arrive (before any packet that needs them leaves the sort window): the
//! trace config, track and thread descriptors, interned data, and the
//! clearing of a sequence's incremental state. What they set lives in the
//! loader's sequences and generations and in the parser's descriptors,
//! clocks and metadata.

use protozero::Decoder;
use zerotrace_protos::protos::{
    ThreadDescriptorDecoder, TraceAttributesDecoder, TraceConfigDecoder, TrackDescriptorDecoder,
};

use super::{Loader, STACK_PROFILE_INTERNED};
use crate::descriptors::{Descriptor, Registered};
use crate::storage::args::ArgValue;
use crate::storage::import_logs::LogPlace;
use crate::tracker::track_scopes::ScopeKey;

impl Loader {
    pub(super) fn on_trace_config(&mut self, bytes: &[u8]) {
        let config = TraceConfigDecoder::new(bytes);
        self.identity.on_config_uuid(
            config.trace_uuid_msb().unwrap_or(0),
            config.trace_uuid_lsb().unwrap_or(0),
        );
        if let Some(attrs) = config.trace_attributes() {
            self.trace_attributes(&attrs);
        }
        if let Some(clock) = config
            .builtin_data_sources()
            .and_then(|b| b.primary_trace_clock_raw())
        {
            if clock > 0 {
                self.parser.clocks.set_trace_clock(clock as u64);
            }
        }
    }

    /// Registers a track descriptor; false when it is refused (logged as
    /// upstream's tokenizer logs it) and goes no further.
    pub(super) fn on_track_descriptor(&mut self, td: &[u8], seq: u32, gen_idx: u32) -> bool {
        if !self.descriptor_is_whole(td) {
            return false;
        }
        self.register_descriptor(td, seq);
        // As upstream: a thread's descriptor, read while the sequence's
        // incremental state is valid, becomes the sequence's thread
        // (for legacy events that give no track) and resets its
        // reference times.
        if let Some(th) = TrackDescriptorDecoder::new(td).thread() {
            let valid = self
                .generations
                .get(gen_idx as usize)
                .is_some_and(|g| g.valid);
            if let (true, Some(pid), Some(tid)) = (valid, th.pid(), th.tid()) {
                let t = (i64::from(pid), tid);
                if let Some(s) = self.sequences.get_mut(&seq) {
                    s.track_event_timestamp_ns = Some(
                        th.reference_timestamp_us()
                            .unwrap_or(0)
                            .saturating_mul(1000),
                    );
                    s.track_event_thread_time_us = Some(th.reference_thread_time_us().unwrap_or(0));
                    s.track_event_instruction_count =
                        Some(th.reference_thread_instruction_count().unwrap_or(0));
                    s.thread = Some(t);
                }
                if let Some(g) = self.generations.get_mut(gen_idx as usize) {
                    g.thread = Some(t);
                }
            }
        }
        true
    }

    /// Whether a track descriptor has what upstream's tokenizer requires
    /// (a uuid, a known child ordering, a thread's pid and tid, a process's
    /// pid); a refusal is logged with the track's uuid.
    fn descriptor_is_whole(&mut self, td: &[u8]) -> bool {
        let d = TrackDescriptorDecoder::new(td);
        let stats = &mut self.parser.storage.stats;
        let Some(uuid) = d.uuid() else {
            stats.log_tokenization("track_descriptor_missing_uuid", &[]);
            return false;
        };
        let track = ("track_uuid", ArgValue::Uint(uuid));
        if let Some(order) = d.child_ordering_raw() {
            // UNKNOWN, LEXICOGRAPHIC, CHRONOLOGICAL, EXPLICIT.
            if !(0..=3).contains(&order) {
                let order = ("child_order", ArgValue::Int(i64::from(order)));
                stats.log_tokenization("track_descriptor_invalid_child_ordering", &[track, order]);
                return false;
            }
        }
        if let Some(thread) = d.thread() {
            if thread.pid().is_none() || thread.tid().is_none() {
                stats.log_tokenization("track_descriptor_thread_missing_pid_tid", &[track]);
                return false;
            }
        } else if let Some(process) = d.process() {
            if process.pid().is_none() {
                stats.log_tokenization("track_descriptor_process_missing_pid", &[track]);
                return false;
            }
        }
        true
    }

    /// Reads a thread descriptor packet; false when upstream's tokenizer
    /// would refuse it (no sequence, or the sequence's incremental state is
    /// not valid: its times would be reckoned from a lost reference).
    pub(super) fn accept_thread_descriptor(
        &mut self,
        has_seq: bool,
        seq: u32,
        gen_idx: u32,
    ) -> bool {
        let stats = &mut self.parser.storage.stats;
        if !has_seq {
            stats.log_tokenization("thread_descriptor_missing_sequence_id", &[]);
            return false;
        }
        let valid = self
            .generations
            .get(gen_idx as usize)
            .is_some_and(|g| g.valid);
        if !valid {
            stats.log_tokenization(
                "thread_descriptor_skipped_incremental_state_invalid",
                &[("packet_sequence_id", ArgValue::Uint(u64::from(seq)))],
            );
        }
        valid
    }

    pub(super) fn on_thread_descriptor(&mut self, bytes: &[u8], seq: u32, gen_idx: u32) {
        let thread = ThreadDescriptorDecoder::new(bytes);
        let t = (
            i64::from(thread.pid().unwrap_or(0)),
            thread.tid().unwrap_or(0),
        );
        if let Some(s) = self.sequences.get_mut(&seq) {
            s.track_event_timestamp_ns = Some(
                thread
                    .reference_timestamp_us()
                    .unwrap_or(0)
                    .saturating_mul(1000),
            );
            s.track_event_thread_time_us = thread.reference_thread_time_us();
            s.track_event_instruction_count = thread.reference_thread_instruction_count();
            s.thread = Some(t);
        }
        if let Some(g) = self.generations.get_mut(gen_idx as usize) {
            g.thread = Some(t);
        }
    }

    pub(super) fn trace_attributes(&mut self, attrs: &TraceAttributesDecoder<'_>) {
        for a in attrs.attribute() {
            let key = format!("trace_attribute.{}", a.key().unwrap_or(""));
            if let Some(v) = a.long_value() {
                self.parser.storage.set_metadata_int(&key, v);
            } else if let Some(v) = a.string_value() {
                self.parser.storage.set_metadata_str(&key, v);
            }
        }
    }

    pub(super) fn clear_incremental_state(&mut self, seq: u32) {
        let cur = self.sequences.get(&seq).map(|s| s.generation);
        let g = self.new_generation(true, cur);
        if let Some(s) = self.sequences.get_mut(&seq) {
            s.generation = g;
            s.incremental_counters.clear();
            s.track_event_timestamp_ns = None;
            s.track_event_thread_time_us = None;
            s.track_event_instruction_count = None;
        }
    }

    pub(super) fn add_interned(&mut self, gen_idx: u32, interned: &[u8]) {
        let Some(g) = self.generations.get_mut(gen_idx as usize) else {
            return;
        };
        let mut d = Decoder::new(interned);
        while let Some(field) = d.read_field() {
            let Ok(field) = field else {
                self.parser
                    .storage
                    .stats
                    .incr("interned_data_tokenizer_errors");
                return;
            };
            let Ok(msg) = field.as_bytes() else {
                continue;
            };
            let iid = Decoder::new(msg).find_last(1).and_then(|f| f.as_u64().ok());
            if iid.is_none() && STACK_PROFILE_INTERNED.contains(&field.id) {
                self.parser.storage.profile_facts.losses.perf_malformed += 1;
            }
            let iid = iid.unwrap_or(0);
            g.intern((field.id, iid), msg.to_vec());
        }
    }

    /// The scope the uuids of the packet being read belong to: its file's
    /// and its machine's.
    pub(super) fn descriptor_scope(&self) -> ScopeKey {
        ScopeKey {
            file: self.archive.members_started,
            machine: self.machine,
        }
    }

    /// A packet marked first on its sequence: the descriptor tracks of
    /// its scope made on that sequence say so.
    pub(super) fn first_packet_on(&mut self, sequence: u32) {
        let scope = self.descriptor_scope();
        let descriptors = self.parser.descriptors_of_mut(scope);
        descriptors.first_packet_sequences.insert(sequence);
    }

    pub(super) fn register_descriptor(&mut self, bytes: &[u8], sequence: u32) {
        let td = TrackDescriptorDecoder::new(bytes);
        let Some(uuid) = td.uuid() else {
            return;
        };
        // The default track (uuid 0) has no parent: a descriptor giving it
        // one is refused, as upstream refuses it.
        if let Some(parent) = td.parent_uuid().filter(|&p| uuid == 0 && p != 0) {
            self.parser.storage.stats.log_at(
                "track_descriptor_default_track_with_parent",
                LogPlace::default(),
                &[("parent_uuid", ArgValue::Uint(parent))],
            );
            return;
        }
        let counter = td.counter();
        let scope = self.descriptor_scope();
        let registered = self.parser.descriptors_of_mut(scope).register(Descriptor {
            bytes: bytes.to_vec(),
            uuid,
            is_counter: counter.is_some(),
            is_incremental_counter: counter
                .as_ref()
                .is_some_and(|c| c.is_incremental().unwrap_or(false)),
            order: 0,
            sequence,
        });
        if registered == Registered::Conflicting {
            // Upstream's analysis log: no time, no place, the uuid.
            self.parser.storage.stats.log_at(
                "track_descriptor_conflicting_reservation",
                LogPlace::default(),
                &[("track_uuid", ArgValue::Uint(uuid))],
            );
        }
    }

    /// Packet loss per buffer, as upstream derives it from the sequences
    /// named in `TraceStats.writer_stats`: packets lost, sequences whose
    /// every incremental packet was skipped, and losses by cause.
    pub(super) fn sequence_stats(&mut self) {
        use crate::sequence_state::DATA_LOSS_CAUSES;
        #[derive(Default)]
        struct PerBuffer {
            loss: i64,
            dropped: i64,
            causes: [i64; DATA_LOSS_CAUSES.len()],
        }
        let mut per_buffer: std::collections::BTreeMap<u32, PerBuffer> = Default::default();
        let mut seen = crate::hash::HashSet::default();
        for &(seq, buf) in &self.writer_buffers {
            if !seen.insert((seq, buf)) {
                continue;
            }
            if let Some(s) = self.sequences.get(&seq) {
                let e = per_buffer.entry(buf).or_default();
                e.loss += i64::from(s.previous_packet_dropped_count);
                if s.needs_incremental_state_skipped > 0
                    && s.needs_incremental_state_skipped == s.needs_incremental_state_total
                {
                    e.dropped += 1;
                }
                for (sum, n) in e.causes.iter_mut().zip(s.data_loss_causes) {
                    *sum += i64::from(n);
                }
            }
        }
        for (buf, b) in per_buffer {
            let stats = &mut self.parser.storage.stats;
            let buf = i64::from(buf);
            stats.set_indexed("traced_buf_sequence_packet_loss", buf, b.loss);
            stats.set_indexed("traced_buf_incremental_sequences_dropped", buf, b.dropped);
            for ((_, name), n) in DATA_LOSS_CAUSES.iter().zip(b.causes) {
                stats.set_indexed(name, buf, n);
            }
        }
    }
}

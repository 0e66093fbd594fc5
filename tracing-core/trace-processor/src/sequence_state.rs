//! Per-sequence state: each `trusted_packet_sequence_id` has generations of
//! incremental state (a clear starts a new one); a generation holds the
//! interned data and the `TracePacketDefaults` its packets resolve against,
//! plus the legacy TrackEvent reference times. Packets keep the index of
//! the generation they were read in, so sorting them later loses nothing.

use zerotrace_protos::protos::TracePacketDefaultsDecoder;

use crate::hash::HashMap;

/// Incremental state of one sequence between two clears.
#[derive(Debug, Default)]
pub struct Generation {
    /// Interned messages by (InternedData field number, iid): their bytes.
    pub interned: HashMap<(u32, u64), Vec<u8>>,
    /// The `TracePacketDefaults` bytes in force (set with
    /// [`Generation::set_defaults`], which also decodes them).
    pub defaults: Option<Vec<u8>>,
    /// What every packet or TrackEvent reads of the defaults, decoded
    /// once when they are set instead of per packet.
    pub decoded_defaults: DecodedDefaults,
    /// Whether the state is valid (cleared at least once, no loss since).
    pub valid: bool,
    /// `trusted_pid` of the sequence's packets.
    pub trusted_pid: Option<i64>,
    /// The (pid, tid) of the sequence's ThreadDescriptor.
    pub thread: Option<(i64, i64)>,
    /// The `trusted_packet_sequence_id` of its sequence (0: none).
    pub sequence_id: u32,
    /// The file of an archive its sequence was read from (its ordinal
    /// among the members read, 0 for a trace that is no archive): track
    /// descriptors are scoped per file and machine.
    pub file: u32,
    /// Interned entries replaced by a later one with the same kind and
    /// iid (what a parser kept from an entry is stale once this moves).
    pub(crate) replacements: u32,
}

/// The fields of `TracePacketDefaults` read for every packet of a
/// sequence: its clock, and its TrackEvent defaults' tracks.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct DecodedDefaults {
    /// `timestamp_clock_id`.
    pub timestamp_clock_id: Option<u32>,
    /// `track_event_defaults.track_uuid`.
    pub track_uuid: Option<u64>,
    /// `track_event_defaults.extra_counter_track_uuids`.
    pub extra_counter_track_uuids: Vec<u64>,
    /// `track_event_defaults.extra_double_counter_track_uuids`.
    pub extra_double_counter_track_uuids: Vec<u64>,
}

impl DecodedDefaults {
    /// Decodes `bytes`, a `TracePacketDefaults`.
    pub fn decode(bytes: &[u8]) -> Self {
        let d = TracePacketDefaultsDecoder::new(bytes);
        let te = d.track_event_defaults();
        DecodedDefaults {
            timestamp_clock_id: d.timestamp_clock_id(),
            track_uuid: te.as_ref().and_then(|t| t.track_uuid()),
            extra_counter_track_uuids: te
                .as_ref()
                .map(|t| t.extra_counter_track_uuids().collect())
                .unwrap_or_default(),
            extra_double_counter_track_uuids: te
                .as_ref()
                .map(|t| t.extra_double_counter_track_uuids().collect())
                .unwrap_or_default(),
        }
    }
}

impl Generation {
    /// Sets the `TracePacketDefaults` in force (their bytes), decoding
    /// what packets read of them.
    pub fn set_defaults(&mut self, bytes: &[u8]) {
        self.decoded_defaults = DecodedDefaults::decode(bytes);
        self.defaults = Some(bytes.to_vec());
    }

    /// Interned bytes of a kind and iid.
    pub fn interned(&self, field: u32, iid: u64) -> Option<&[u8]> {
        self.interned.get(&(field, iid)).map(Vec::as_slice)
    }

    /// Adds (or replaces) the interned message of a (kind, iid).
    pub fn intern(&mut self, key: (u32, u64), bytes: Vec<u8>) {
        if self.interned.insert(key, bytes).is_some() {
            self.replacements = self.replacements.wrapping_add(1);
        }
    }

    /// How many interned entries were replaced so far.
    pub fn replacements(&self) -> u32 {
        self.replacements
    }
}

/// The causes a `previous_packet_dropped` bitmask can name (the bits of
/// `TracePacket.DataLossReason` past `DATA_LOSS_PRESENT`), each with the
/// per-buffer stat that counts the sequences' losses for it.
pub const DATA_LOSS_CAUSES: [(u32, &str); 8] = [
    (1 << 1, "traced_buf_data_loss_read_gap"),
    (1 << 2, "traced_buf_data_loss_chunk_corrupted"),
    (1 << 3, "traced_buf_data_loss_orphan_continuation"),
    (1 << 4, "traced_buf_data_loss_reassembly_gap"),
    (1 << 5, "traced_buf_data_loss_reassembly_broken_chain"),
    (1 << 6, "traced_buf_data_loss_overwrite"),
    (1 << 7, "traced_buf_data_loss_writer_abort"),
    (1 << 8, "traced_buf_data_loss_smb_full"),
];

/// What a sequence keeps across its packets.
#[derive(Debug, Default)]
pub struct SequenceState {
    /// Index of the current generation in the loader's list.
    pub generation: u32,
    /// Packets after a `previous_packet_dropped`.
    pub previous_packet_dropped_count: u32,
    /// Of those, how many named each cause of [`DATA_LOSS_CAUSES`] (by
    /// its index there) in their `previous_packet_dropped` bitmask.
    pub data_loss_causes: [u32; DATA_LOSS_CAUSES.len()],
    /// Packets that needed incremental state.
    pub needs_incremental_state_total: u32,
    /// ... and were skipped because it was invalid.
    pub needs_incremental_state_skipped: u32,
    /// Legacy TrackEvent (and StreamingProfilePacket) timestamps: the
    /// running value in ns, on CLOCK_MONOTONIC; None until a
    /// ThreadDescriptor sets it.
    pub track_event_timestamp_ns: Option<i64>,
    /// Legacy TrackEvent thread time: the running value in µs.
    pub track_event_thread_time_us: Option<i64>,
    /// Legacy TrackEvent instruction count: the running value.
    pub track_event_instruction_count: Option<i64>,
    /// Running values of incremental counter tracks, by uuid.
    pub incremental_counters: HashMap<u64, f64>,
    /// The pid and tid of the ThreadDescriptor of this sequence.
    pub thread: Option<(i64, i64)>,
}

impl SequenceState {
    /// Counts a packet that says packets before it were lost:
    /// `reasons` is its `previous_packet_dropped` bitmask, whose cause
    /// bits are counted one by one.
    pub fn record_loss(&mut self, reasons: u32) {
        self.previous_packet_dropped_count += 1;
        for (n, (bit, _)) in self.data_loss_causes.iter_mut().zip(DATA_LOSS_CAUSES) {
            if reasons & bit != 0 {
                *n += 1;
            }
        }
    }
}

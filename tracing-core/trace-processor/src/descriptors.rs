//! Track descriptors by uuid, registered as packets are read (before
//! sorting, as upstream reserves them), so an event resolves its track
//! whatever order the descriptor and the event arrive in. As upstream's
//! reservations: the first descriptor of a uuid is the one that counts; a
//! later one for another track (another parent, pid, tid, kind or merge
//! rule) is refused, and a later one for the same track only names it:
//! when no earlier one did, or always for a track that never merges with
//! its siblings.

use zerotrace_protos::protos::TrackDescriptorDecoder;

use crate::hash::HashMap;

/// What the loader keeps of one `TrackDescriptor`.
#[derive(Debug, Clone, Default)]
pub struct Descriptor {
    /// The descriptor's bytes (the first one seen for the uuid).
    pub bytes: Vec<u8>,
    /// The uuid.
    pub uuid: u64,
    /// Whether it describes a counter track.
    pub is_counter: bool,
    /// Whether a counter descriptor says `is_incremental`.
    pub is_incremental_counter: bool,
    /// Order in which uuids were first seen.
    pub order: u32,
    /// The sequence the descriptor was written on.
    pub sequence: u32,
}

/// Descriptors by uuid.
#[derive(Debug, Default)]
pub struct Descriptors {
    /// uuid → descriptor.
    pub by_uuid: HashMap<u64, Descriptor>,
    /// The sequences a packet marked `first_packet_on_sequence` (their
    /// descriptors' tracks say `has_first_packet_on_sequence`).
    pub first_packet_sequences: crate::hash::HashSet<u32>,
    /// The name each uuid's descriptors give it, by the rule above.
    names: HashMap<u64, String>,
}

/// What registering a descriptor did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[must_use]
pub enum Registered {
    /// It reserved its uuid, or named the track reserved.
    Kept,
    /// It describes another track than the uuid's first descriptor: refused
    /// (upstream's `track_descriptor_conflicting_reservation`).
    Conflicting,
}

/// `TrackDescriptor.SiblingMergeBehavior`'s NONE.
const MERGE_NONE: i32 = 2;
/// Its BY_SIBLING_MERGE_KEY.
const MERGE_BY_KEY: i32 = 3;

/// A descriptor's name (its `name`, `static_name` or `atrace_name`).
fn name_of<'a>(td: &TrackDescriptorDecoder<'a>) -> Option<&'a str> {
    td.name().or(td.static_name()).or(td.atrace_name())
}

/// Whether two descriptors of one uuid describe the same track, as
/// upstream compares reservations: parent, pid, tid, kind (counter with
/// its details, state) and merge rule.
fn same_track(a: &TrackDescriptorDecoder<'_>, b: &TrackDescriptorDecoder<'_>) -> bool {
    let ids = |td: &TrackDescriptorDecoder<'_>| {
        let thread = td.thread();
        let pid = thread
            .as_ref()
            .and_then(|t| t.pid())
            .or_else(|| td.process().and_then(|p| p.pid()));
        (
            td.parent_uuid().unwrap_or(0),
            pid,
            thread.and_then(|t| t.tid()),
            td.has_state(),
        )
    };
    let counter = |td: &TrackDescriptorDecoder<'_>| {
        td.counter().map(|c| {
            (
                c.categories().next().map(str::to_owned),
                c.type_raw(),
                c.unit_multiplier(),
                c.is_incremental().unwrap_or(false),
                c.y_axis_share_key().map(str::to_owned),
            )
        })
    };
    let merge = |td: &TrackDescriptorDecoder<'_>| match td.sibling_merge_behavior_raw() {
        Some(MERGE_NONE) => (MERGE_NONE, None),
        Some(MERGE_BY_KEY) => (
            MERGE_BY_KEY,
            td.sibling_merge_key()
                .map(str::to_owned)
                .or_else(|| td.sibling_merge_key_int().map(|k| k.to_string())),
        ),
        _ => (0, None),
    };
    ids(a) == ids(b) && counter(a) == counter(b) && merge(a) == merge(b)
}

impl Descriptors {
    /// Registers a descriptor: the first of its uuid, or a later one that
    /// may rename it (refused when it describes another track).
    pub fn register(&mut self, mut d: Descriptor) -> Registered {
        let new = TrackDescriptorDecoder::new(&d.bytes);
        let name = name_of(&new);
        if let Some(old) = self.by_uuid.get(&d.uuid) {
            if !same_track(&TrackDescriptorDecoder::new(&old.bytes), &new) {
                return Registered::Conflicting;
            }
            let never_merges = new.sibling_merge_behavior_raw() == Some(MERGE_NONE);
            if let Some(name) = name {
                if never_merges || !self.names.contains_key(&d.uuid) {
                    self.names.insert(d.uuid, name.to_owned());
                }
            }
            return Registered::Kept;
        }
        if let Some(name) = name {
            self.names.insert(d.uuid, name.to_owned());
        }
        d.order = u32::try_from(self.by_uuid.len()).unwrap_or(u32::MAX);
        self.by_uuid.insert(d.uuid, d);
        Registered::Kept
    }

    /// The name a uuid's descriptors give its track, if any.
    pub fn name(&self, uuid: u64) -> Option<&str> {
        self.names.get(&uuid).map(String::as_str)
    }

    /// The descriptor of a uuid.
    pub fn get(&self, uuid: u64) -> Option<&Descriptor> {
        self.by_uuid.get(&uuid)
    }
}

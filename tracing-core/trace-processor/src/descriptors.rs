//! Track descriptors by uuid, registered as packets are read (before
//! sorting, as upstream reserves them), so an event resolves its track
//! whatever order the descriptor and the event arrive in.

use crate::hash::HashMap;

/// What the loader keeps of one `TrackDescriptor`.
#[derive(Debug, Clone, Default)]
pub struct Descriptor {
    /// The descriptor's bytes (the last one seen for the uuid).
    pub bytes: Vec<u8>,
    /// The uuid.
    pub uuid: u64,
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
}

impl Descriptors {
    /// Registers (or replaces) a descriptor.
    pub fn register(&mut self, mut d: Descriptor) {
        let next = u32::try_from(self.by_uuid.len()).unwrap_or(u32::MAX);
        d.order = self.by_uuid.get(&d.uuid).map_or(next, |old| old.order);
        self.by_uuid.insert(d.uuid, d);
    }

    /// The descriptor of a uuid.
    pub fn get(&self, uuid: u64) -> Option<&Descriptor> {
        self.by_uuid.get(&uuid)
    }
}

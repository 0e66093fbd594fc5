//! Whether a descriptor track's chain of parents can be resolved, checked
//! before the track is, as upstream checks it: each parent must be known
//! (a descriptor, or a uuid already resolved), no uuid may come back in its
//! own chain, and the chain may not run past a bound. A chain that fails
//! leaves the track unresolved, and each attempt is counted with an import
//! log naming the uuid that was asked for.

use zerotrace_protos::protos::TrackDescriptorDecoder;

use super::{TrackResolution, Trackers};
use crate::storage::args::ArgValue;
use crate::storage::import_logs::LogPlace;

/// The longest chain of ancestors followed.
pub(super) const MAX_ANCESTORS: usize = 100;

impl TrackResolution {
    /// The bytes of a uuid's descriptor, borrowed (the loader's first, else
    /// the one parsed).
    fn descriptor_slice(&self, uuid: u64) -> Option<&[u8]> {
        match self.descriptors.get(uuid) {
            Some(d) => Some(d.bytes.as_slice()),
            None => self.current.get(&uuid).map(Vec::as_slice),
        }
    }

    /// What is wrong with the chain of parents of `uuid` (a stat name), if
    /// anything. The uuid itself need not be known: a uuid without a
    /// descriptor is a track of defaults with no parent.
    pub(super) fn hierarchy_error(&self, uuid: u64) -> Option<&'static str> {
        let mut seen: Vec<u64> = Vec::new();
        let mut current = uuid;
        for _ in 0..MAX_ANCESTORS {
            if current == 0 {
                return None;
            }
            if seen.contains(&current) {
                return Some("track_event_track_hierarchy_loop");
            }
            let bytes = self.descriptor_slice(current);
            if bytes.is_none() && current != uuid && !self.resolved.contains_key(&current) {
                return Some("track_hierarchy_missing_uuid");
            }
            seen.push(current);
            current = bytes
                .and_then(|b| TrackDescriptorDecoder::new(b).parent_uuid())
                .unwrap_or(0);
        }
        Some("track_event_track_hierarchy_too_deep")
    }

    /// Checks the chain of parents of `uuid` before it is first resolved:
    /// false (counted and logged for the trace, on the host's stats, as
    /// upstream's per-trace import logs count it) when it cannot be.
    pub(super) fn check_hierarchy(&self, cx: &mut Trackers<'_>, uuid: u64) -> bool {
        let Some(stat) = self.hierarchy_error(uuid) else {
            return true;
        };
        let machine = cx.storage.machine();
        cx.storage.set_machine(0);
        cx.storage.record_import_log_typed(
            stat,
            LogPlace::default(),
            &[("track_uuid", ArgValue::Uint(uuid))],
        );
        cx.storage.set_machine(machine);
        false
    }
}

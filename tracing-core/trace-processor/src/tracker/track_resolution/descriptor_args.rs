//! What a descriptor track takes from its descriptors: the name they give
//! it (as upstream's reservations keep it) and the source args upstream
//! gives a descriptor track.

use zerotrace_protos::protos::TrackDescriptorDecoder;

use super::{TrackResolution, Trackers};
use crate::storage::args::ArgValue;

impl TrackResolution {
    /// The name a uuid's descriptors give its track, as upstream's
    /// reservations keep it (`descriptors.rs`), else the one parsed.
    pub(super) fn descriptor_name(
        &self,
        uuid: u64,
        td: &TrackDescriptorDecoder<'_>,
    ) -> Option<String> {
        match self.descriptors.name(uuid) {
            Some(n) => Some(n.to_owned()),
            None => td
                .name()
                .or(td.static_name())
                .or(td.atrace_name())
                .map(str::to_owned),
        }
    }

    /// A descriptor track's source args, as upstream gives them: where it
    /// came from (a descriptor, its uuid as `trace_id`, whether it is the
    /// root of its scope, whether its sequence began with a packet marked
    /// first on it), how the UI orders its children, its rank among its
    /// siblings, then its description.
    pub(super) fn source_args(
        &self,
        cx: &mut Trackers<'_>,
        uuid: u64,
        td: &TrackDescriptorDecoder<'_>,
        is_root: bool,
        sequence: Option<u32>,
    ) -> Vec<(&'static str, ArgValue)> {
        let descriptor = cx.storage.strings.intern("descriptor");
        let mut args = vec![
            ("source", ArgValue::String(descriptor)),
            ("trace_id", ArgValue::Int(uuid as i64)),
            ("is_root_in_scope", ArgValue::Bool(is_root)),
        ];
        if sequence.is_some_and(|s| self.descriptors.first_packet_sequences.contains(&s)) {
            args.push(("has_first_packet_on_sequence", ArgValue::Bool(true)));
        }
        args.extend(self.ordering_args(cx, td));
        args
    }

    /// A descriptor's ordering args and description.
    pub(super) fn ordering_args(
        &self,
        cx: &mut Trackers<'_>,
        td: &TrackDescriptorDecoder<'_>,
    ) -> Vec<(&'static str, ArgValue)> {
        let mut args = Vec::new();
        let ordering = match td.child_ordering_raw() {
            Some(1) => Some("lexicographic"),
            Some(2) => Some("chronological"),
            Some(3) => Some("explicit"),
            _ => None,
        };
        if let Some(o) = ordering {
            let o = cx.storage.strings.intern(o);
            args.push(("child_ordering", ArgValue::String(o)));
        }
        if let Some(rank) = td.sibling_order_rank() {
            args.push(("sibling_order_rank", ArgValue::Int(i64::from(rank))));
        }
        if let Some(desc) = td.description() {
            let desc = cx.storage.strings.intern(desc);
            args.push(("description", ArgValue::String(desc)));
        }
        args
    }
}

//! Upstream's proto content analysis, which its diff tests turn on
//! (`--analyze-trace-proto-content`): every packet read is walked by the
//! trace schema and its bytes are counted per field path (a message's own
//! framing under its path, fields the schema does not know under
//! `#unknown`), grouped by what the packet was: a TrackEvent by its
//! category and name (`event.category`, `event.name`), a packet skipped for
//! its sequence's lost incremental state (`skipped_packet`), anything else
//! in one unnamed group. At the end each group becomes a tree of
//! `experimental_proto_path` rows, whose root carries the group's args,
//! and one `experimental_proto_content` row per path.
//!
//! Packets are counted as upstream reads them: not the clock snapshots,
//! service events and extension descriptors it consumes first, and a
//! TrackEvent only once its time is resolved and it has a type (or a
//! legacy phase).

use std::collections::hash_map::Entry;

use prost_reflect::{Kind, MessageDescriptor};
use protozero::{Decoder, FieldValue};

use crate::column_store::strings::StrId;
use crate::hash::HashMap;
use crate::sequence_state::Generation;
use crate::storage::Storage;
use crate::storage::args::{ArgSetBuilder, ArgValue};
use crate::tables::proto_content::{ProtoContentRow, ProtoPathRow};
use zerotrace_protos::protos::TracePacket;

/// `TracePacket.extension_descriptor` (not in the generated `TracePacket`).
const EXTENSION_DESCRIPTOR: u32 = 72;

/// `InternedData.event_categories` and `event_names`.
const INTERNED_CATEGORIES: u32 = 1;
const INTERNED_NAMES: u32 = 2;

/// What group a packet's bytes count in.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Group {
    /// A packet that is not a TrackEvent.
    Plain,
    /// A packet skipped because its sequence's incremental state was lost.
    SkippedInvalidState,
    /// A TrackEvent: its category and name (either may be none).
    Event {
        /// The category (several joined by commas).
        category: Option<String>,
        /// The name.
        name: Option<String>,
    },
}

/// One step of a field path.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Step {
    /// `#` and the field's name; empty for the root.
    field_name: String,
    /// The message type entered, or the leaf's type.
    type_name: String,
}

/// The bytes and occurrences of one path in one group.
#[derive(Debug, Default, Clone, Copy)]
struct Sample {
    size: u64,
    count: u64,
}

/// A group's paths (as step indices), in the order first met.
#[derive(Debug, Default)]
struct GroupSamples {
    order: Vec<Vec<u32>>,
    samples: HashMap<Vec<u32>, Sample>,
}

/// The analysis of one load.
#[derive(Debug, Default)]
pub struct ProtoContent {
    steps: Vec<Step>,
    step_ids: HashMap<Step, u32>,
    groups: Vec<(Group, GroupSamples)>,
    group_ids: HashMap<Group, usize>,
}

impl ProtoContent {
    /// Counts a packet other than a TrackEvent (`field` is its payload's
    /// field) as a plain packet, unless it is one upstream consumes before
    /// (a service event, an extension descriptor).
    pub fn add_plain(&mut self, packet: &[u8], field: u32) {
        if field == TracePacket::FIELD_TRACK_EVENT || field == TracePacket::FIELD_SERVICE_EVENT {
            return;
        }
        if Decoder::new(packet)
            .find_last(EXTENSION_DESCRIPTOR)
            .is_some()
        {
            return;
        }
        self.add_packet(packet, Group::Plain);
    }

    /// Counts one packet's bytes in `group`.
    pub fn add_packet(&mut self, packet: &[u8], group: Group) {
        let Some(root) = crate::parser::proto_text::message("perfetto.protos.TracePacket") else {
            return;
        };
        let g = match self.group_ids.entry(group) {
            Entry::Occupied(e) => *e.get(),
            Entry::Vacant(e) => {
                let g = self.groups.len();
                self.groups.push((e.key().clone(), GroupSamples::default()));
                e.insert(g);
                g
            }
        };
        let root_step = self.step("", short_name(root.full_name()));
        let mut path = vec![root_step];
        let mut found = Vec::new();
        self.walk(&root, packet, &mut path, &mut found);
        if let Some((_, samples)) = self.groups.get_mut(g) {
            for (path, size) in found {
                match samples.samples.entry(path) {
                    Entry::Occupied(mut e) => {
                        let s = e.get_mut();
                        s.size += size;
                        s.count += 1;
                    }
                    Entry::Vacant(e) => {
                        samples.order.push(e.key().clone());
                        e.insert(Sample { size, count: 1 });
                    }
                }
            }
        }
    }

    fn step(&mut self, field_name: &str, type_name: &str) -> u32 {
        let step = Step {
            field_name: field_name.to_string(),
            type_name: type_name.to_string(),
        };
        if let Some(&id) = self.step_ids.get(&step) {
            return id;
        }
        let id = u32::try_from(self.steps.len()).unwrap_or(u32::MAX);
        self.steps.push(step.clone());
        self.step_ids.insert(step, id);
        id
    }

    /// The samples of one message (at `path`): each known leaf field, each
    /// nested message's, the unknown fields' bytes together, then the
    /// message's own bytes beyond its fields' values (tags, lengths).
    fn walk(
        &mut self,
        message: &MessageDescriptor,
        bytes: &[u8],
        path: &mut Vec<u32>,
        out: &mut Vec<(Vec<u32>, u64)>,
    ) {
        let mut overhead = bytes.len() as u64;
        let mut unknown = 0u64;
        let mut d = Decoder::new(bytes);
        while let Some(Ok(field)) = d.read_field() {
            let size = match field.value {
                FieldValue::Varint(v) => varint_len(v),
                FieldValue::Bytes(b) | FieldValue::Group(b) => b.len() as u64,
                FieldValue::Fixed32(_) => 4,
                FieldValue::Fixed64(_) => 8,
            };
            overhead = overhead.saturating_sub(size);
            let Some((name, kind)) = field_of(message, field.id) else {
                unknown += size;
                continue;
            };
            let field_name = format!("#{name}");
            match (&kind, field.value) {
                (Kind::Message(m), FieldValue::Bytes(b)) => {
                    let step = self.step(&field_name, short_name(m.full_name()));
                    path.push(step);
                    self.walk(m, b, path, out);
                    path.pop();
                }
                _ => {
                    let step = self.step(&field_name, leaf_type(&kind));
                    path.push(step);
                    out.push((path.clone(), size));
                    path.pop();
                }
            }
        }
        if unknown > 0 {
            let step = self.step("#unknown", "");
            path.push(step);
            out.push((path.clone(), unknown));
            path.pop();
        }
        out.push((path.clone(), overhead));
    }

    /// Writes the groups out as rows: each group's path tree (its root
    /// carrying the group's args) and its paths' sizes.
    pub fn finish(self, storage: &mut Storage) {
        for (group, samples) in self.groups {
            let mut ids: HashMap<Vec<u32>, u32> = HashMap::default();
            for path in &samples.order {
                let mut parent: Option<u32> = None;
                let mut text = String::new();
                for (depth, &step_id) in path.iter().enumerate() {
                    let Some(step) = self.steps.get(step_id as usize) else {
                        continue;
                    };
                    if !step.field_name.is_empty() {
                        if !text.is_empty() {
                            text.push('.');
                        }
                        text.push_str(&step.field_name);
                    }
                    if !text.is_empty() {
                        text.push('.');
                    }
                    text.push_str(&step.type_name);
                    let prefix = &path[..=depth];
                    if let Some(&id) = ids.get(prefix) {
                        parent = Some(id);
                        continue;
                    }
                    let id = u32::try_from(storage.proto_paths.len()).unwrap_or(u32::MAX);
                    let arg_set_id = if parent.is_none() {
                        group_args(storage, &group)
                    } else {
                        None
                    };
                    let field_type = storage.strings.intern(&step.type_name);
                    let field_name = if step.field_name.is_empty() {
                        StrId::NULL
                    } else {
                        storage.strings.intern(&step.field_name)
                    };
                    storage.proto_paths.push(ProtoPathRow {
                        parent_id: parent,
                        field_type,
                        field_name,
                        arg_set_id,
                    });
                    ids.insert(prefix.to_vec(), id);
                    parent = Some(id);
                }
                let (Some(path_id), Some(sample)) = (parent, samples.samples.get(path)) else {
                    continue;
                };
                let size = i64::try_from(sample.size).unwrap_or(i64::MAX);
                let path = storage.strings.intern(&text);
                storage.proto_contents.push(ProtoContentRow {
                    path,
                    path_id,
                    total_size: size,
                    size,
                    count: i64::try_from(sample.count).unwrap_or(i64::MAX),
                });
            }
        }
    }
}

/// The arg set of a group's root: none for plain packets.
fn group_args(storage: &mut Storage, group: &Group) -> Option<u32> {
    let mut builder = ArgSetBuilder::default();
    let mut add = |storage: &mut Storage, key: &str, value: Option<&str>| {
        let k = storage.strings.intern(key);
        let v = value.map_or(StrId::NULL, |v| storage.strings.intern(v));
        builder.add(k, k, ArgValue::String(v));
    };
    match group {
        Group::Plain => return None,
        Group::SkippedInvalidState => {
            add(storage, "skipped_packet", Some("invalid_incremental_state"));
        }
        Group::Event { category, name } => {
            add(storage, "event.category", category.as_deref());
            add(storage, "event.name", name.as_deref());
        }
    }
    storage.args.add_set(&builder)
}

/// A field of `message` (or an extension of it) by number: its name and
/// type.
fn field_of(message: &MessageDescriptor, id: u32) -> Option<(String, Kind)> {
    if let Some(f) = message.get_field(id) {
        return Some((f.name().to_string(), f.kind()));
    }
    let ext = message.get_extension(id)?;
    Some((ext.name().to_string(), ext.kind()))
}

/// The last part of a full type name (`perfetto.protos.TracePacket` →
/// `TracePacket`).
fn short_name(full: &str) -> &str {
    full.rsplit('.').next().unwrap_or(full)
}

/// The protobuf type name of a leaf field, lower case (`uint64`, `string`).
fn leaf_type(kind: &Kind) -> &'static str {
    match kind {
        Kind::Double => "double",
        Kind::Float => "float",
        Kind::Int64 => "int64",
        Kind::Uint64 => "uint64",
        Kind::Int32 => "int32",
        Kind::Fixed64 => "fixed64",
        Kind::Fixed32 => "fixed32",
        Kind::Bool => "bool",
        Kind::String => "string",
        Kind::Message(_) => "message",
        Kind::Bytes => "bytes",
        Kind::Uint32 => "uint32",
        Kind::Enum(_) => "enum",
        Kind::Sfixed32 => "sfixed32",
        Kind::Sfixed64 => "sfixed64",
        Kind::Sint32 => "sint32",
        Kind::Sint64 => "sint64",
    }
}

/// Bytes of `v` as a varint.
fn varint_len(v: u64) -> u64 {
    u64::from((64 - v.leading_zeros()).max(1).div_ceil(7))
}

/// The group of a TrackEvent (its bytes; its sequence's state): its
/// category and name resolved as upstream's importer resolves them, or
/// None when the importer would refuse it (no type and no legacy phase).
pub fn event_group(event: &[u8], generation: Option<&Generation>) -> Option<Group> {
    let mut category_iids = Vec::new();
    let mut categories = Vec::new();
    let mut name_iid = None;
    let mut name = None;
    let mut has_type = false;
    let mut legacy_phase = false;
    let mut legacy_name_iid = None;
    let mut d = Decoder::new(event);
    while let Some(Ok(f)) = d.read_field() {
        match (f.id, f.value) {
            (3, FieldValue::Varint(v)) => category_iids.push(v),
            (3, FieldValue::Bytes(b)) => {
                let mut rest = b;
                while let Ok((v, n)) = protozero::varint::decode_varint(rest) {
                    category_iids.push(v);
                    rest = rest.get(n..).unwrap_or(&[]);
                }
            }
            (22, FieldValue::Bytes(b)) => categories.push(String::from_utf8_lossy(b).into_owned()),
            (10, FieldValue::Varint(v)) => name_iid = Some(v),
            (23, FieldValue::Bytes(b)) => name = Some(String::from_utf8_lossy(b).into_owned()),
            (9, FieldValue::Varint(v)) => has_type = v != 0,
            (6, FieldValue::Bytes(b)) => {
                let legacy = Decoder::new(b);
                legacy_phase = legacy.find_last(2).is_some();
                legacy_name_iid = legacy.find_last(1).and_then(|f| f.as_u64().ok());
            }
            _ => {}
        }
    }
    if !has_type && !legacy_phase {
        return None;
    }
    let interned = |field: u32, iid: u64| -> Option<String> {
        let msg = generation?.interned(field, iid)?;
        let name = Decoder::new(msg).find_last(2)?.as_bytes().ok()?;
        Some(String::from_utf8_lossy(name).into_owned())
    };
    let category = match (category_iids.as_slice(), categories.len()) {
        ([iid], 0) => {
            Some(interned(INTERNED_CATEGORIES, *iid).unwrap_or_else(|| format!("unknown({iid})")))
        }
        ([], 1) => categories.pop(),
        (iids, n) if iids.len() + n > 1 => {
            let all: Vec<String> = iids
                .iter()
                .filter_map(|&iid| interned(INTERNED_CATEGORIES, iid))
                .chain(categories)
                .collect();
            (!all.is_empty()).then(|| all.join(","))
        }
        _ => None,
    };
    let name = match name_iid
        .filter(|&i| i != 0)
        .or(legacy_name_iid.filter(|&i| i != 0))
    {
        Some(iid) => interned(INTERNED_NAMES, iid),
        None => name,
    };
    Some(Group::Event { category, name })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_packet_is_counted_by_field_path() {
        // timestamp: 5, trusted_packet_sequence_id: 1, track_event { type: 1 }
        let packet = [0x40, 0x05, 0x50, 0x01, 0x5a, 0x02, 0x48, 0x01];
        let mut c = ProtoContent::default();
        c.add_packet(&packet, Group::Plain);
        c.add_packet(&packet, Group::Plain);
        let mut storage = Storage::default();
        c.finish(&mut storage);
        let text: Vec<(String, i64, i64)> = storage
            .proto_contents
            .iter()
            .map(|r| {
                (
                    storage.strings.get(r.path).unwrap_or_default().to_string(),
                    r.size,
                    r.count,
                )
            })
            .collect();
        assert_eq!(
            text,
            vec![
                ("TracePacket.#timestamp.uint64".to_string(), 2, 2),
                (
                    "TracePacket.#trusted_packet_sequence_id.uint32".to_string(),
                    2,
                    2
                ),
                (
                    "TracePacket.#track_event.TrackEvent.#type.enum".to_string(),
                    2,
                    2
                ),
                ("TracePacket.#track_event.TrackEvent".to_string(), 2, 2),
                ("TracePacket".to_string(), 8, 2),
            ]
        );
        // A plain group's root has no args.
        assert!(storage.proto_paths.iter().all(|r| r.arg_set_id.is_none()));
    }

    #[test]
    fn track_event_groups_resolve_category_and_name() {
        // categories: "cat", name: "n", type: 1
        let event = [
            0xb2, 0x01, 0x03, b'c', b'a', b't', 0xba, 0x01, 0x01, b'n', 0x48, 0x01,
        ];
        assert_eq!(
            event_group(&event, None),
            Some(Group::Event {
                category: Some("cat".into()),
                name: Some("n".into())
            })
        );
        // No type, no legacy phase: the importer refuses it.
        assert_eq!(event_group(&event[..10], None), None);
        // An interned category the sequence lacks.
        assert_eq!(
            event_group(&[0x18, 0x07, 0x48, 0x02], None),
            Some(Group::Event {
                category: Some("unknown(7)".into()),
                name: None
            })
        );
    }
}

//! A TrackEvent's typed Chrome fields and every extension of TrackEvent
//! the schema knows (Chrome's `ChromeTrackEvent` fields) flattened into the
//! event's args by reflection over TrackEvent's schema, as upstream's
//! importer reflects them after the typed fields it reads itself and before
//! the debug annotations: keys are the field paths (`chrome_user_event.
//! action_hash`, `android_view_dump.activity[0].name`). A few interned ids
//! are resolved instead of shown as numbers, as upstream overrides them: a
//! mojo method's native symbol (its mapping row and relative pc, named at
//! the end of the trace by the module symbols: `translation_table.rs`) and
//! the interned source locations of Chrome's scheduler messages.

use std::sync::OnceLock;

use prost_reflect::{DescriptorPool, MessageDescriptor};
use protozero::{Decoder, FieldValue};

use super::proto_to_args::{self, ArgSink, FlatValue, Options};
use super::winscope::SetSink;
use crate::hash::HashMap;
use crate::sequence_state::Generation;
use crate::storage::Storage;
use crate::storage::args::ArgSetBuilder;
use crate::tables::args::Arg;
use crate::tracker::stack_profile::StackProfileTracker;

/// TrackEvent and Chrome's extensions of it, as the schema pipeline
/// compiles them.
static DESCRIPTOR_SET: &[u8] = include_bytes!("../generated/track_event_descriptor.bin");

/// TrackEvent's fields reflected into args (the typed Chrome messages, the
/// inline and interned source location, the screenshot); the fields the
/// importer reads itself are left out, extensions are always read.
pub const REFLECTED_FIELDS: [u32; 17] = [
    24, 25, 26, 27, 28, 29, 32, 33, 34, 35, 38, 39, 40, 41, 43, 49, 50,
];

/// `InternedData`'s fields resolved here.
mod interned {
    pub const SOURCE_LOCATIONS: u32 = 4;
    pub const UNSYMBOLIZED_SOURCE_LOCATIONS: u32 = 28;
}

/// The flat keys of interned source locations resolved into
/// `<prefix>.file_name`, `.function_name` and `.line_number`: (flat key,
/// prefix).
const SOURCE_LOCATION_IIDS: [(&str, &str); 4] = [
    (
        "begin_impl_frame_args.current_args.source_location_iid",
        "begin_impl_frame_args.current_args",
    ),
    (
        "begin_impl_frame_args.last_args.source_location_iid",
        "begin_impl_frame_args.last_args",
    ),
    (
        "begin_frame_observer_state.last_begin_frame_args.source_location_iid",
        "begin_frame_observer_state.last_begin_frame_args",
    ),
    (
        "chrome_memory_pressure_notification.creation_location_iid",
        "chrome_memory_pressure_notification",
    ),
];

/// The flat key of a mojo method's interned unsymbolized location.
const MOJO_METHOD_IID: &str = "chrome_mojo_event_info.mojo_interface_method_iid";

/// The keys a mojo method's native symbol is stored under until the module
/// symbols name it.
pub const MOJO_MAPPING_ID_KEY: &str =
    "chrome_mojo_event_info.mojo_interface_method.native_symbol.mapping_id";
/// See [`MOJO_MAPPING_ID_KEY`].
pub const MOJO_REL_PC_KEY: &str =
    "chrome_mojo_event_info.mojo_interface_method.native_symbol.rel_pc";

/// The schema, decoded once (None if the embedded set were unreadable,
/// which the tests rule out).
pub fn pool() -> Option<&'static DescriptorPool> {
    static POOL: OnceLock<Option<DescriptorPool>> = OnceLock::new();
    POOL.get_or_init(|| DescriptorPool::decode(DESCRIPTOR_SET).ok())
        .as_ref()
}

/// TrackEvent's message in the schema.
fn track_event() -> Option<&'static MessageDescriptor> {
    static DESC: OnceLock<Option<MessageDescriptor>> = OnceLock::new();
    DESC.get_or_init(|| pool()?.get_message_by_name("perfetto.protos.TrackEvent"))
        .as_ref()
}

/// The flat keys of the pids of Chrome's active-process lists (the typed
/// field and ChromeTrackEvent's extension): added as args, and handed back.
const ACTIVE_PROCESS_PIDS: [&str; 2] = ["chrome_active_processes.pid", "active_processes.pid"];

/// What reflecting one event's bytes added, kept for the next events with
/// the same bytes: most events that have reflected fields repeat a few
/// (an interned source location's id), and the walk over the schema costs
/// far more than finding its result again. It also holds TrackEvent's
/// schema as the trace's own `extension_descriptor` packets extended it.
#[derive(Debug, Default)]
pub struct ReflectedCache {
    entries: HashMap<Box<[u8]>, Reflected>,
    /// TrackEvent with the extensions the trace declared (None: the
    /// embedded schema's).
    extended: Option<MessageDescriptor>,
}

impl ReflectedCache {
    /// Adds the files of an `ExtensionDescriptor` (its `extension_set`, a
    /// FileDescriptorSet) to the schema events are reflected by, as
    /// upstream's reader adds them: their extensions of TrackEvent become
    /// args under their names. A set that does not fit the schema is
    /// skipped; whether it was added.
    pub fn add_extensions(&mut self, descriptor: &[u8]) -> bool {
        use prost_reflect::prost::Message;
        use prost_reflect::prost_types::FileDescriptorSet;
        let Some(mut extended) = self
            .extended
            .as_ref()
            .map(|d| d.parent_pool().clone())
            .or_else(|| pool().cloned())
        else {
            return false;
        };
        // ExtensionDescriptor.extension_set (1).
        let sets = Decoder::new(descriptor)
            .map_while(Result::ok)
            .filter(|f| f.id == 1)
            .filter_map(|f| match f.value {
                FieldValue::Bytes(b) => Some(b),
                _ => None,
            });
        let mut known: Vec<String> = extended.files().map(|f| f.name().to_owned()).collect();
        let mut added = false;
        for bytes in sets {
            let Ok(mut set) = FileDescriptorSet::decode(bytes) else {
                continue;
            };
            // Names the files use are the schema's: each file may see every
            // file already known (the trace's files name no imports). A file
            // declared again (another app's copy of it) adds only what the
            // schema lacks, under a name of its own.
            for file in &mut set.file {
                hoist_nameless_messages(file);
                let package = file.package().to_owned();
                let full = |name: &str| {
                    if package.is_empty() {
                        name.to_owned()
                    } else {
                        format!("{package}.{name}")
                    }
                };
                if known.iter().any(|k| k == file.name()) {
                    let mut n = 2;
                    while known.contains(&format!("{}#{n}", file.name())) {
                        n += 1;
                    }
                    file.name = Some(format!("{}#{n}", file.name()));
                    file.extension
                        .retain(|e| extended.get_extension_by_name(&full(e.name())).is_none());
                    file.message_type
                        .retain(|m| extended.get_message_by_name(&full(m.name())).is_none());
                    file.enum_type
                        .retain(|e| extended.get_enum_by_name(&full(e.name())).is_none());
                }
                for name in &known {
                    if !file.dependency.contains(name) && file.name() != name {
                        file.dependency.push(name.clone());
                    }
                }
            }
            let mut next = extended.clone();
            if next.add_file_descriptor_protos(set.file).is_ok() {
                extended = next;
                added = true;
            }
            known = extended.files().map(|f| f.name().to_owned()).collect();
        }
        if added {
            self.extended = extended.get_message_by_name("perfetto.protos.TrackEvent");
            // Results reflected by the former schema no longer hold.
            self.entries.clear();
        }
        added
    }
}

/// Moves what a message type without a name declares (producers wrap
/// their extensions of TrackEvent in one, a scope that names nothing) up to
/// its file: an extension's name is then the extension's own, as upstream's
/// pool names it, and the schema accepts the file, which it refuses with a
/// nameless message in it.
fn hoist_nameless_messages(file: &mut prost_reflect::prost_types::FileDescriptorProto) {
    let mut i = 0;
    while i < file.message_type.len() {
        if file.message_type[i].name().is_empty() {
            let m = file.message_type.remove(i);
            file.extension.extend(m.extension);
            file.message_type.extend(m.nested_type);
            file.enum_type.extend(m.enum_type);
        } else {
            i += 1;
        }
    }
}

/// One cached result: the args in the order they were added, and the
/// active-process pids met.
#[derive(Debug)]
struct Reflected {
    args: Vec<Arg>,
    active_pids: Vec<i64>,
}

/// The most results kept (the cache starts over past it).
const MAX_CACHED: usize = 4096;

/// Adds the reflected fields of an event (`rest`: the last part of the
/// fields the loader left) to `args`; a field that does not fit its schema
/// counts a `track_event_parser_errors`. Returns the pids of the
/// active-process list the event holds (for `chrome_active_processes.rs`).
/// Called only for an event whose bytes hold a reflected field or an
/// extension (the loader's walk notes it: `FieldKinds::REFLECTED`); most
/// hold none. The result of bytes already reflected is taken from `cache`
/// when it depended on nothing but the bytes: no interned id was looked
/// up, no error, no arg replaced one added before.
pub fn add(
    storage: &mut Storage,
    stacks: &mut StackProfileTracker,
    cache: &mut ReflectedCache,
    args: &mut ArgSetBuilder,
    generation_idx: u32,
    generation: &Generation,
    rest: &[u8],
) -> Vec<i64> {
    if let Some(hit) = cache.entries.get(rest) {
        for a in &hit.args {
            args.add(a.flat_key, a.key, a.value);
        }
        return hit.active_pids.clone();
    }
    let Some(desc) = cache.extended.clone().or_else(|| track_event().cloned()) else {
        return Vec::new();
    };
    crate::packet_fields::count_extra_track_event_walk();
    let before = args.args().len();
    let mut sink = Sink {
        storage,
        stacks,
        args,
        generation_idx,
        generation,
        active_pids: Vec::new(),
        adds: 0,
        looked_up: false,
    };
    let options = Options {
        allowed_fields: Some(&REFLECTED_FIELDS),
        add_defaults: false,
    };
    let ok = proto_to_args::flatten(&desc, rest, options, &mut sink).is_ok();
    if !ok {
        sink.storage.stats.incr("track_event_parser_errors");
    }
    let added = sink.args.args().get(before..).unwrap_or(&[]);
    if ok && !sink.looked_up && added.len() == sink.adds {
        if cache.entries.len() >= MAX_CACHED {
            cache.entries.clear();
        }
        cache.entries.insert(
            rest.into(),
            Reflected {
                args: added.to_vec(),
                active_pids: sink.active_pids.clone(),
            },
        );
    }
    sink.active_pids
}

/// The event's arg set, with the interned ids upstream resolves.
struct Sink<'a> {
    storage: &'a mut Storage,
    stacks: &'a mut StackProfileTracker,
    args: &'a mut ArgSetBuilder,
    generation_idx: u32,
    generation: &'a Generation,
    /// The active-process list's pids met so far.
    active_pids: Vec<i64>,
    /// Args added (a replaced one included).
    adds: usize,
    /// Whether an interned id was looked up (the result then depends on
    /// the sequence's state, not only on the bytes).
    looked_up: bool,
}

impl Sink<'_> {
    fn put(&mut self, key: &str, value: FlatValue<'_>) {
        self.adds += 1;
        self.set_sink().add(key, key, value);
    }

    fn set_sink(&mut self) -> SetSink<'_> {
        SetSink {
            strings: &mut self.storage.strings,
            builder: self.args,
        }
    }

    /// An interned source location under `prefix`; false when the id
    /// resolves to nothing (the id itself is kept then).
    fn source_location(&mut self, prefix: &str, iid: u64) -> bool {
        let Some(bytes) = self.generation.interned(interned::SOURCE_LOCATIONS, iid) else {
            return false;
        };
        let d = Decoder::new(bytes);
        let text = |n| {
            d.find_last(n)
                .and_then(|f| f.as_bytes().ok())
                .map(|b| String::from_utf8_lossy(b).into_owned())
                .unwrap_or_default()
        };
        let file = text(2).replace('\\', "/");
        let function = text(3);
        self.put(&format!("{prefix}.file_name"), FlatValue::Str(file.into()));
        self.put(
            &format!("{prefix}.function_name"),
            FlatValue::Str(function.into()),
        );
        if let Some(line) = d.find_last(4).and_then(|f| f.as_u64().ok()) {
            let line = i64::from(line as u32);
            self.put(&format!("{prefix}.line_number"), FlatValue::Int(line));
        }
        true
    }

    /// A mojo method's interned unsymbolized location: its mapping's row
    /// and relative pc; false when either does not resolve.
    fn native_symbol(&mut self, iid: u64) -> bool {
        let Some(bytes) = self
            .generation
            .interned(interned::UNSYMBOLIZED_SOURCE_LOCATIONS, iid)
        else {
            return false;
        };
        let d = Decoder::new(bytes);
        let field = |n| d.find_last(n).and_then(|f| f.as_u64().ok()).unwrap_or(0);
        let (mapping_iid, rel_pc) = (field(2), field(3));
        let Some(mapping) = self.stacks.mapping_of_interned(
            self.storage,
            self.generation_idx,
            self.generation,
            mapping_iid,
        ) else {
            return false;
        };
        self.put(MOJO_MAPPING_ID_KEY, FlatValue::Uint(u64::from(mapping)));
        self.put(MOJO_REL_PC_KEY, FlatValue::Uint(rel_pc));
        true
    }
}

impl ArgSink for Sink<'_> {
    fn add(&mut self, flat_key: &str, key: &str, value: FlatValue<'_>) {
        self.adds += 1;
        self.set_sink().add(flat_key, key, value);
    }

    fn debug_annotation(&mut self, flat_key: &str, key: &str, bytes: &[u8]) -> bool {
        // Its name may be interned: the result is not kept for the bytes.
        self.looked_up = true;
        let a = zerotrace_protos::protos::DebugAnnotationDecoder::new(bytes);
        let mut arrays = super::debug_annotations::ArrayIndexes::default();
        if !super::debug_annotations::add_under(
            self.storage,
            self.args,
            &mut arrays,
            self.generation,
            &a,
            flat_key,
            key,
        ) {
            self.storage.stats.incr("track_event_parser_errors");
        }
        true
    }

    fn take_over(&mut self, flat_key: &str, _key: &str, value: FieldValue<'_>) -> bool {
        let FieldValue::Varint(iid) = value else {
            return false;
        };
        if ACTIVE_PROCESS_PIDS.contains(&flat_key) {
            // An int32: recorded, and added as an arg as any field.
            self.active_pids.push(i64::from(iid as u32 as i32));
            return false;
        }
        if flat_key == MOJO_METHOD_IID {
            self.looked_up = true;
            return self.native_symbol(iid);
        }
        match SOURCE_LOCATION_IIDS.iter().find(|(k, _)| *k == flat_key) {
            Some((_, prefix)) => {
                self.looked_up = true;
                self.source_location(prefix, iid)
            }
            None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schema_declares_track_event_and_chromes_extensions() {
        let desc = track_event().expect("TrackEvent in the schema");
        let mark = desc
            .extensions()
            .find(|e| e.name() == "chrome_hashed_performance_mark")
            .expect("ChromeTrackEvent's extension");
        assert!(mark.number() >= 1000);
        for n in [24, 28, 38, 50] {
            assert!(REFLECTED_FIELDS.contains(&n));
            assert!(desc.get_field(n).is_some(), "field {n}");
        }
    }

    /// The second event with the same bytes gets the same args from the
    /// cache, without a walk, replacing as the walk's adds would.
    #[test]
    fn bytes_reflected_again_give_the_same_args_without_a_walk() {
        use crate::packet_fields::extra_track_event_walks;
        use crate::storage::args::ArgValue;
        let mut storage = Storage::default();
        let mut stacks = StackProfileTracker::default();
        let mut cache = ReflectedCache::default();
        let generation = Generation::default();
        // source_location_iid = 5, as the SDK writes it.
        let bytes = [0x90, 0x02, 5];
        let mut run = |storage: &mut Storage, args: &mut ArgSetBuilder| {
            let before = extra_track_event_walks();
            add(
                storage,
                &mut stacks,
                &mut cache,
                args,
                0,
                &generation,
                &bytes,
            );
            extra_track_event_walks() - before
        };
        let mut first = ArgSetBuilder::default();
        assert_eq!(run(&mut storage, &mut first), 1);
        let key = storage
            .strings
            .find("source_location_iid")
            .expect("the key");
        assert_eq!(first.args().len(), 1);
        assert_eq!(first.args()[0].key, key);
        assert!(matches!(
            first.args()[0].value,
            ArgValue::Uint(5) | ArgValue::Int(5)
        ));
        let mut second = ArgSetBuilder::default();
        let other = storage.strings.intern("other");
        second.add(other, other, ArgValue::Int(1));
        second.add(key, key, ArgValue::Int(9));
        assert_eq!(run(&mut storage, &mut second), 0, "taken from the cache");
        assert_eq!(second.args().len(), 2);
        assert_eq!(second.args()[1].key, key);
        assert_eq!(second.args()[1].value, first.args()[0].value);
        // That set replaced an arg: its result is not kept, the next
        // plain one still comes from the cache.
        let mut third = ArgSetBuilder::default();
        assert_eq!(run(&mut storage, &mut third), 0);
        assert_eq!(third.args(), first.args());
    }

    /// A trace's `extension_descriptor` declares extensions of TrackEvent
    /// in a file that names no imports: events' fields of those numbers
    /// become args under the extensions' names, a repeated one indexed,
    /// and a set that does not fit the schema is skipped.
    #[test]
    fn extensions_the_trace_declares_are_reflected_by_name() {
        use prost_reflect::prost::Message;
        use prost_reflect::prost_types::{
            DescriptorProto, FieldDescriptorProto, FileDescriptorProto, FileDescriptorSet,
            field_descriptor_proto::{Label, Type},
        };
        let ext = |name: &str, number: i32, ty: Type, label: Label| FieldDescriptorProto {
            name: Some(name.into()),
            number: Some(number),
            r#type: Some(ty as i32),
            label: Some(label as i32),
            extendee: Some(".perfetto.protos.TrackEvent".into()),
            ..Default::default()
        };
        let set = FileDescriptorSet {
            file: vec![FileDescriptorProto {
                name: Some("trace_extensions.proto".into()),
                package: Some("perfetto.protos".into()),
                extension: vec![
                    ext("int_ext", 9901, Type::Int32, Label::Repeated),
                    ext("str_ext", 9900, Type::String, Label::Optional),
                    FieldDescriptorProto {
                        type_name: Some(".perfetto.protos.Child".into()),
                        ..ext("nested_ext", 9903, Type::Message, Label::Optional)
                    },
                ],
                // A message whose DebugAnnotation field is read as debug
                // annotations, keyed by their names.
                message_type: vec![DescriptorProto {
                    name: Some("Child".into()),
                    field: vec![FieldDescriptorProto {
                        name: Some("annotations".into()),
                        number: Some(99),
                        r#type: Some(Type::Message as i32),
                        label: Some(Label::Repeated as i32),
                        type_name: Some(".perfetto.protos.DebugAnnotation".into()),
                        ..Default::default()
                    }],
                    ..Default::default()
                }],
                ..Default::default()
            }],
        };
        // ExtensionDescriptor.extension_set = 1.
        let mut descriptor = vec![0x0a];
        let body = set.encode_to_vec();
        let mut len = [0u8; 10];
        let n = protozero::varint::encode_varint(body.len() as u64, &mut len);
        descriptor.extend_from_slice(&len[..n]);
        descriptor.extend_from_slice(&body);
        let mut cache = ReflectedCache::default();
        assert!(!cache.add_extensions(&[0x0a, 0x02, 0xff, 0xff]));
        assert!(cache.add_extensions(&descriptor));
        let mut storage = Storage::default();
        let mut stacks = StackProfileTracker::default();
        let generation = Generation::default();
        let mut args = ArgSetBuilder::default();
        // Field 9901 (varint) 42 and 1337, field 9900 "s", field 9903 a
        // Child holding the annotation {name "a", string_value "v"}.
        let bytes = [
            0xe8, 0xea, 0x04, 42, 0xe8, 0xea, 0x04, 0xb9, 0x0a, 0xe2, 0xea, 0x04, 1, b's', 0xfa,
            0xea, 0x04, 9, 0x9a, 0x06, 6, 0x52, 1, b'a', 0x32, 1, b'v',
        ];
        add(
            &mut storage,
            &mut stacks,
            &mut cache,
            &mut args,
            0,
            &generation,
            &bytes,
        );
        let got: Vec<String> = args
            .args()
            .iter()
            .map(|a| storage.strings.get(a.key).unwrap_or_default().to_owned())
            .collect();
        assert_eq!(got, ["int_ext[0]", "int_ext[1]", "str_ext", "nested_ext.a"]);
    }

    /// Extensions a producer wraps in a message type without a name are
    /// declared by their own names, and the set is accepted (the schema
    /// refuses a nameless message type).
    #[test]
    fn extensions_in_a_nameless_message_are_the_files() {
        use prost_reflect::prost::Message;
        use prost_reflect::prost_types::{
            DescriptorProto, FieldDescriptorProto, FileDescriptorProto, FileDescriptorSet,
            field_descriptor_proto::{Label, Type},
        };
        let set = FileDescriptorSet {
            file: vec![FileDescriptorProto {
                name: Some("wrapped_extensions.proto".into()),
                package: Some("perfetto.protos".into()),
                message_type: vec![DescriptorProto {
                    extension: vec![FieldDescriptorProto {
                        name: Some("wrapped_ext".into()),
                        number: Some(9950),
                        r#type: Some(Type::String as i32),
                        label: Some(Label::Optional as i32),
                        extendee: Some(".perfetto.protos.TrackEvent".into()),
                        ..Default::default()
                    }],
                    ..Default::default()
                }],
                ..Default::default()
            }],
        };
        let body = set.encode_to_vec();
        let mut descriptor = vec![0x0a];
        let mut len = [0u8; 10];
        let n = protozero::varint::encode_varint(body.len() as u64, &mut len);
        descriptor.extend_from_slice(&len[..n]);
        descriptor.extend_from_slice(&body);
        let mut cache = ReflectedCache::default();
        assert!(cache.add_extensions(&descriptor));
        let extended = cache.extended.as_ref().expect("extended");
        assert!(
            extended
                .parent_pool()
                .get_extension_by_name("perfetto.protos.wrapped_ext")
                .is_some()
        );
    }
}

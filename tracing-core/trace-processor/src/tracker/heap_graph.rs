//! Java heap graphs as ART writes them: a dump spread over many packets of
//! one sequence (objects, their classes, field and location names interned
//! per dump, and roots), each part possibly naming what a later part
//! defines. This tracker keeps one dump per sequence open, fills the
//! `heap_graph_object`, `heap_graph_class` and `heap_graph_reference` rows
//! as objects arrive, and when the dump ends resolves what was deferred
//! (sizes and field names from the classes), marks the roots and what they
//! reach, links superclasses, adds the native sizes that cleaners hold and
//! writes the dump's `heap_graph` row. Ids are row indices, in upstream's
//! order of insertion.

use std::collections::BTreeMap;

use crate::column_store::strings::StrId;
use crate::hash::HashMap;
use crate::storage::Storage;
use crate::storage::profiling_rows::{
    HeapGraphClassRow, HeapGraphObjectDataRow, HeapGraphObjectRow, HeapGraphPrimitiveRow,
    HeapGraphReferenceRow, HeapGraphRow,
};

/// `HeapGraphRoot.Type` names, by value.
const ROOT_TYPES: [&str; 15] = [
    "ROOT_UNKNOWN",
    "ROOT_JNI_GLOBAL",
    "ROOT_JNI_LOCAL",
    "ROOT_JAVA_FRAME",
    "ROOT_NATIVE_STACK",
    "ROOT_STICKY_CLASS",
    "ROOT_THREAD_BLOCK",
    "ROOT_MONITOR_USED",
    "ROOT_THREAD_OBJECT",
    "ROOT_INTERNED_STRING",
    "ROOT_FINALIZING",
    "ROOT_DEBUGGER",
    "ROOT_REFERENCE_CLEANUP",
    "ROOT_VM_INTERNAL",
    "ROOT_JNI_MONITOR",
];

/// `ROOT_VM_INTERNAL`: the objects of the zygote and boot image heaps.
const ROOT_VM_INTERNAL: u64 = 13;

/// `HeapGraphType.Kind` names, by value.
const KINDS: [&str; 12] = [
    "KIND_UNKNOWN",
    "KIND_NORMAL",
    "KIND_NOREFERENCES",
    "KIND_STRING",
    "KIND_ARRAY",
    "KIND_CLASS",
    "KIND_CLASSLOADER",
    "KIND_DEXCACHE",
    "KIND_SOFT_REFERENCE",
    "KIND_WEAK_REFERENCE",
    "KIND_FINALIZER_REFERENCE",
    "KIND_PHANTOM_REFERENCE",
];

/// `HeapGraphObject.HeapType` names, by value.
const HEAP_TYPES: [&str; 4] = [
    "HEAP_TYPE_UNKNOWN",
    "HEAP_TYPE_APP",
    "HEAP_TYPE_ZYGOTE",
    "HEAP_TYPE_BOOT_IMAGE",
];

/// Root kinds that win when an object is a root more than once, best
/// first (sticky class, JNI global, JNI local); any other ranks after.
const ROOT_PRECEDENCE: [&str; 3] = ["ROOT_STICKY_CLASS", "ROOT_JNI_GLOBAL", "ROOT_JNI_LOCAL"];

/// The name of a root kind (unknown values are `ROOT_UNKNOWN`).
pub fn root_type_name(value: u64) -> &'static str {
    ROOT_TYPES
        .get(value as usize)
        .copied()
        .unwrap_or(ROOT_TYPES[0])
}

/// The name of a class kind (unknown values are `KIND_UNKNOWN`).
pub fn kind_name(value: u64) -> &'static str {
    KINDS.get(value as usize).copied().unwrap_or(KINDS[0])
}

/// A Java type name taken apart: `java.lang.Class<a.B[][]>` is the class
/// object of `a.B` with two array levels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NormalizedType<'a> {
    /// The element class's name.
    pub name: &'a str,
    /// Whether the name was `java.lang.Class<...>`.
    pub is_static_class: bool,
    /// How many `[]` followed the name.
    pub arrays: usize,
}

/// Takes a Java type name apart (see [`NormalizedType`]).
pub fn normalize_type(name: &str) -> NormalizedType<'_> {
    let inner = name
        .strip_prefix("java.lang.Class<")
        .and_then(|r| r.strip_suffix('>'));
    let base = inner.unwrap_or(name);
    let mut rest = base;
    let mut arrays = 0;
    while let Some(r) = rest.strip_suffix("[]") {
        rest = r;
        arrays += 1;
    }
    NormalizedType {
        name: rest,
        is_static_class: inner.is_some(),
        arrays,
    }
}

/// Puts a (deobfuscated) element name back in a taken-apart type's shape.
pub fn denormalize_type(t: &NormalizedType<'_>, name: &str) -> String {
    let mut out = name.to_owned();
    for _ in 0..t.arrays {
        out.push_str("[]");
    }
    if t.is_static_class {
        out = format!("java.lang.Class<{out}>");
    }
    out
}

/// One object as a packet gives it.
#[derive(Debug, Default)]
pub struct SourceObject {
    /// The object's id in the dump.
    pub object_id: u64,
    /// Bytes (0: the class's size).
    pub self_size: u64,
    /// The class's id in the dump.
    pub type_id: u64,
    /// `HeapGraphObject.HeapType`.
    pub heap_type: u64,
    /// Field name ids of the references (empty: the class says).
    pub field_name_ids: Vec<u64>,
    /// Objects referred to (0: null).
    pub referred_objects: Vec<u64>,
    /// Objects the runtime keeps for this one.
    pub runtime_internal_objects: Vec<u64>,
    /// `NativeAllocationRegistry.size` when the object is one.
    pub native_allocation_registry_size: Option<i64>,
    /// `Bitmap.mId`.
    pub bitmap_id: Option<i64>,
    /// `Bitmap.mSourceId`.
    pub bitmap_source_id: Option<i64>,
    /// `Bitmap.mWidth`.
    pub bitmap_width: Option<u32>,
    /// `Bitmap.mHeight`.
    pub bitmap_height: Option<u32>,
}

/// One class as a packet gives it.
#[derive(Debug, Default, Clone)]
pub struct InternedType {
    /// The class name.
    pub name: StrId,
    /// Its location's interned id.
    pub location_id: Option<u64>,
    /// Size of its instances.
    pub object_size: u64,
    /// Its own reference fields' name ids, in order.
    pub field_name_ids: Vec<u64>,
    /// Its superclass's id (0: none).
    pub superclass_id: u64,
    /// Its class loader's object id (0: none).
    pub classloader_id: u64,
    /// Whether its instances have no reference fields.
    pub no_fields: bool,
    /// `HeapGraphType.Kind`.
    pub kind: u64,
}

/// One open dump of a sequence.
#[derive(Debug, Default)]
struct Sequence {
    upid: u32,
    ts: i64,
    last_object_id: u64,
    last_heap_type: u64,
    roots: Vec<(u64, Vec<u64>)>,
    internal_vm_roots: Vec<u64>,
    types: BTreeMap<u64, InternedType>,
    locations: BTreeMap<u64, StrId>,
    object_rows: HashMap<u64, u32>,
    type_rows: HashMap<u64, u32>,
    refs_for_field_id: BTreeMap<u64, Vec<u32>>,
    fields: HashMap<u64, (StrId, StrId)>,
    deferred_refs: BTreeMap<u32, Vec<u32>>,
    deferred_sizes: BTreeMap<u32, Vec<u32>>,
    prev_index: Option<u64>,
    nar_sizes: BTreeMap<u32, i64>,
    truncated: bool,
    heap_size: Option<i64>,
}

/// The open dumps, and what deobfuscation looks rows up by.
#[derive(Debug, Default)]
pub struct HeapGraphTracker {
    seqs: BTreeMap<u32, Sequence>,
    /// (the class's package when known, its element name) → class rows.
    pub class_rows: HashMap<(Option<String>, String), Vec<u32>>,
    /// A field's name → the reference rows through that field.
    pub field_rows: HashMap<StrId, Vec<u32>>,
}

/// The package of a class location or mapping path, when it names one.
pub type PackageOf = fn(&str) -> Option<String>;

impl HeapGraphTracker {
    fn seq(&mut self, seq: u32) -> &mut Sequence {
        self.seqs.entry(seq).or_default()
    }

    /// The last object id of the sequence (for `id_delta`).
    pub fn last_object_id(&mut self, seq: u32) -> u64 {
        self.seq(seq).last_object_id
    }

    /// The last object's heap type (objects without one repeat it).
    pub fn last_heap_type(&mut self, seq: u32) -> u64 {
        self.seq(seq).last_heap_type
    }

    /// Notes a packet's index: a gap marks the dump truncated.
    pub fn set_packet_index(&mut self, storage: &mut Storage, seq: u32, index: u64) {
        let s = self.seq(seq);
        let dropped = match s.prev_index {
            None => index != 0,
            Some(prev) => prev.wrapping_add(1) != index,
        };
        if dropped {
            s.truncated = true;
            let upid = i64::from(s.upid);
            storage
                .stats
                .add_indexed("heap_graph_missing_packet", upid, 1);
        }
        self.seq(seq).prev_index = Some(index);
    }

    /// The heap's allocated bytes.
    pub fn set_heap_size(&mut self, seq: u32, size: i64) {
        self.seq(seq).heap_size = Some(size);
    }

    /// Whether a part of (upid, ts) may join the sequence's open dump.
    fn claim(storage: &mut Storage, s: &mut Sequence, upid: u32, ts: i64) -> bool {
        if (s.upid != 0 && s.upid != upid) || (s.ts != 0 && s.ts != ts) {
            storage.stats.incr("heap_graph_non_finalized_graph");
            return false;
        }
        s.upid = upid;
        s.ts = ts;
        true
    }

    fn object_row(storage: &mut Storage, s: &mut Sequence, object_id: u64) -> u32 {
        if let Some(&row) = s.object_rows.get(&object_id) {
            return row;
        }
        let objects = &mut storage.profiling.heap_graph_objects;
        let row = objects.len() as u32;
        objects.push(HeapGraphObjectRow {
            upid: s.upid,
            graph_sample_ts: s.ts,
            self_size: -1,
            root_distance: -1,
            ..Default::default()
        });
        s.object_rows.insert(object_id, row);
        row
    }

    fn type_row(storage: &mut Storage, s: &mut Sequence, type_id: u64) -> u32 {
        if let Some(&row) = s.type_rows.get(&type_id) {
            return row;
        }
        let classes = &mut storage.profiling.heap_graph_classes;
        let row = classes.len() as u32;
        classes.push(HeapGraphClassRow::default());
        s.type_rows.insert(type_id, row);
        row
    }

    /// Adds one object of the dump at (upid, ts).
    pub fn add_object(
        &mut self,
        storage: &mut Storage,
        seq: u32,
        upid: u32,
        ts: i64,
        obj: SourceObject,
    ) {
        let s = self.seqs.entry(seq).or_default();
        if !Self::claim(storage, s, upid, ts) {
            return;
        }
        s.last_object_id = obj.object_id;
        s.last_heap_type = obj.heap_type;
        let owner = Self::object_row(storage, s, obj.object_id);
        let type_row = Self::type_row(storage, s, obj.type_id);
        let heap_type = if obj.heap_type != 0 {
            let name = HEAP_TYPES
                .get(obj.heap_type as usize)
                .copied()
                .unwrap_or("HEAP_TYPE_UNKNOWN");
            if obj.heap_type == 2 || obj.heap_type == 3 {
                s.internal_vm_roots.push(obj.object_id);
            }
            storage.strings.intern(name)
        } else {
            StrId::NULL
        };
        if let Some(o) = storage.profiling.heap_graph_objects.get_mut(owner as usize) {
            o.self_size = obj.self_size as i64;
            o.type_id = type_row;
            if heap_type != StrId::NULL {
                o.heap_type = heap_type;
            }
        }
        if obj.self_size == 0 {
            s.deferred_sizes.entry(type_row).or_default().push(owner);
        }
        let set = storage.profiling.heap_graph_references.len() as u32;
        let mut any_refs = false;
        let mut any_native = false;
        for (i, &owned) in obj.referred_objects.iter().enumerate() {
            let owned_id = (owned != 0).then(|| Self::object_row(storage, s, owned));
            let refs = &mut storage.profiling.heap_graph_references;
            let row = refs.len() as u32;
            refs.push(HeapGraphReferenceRow {
                reference_set_id: set,
                owner_id: owner,
                owned_id,
                ..Default::default()
            });
            if let Some(&field) = obj.field_name_ids.get(i) {
                s.refs_for_field_id.entry(field).or_default().push(row);
            }
            any_refs = true;
        }
        if !obj.runtime_internal_objects.is_empty() {
            let name = storage.strings.intern("runtimeInternalObjects");
            for &owned in &obj.runtime_internal_objects {
                let owned_id = Self::object_row(storage, s, owned);
                storage
                    .profiling
                    .heap_graph_references
                    .push(HeapGraphReferenceRow {
                        reference_set_id: set,
                        owner_id: owner,
                        owned_id: Some(owned_id),
                        field_name: name,
                        ..Default::default()
                    });
                any_native = true;
            }
        }
        if any_refs || any_native {
            if let Some(o) = storage.profiling.heap_graph_objects.get_mut(owner as usize) {
                o.reference_set_id = Some(set);
            }
        }
        if any_refs && obj.field_name_ids.is_empty() {
            s.deferred_refs.entry(type_row).or_default().push(owner);
        }
        if let Some(size) = obj.native_allocation_registry_size {
            s.nar_sizes.insert(owner, size);
        }
        add_bitmap_fields(storage, owner, &obj);
    }

    /// Adds a root set of the dump at (upid, ts).
    pub fn add_root(
        &mut self,
        storage: &mut Storage,
        seq: u32,
        upid: u32,
        ts: i64,
        root_type: u64,
        object_ids: Vec<u64>,
    ) {
        let s = self.seqs.entry(seq).or_default();
        if !Self::claim(storage, s, upid, ts) {
            return;
        }
        s.roots.push((root_type, object_ids));
    }

    /// Interns a location name.
    pub fn add_location(&mut self, seq: u32, id: u64, name: StrId) {
        self.seq(seq).locations.insert(id, name);
    }

    /// Interns a class.
    pub fn add_type(&mut self, seq: u32, id: u64, t: InternedType) {
        self.seq(seq).types.insert(id, t);
    }

    /// Interns a field name (`type name`), naming the references already
    /// made through it.
    pub fn add_field_name(&mut self, storage: &mut Storage, seq: u32, id: u64, text: &str) {
        let (ty, name) = match text.find(' ') {
            Some(space) => (&text[..space], &text[space + 1..]),
            None => ("", text),
        };
        // Empty text is NULL, as in upstream's string pool.
        let name = storage
            .strings
            .intern_opt(Some(name).filter(|t| !t.is_empty()));
        let ty = storage
            .strings
            .intern_opt(Some(ty).filter(|t| !t.is_empty()));
        let s = self.seqs.entry(seq).or_default();
        s.fields.insert(id, (name, ty));
        if let Some(rows) = s.refs_for_field_id.get(&id) {
            for &row in rows {
                if let Some(r) = storage
                    .profiling
                    .heap_graph_references
                    .get_mut(row as usize)
                {
                    r.field_name = name;
                    r.field_type_name = ty;
                }
                self.field_rows.entry(name).or_default().push(row);
            }
        }
    }

    /// Ends every dump still open (the trace ended inside them).
    pub fn finalize_all(&mut self, storage: &mut Storage, package_of: PackageOf) {
        if self.seqs.is_empty() {
            return;
        }
        storage.stats.incr("heap_graph_non_finalized_graph");
        let seqs: Vec<u32> = self.seqs.keys().copied().collect();
        for seq in seqs {
            self.finalize(storage, seq, package_of);
        }
    }

    /// Ends the sequence's dump: resolves what waited for its classes,
    /// marks roots and reachability, links superclasses, adds native sizes
    /// and writes its `heap_graph` row.
    pub fn finalize(&mut self, storage: &mut Storage, seq: u32, package_of: PackageOf) {
        let Some(mut s) = self.seqs.remove(&seq) else {
            return;
        };
        let upid = i64::from(s.upid);
        let types = std::mem::take(&mut s.types);
        for (&id, t) in &types {
            let mut location = None;
            if let Some(loc) = t.location_id {
                match s.locations.get(&loc) {
                    Some(&name) => location = Some(name),
                    None => storage
                        .stats
                        .add_indexed("heap_graph_invalid_string_id", upid, 1),
                }
            }
            let class = Self::type_row(storage, &mut s, id);
            if let Some(rows) = s.deferred_sizes.remove(&class) {
                for row in rows {
                    if let Some(o) = storage.profiling.heap_graph_objects.get_mut(row as usize) {
                        o.self_size = t.object_size as i64;
                    }
                }
            }
            if let Some(rows) = s.deferred_refs.remove(&class) {
                if !t.no_fields {
                    for row in rows {
                        self.name_fields(storage, &s, &types, t, row);
                    }
                }
            }
            let classloader = (t.classloader_id != 0)
                .then(|| Self::object_row(storage, &mut s, t.classloader_id));
            let kind = storage.strings.intern(kind_name(t.kind));
            if let Some(c) = storage.profiling.heap_graph_classes.get_mut(class as usize) {
                c.name = t.name;
                if classloader.is_some() {
                    c.classloader_id = classloader;
                }
                if let Some(l) = location {
                    c.location = l;
                }
                c.kind = kind;
            }
            let name = storage.strings.get(t.name).unwrap_or("");
            let normalized = normalize_type(name).name.to_owned();
            let package = location
                .and_then(|l| storage.strings.get(l))
                .and_then(package_of)
                .or_else(|| app_package(storage, s.upid));
            self.class_rows
                .entry((package, normalized))
                .or_default()
                .push(class);
        }
        if !s.deferred_sizes.is_empty() || !s.deferred_refs.is_empty() {
            storage
                .stats
                .add_indexed("heap_graph_malformed_packet", upid, 1);
        }
        let vm_roots = std::mem::take(&mut s.internal_vm_roots);
        s.roots.push((ROOT_VM_INTERNAL, vm_roots));
        for (root_type, ids) in &s.roots {
            let name = storage.strings.intern(root_type_name(*root_type));
            for id in ids {
                if let Some(&row) = s.object_rows.get(id) {
                    mark_root(storage, row, name);
                }
            }
        }
        link_superclasses(storage, s.upid, s.ts);
        add_native_sizes(storage, &s);
        let existing = storage
            .profiling
            .heap_graphs
            .iter()
            .position(|g| g.upid == s.upid && g.ts == s.ts);
        match existing {
            Some(i) => {
                if let Some(g) = storage.profiling.heap_graphs.get_mut(i) {
                    if s.heap_size.is_some() {
                        g.heap_size = s.heap_size;
                    }
                    if s.truncated {
                        g.truncated = Some(true);
                    }
                }
            }
            None => storage.profiling.heap_graphs.push(HeapGraphRow {
                ts: s.ts,
                upid: s.upid,
                dump_reason: StrId::NULL,
                heap_size: s.heap_size,
                truncated: Some(s.truncated),
            }),
        }
    }

    /// Names the references of an object whose packet left their fields to
    /// its class: the class's fields first, then its superclasses'.
    fn name_fields(
        &mut self,
        storage: &mut Storage,
        s: &Sequence,
        types: &BTreeMap<u64, InternedType>,
        class: &InternedType,
        object: u32,
    ) {
        let Some(set) = storage
            .profiling
            .heap_graph_objects
            .get(object as usize)
            .and_then(|o| o.reference_set_id)
        else {
            return;
        };
        let upid = i64::from(s.upid);
        let mut current = Some(class);
        let mut offset = 0usize;
        let mut row = set as usize;
        while storage
            .profiling
            .heap_graph_references
            .get(row)
            .is_some_and(|r| r.reference_set_id == set)
        {
            while let Some(t) = current {
                if offset < t.field_name_ids.len() {
                    break;
                }
                offset -= t.field_name_ids.len();
                current = if t.superclass_id != 0 {
                    types.get(&t.superclass_id)
                } else {
                    None
                };
                if current.is_none() {
                    storage
                        .stats
                        .add_indexed("heap_graph_malformed_packet", upid, 1);
                }
            }
            let Some(t) = current else {
                return;
            };
            let Some(&field) = t.field_name_ids.get(offset) else {
                return;
            };
            offset += 1;
            match s.fields.get(&field) {
                Some(&(name, ty)) => {
                    if let Some(r) = storage.profiling.heap_graph_references.get_mut(row) {
                        r.field_name = name;
                        r.field_type_name = ty;
                    }
                    self.field_rows.entry(name).or_default().push(row as u32);
                }
                None => storage
                    .stats
                    .add_indexed("heap_graph_malformed_packet", upid, 1),
            }
            row += 1;
        }
    }
}

/// The package (`package_list`) whose uid is the process's app id.
pub fn app_package(storage: &Storage, upid: u32) -> Option<String> {
    let appid = storage.processes.get(upid as usize)?.android_appid?;
    storage
        .android
        .packages
        .iter()
        .find(|pk| pk.uid == appid)
        .and_then(|pk| storage.strings.get(pk.package_name))
        .map(str::to_owned)
}

/// Adds the primitive fields a packet gives for a `Bitmap` object.
fn add_bitmap_fields(storage: &mut Storage, owner: u32, obj: &SourceObject) {
    let fields: [(&str, &str, Option<i64>, bool); 4] = [
        ("android.graphics.Bitmap.mId", "long", obj.bitmap_id, true),
        (
            "android.graphics.Bitmap.mSourceId",
            "long",
            obj.bitmap_source_id,
            true,
        ),
        (
            "android.graphics.Bitmap.mWidth",
            "int",
            obj.bitmap_width.map(i64::from),
            false,
        ),
        (
            "android.graphics.Bitmap.mHeight",
            "int",
            obj.bitmap_height.map(i64::from),
            false,
        ),
    ];
    if fields.iter().all(|f| f.2.is_none()) {
        return;
    }
    let set = storage.profiling.heap_graph_primitives.len() as u32;
    for (name, ty, value, long) in fields {
        let Some(v) = value else {
            continue;
        };
        let field_name = storage.strings.intern(name);
        let field_type = storage.strings.intern(ty);
        storage
            .profiling
            .heap_graph_primitives
            .push(HeapGraphPrimitiveRow {
                field_set_id: set,
                field_name,
                field_type,
                long_value: long.then_some(v),
                int_value: (!long).then_some(v),
                ..Default::default()
            });
    }
    let data = storage.profiling.heap_graph_object_data.len() as u32;
    storage
        .profiling
        .heap_graph_object_data
        .push(HeapGraphObjectDataRow {
            field_set_id: Some(set),
            ..Default::default()
        });
    if let Some(o) = storage.profiling.heap_graph_objects.get_mut(owner as usize) {
        o.object_data_id = Some(data);
    }
}

mod end_passes;

use end_passes::{add_native_sizes, link_superclasses, mark_root};

#[cfg(test)]
mod tests {
    use super::{denormalize_type, normalize_type};

    #[test]
    fn type_names_come_apart_and_back() {
        let t = normalize_type("java.lang.Class<a.B[][]>");
        assert_eq!(t.name, "a.B");
        assert!(t.is_static_class);
        assert_eq!(t.arrays, 2);
        assert_eq!(denormalize_type(&t, "x.Y"), "java.lang.Class<x.Y[][]>");
        let t = normalize_type("a[]");
        assert_eq!((t.name, t.is_static_class, t.arrays), ("a", false, 1));
    }
}

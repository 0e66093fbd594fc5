//! The passes over a Java heap dump once it has ended: which root kind
//! wins for an object named by several (upstream's precedence), marking
//! the roots and everything they reach, the references an object holds,
//! linking each class to its superclass, and adding the native sizes that
//! `Cleaner`s hold to the objects they clean. The assembly of the dump's
//! rows as its packets arrive is the parent module.

use super::*;

/// The rank of a root kind (lower wins).
pub(super) fn rank(storage: &Storage, root_type: StrId) -> usize {
    let name = storage.strings.get(root_type).unwrap_or("");
    ROOT_PRECEDENCE
        .iter()
        .position(|p| *p == name)
        .unwrap_or(ROOT_PRECEDENCE.len())
}

/// The references of an object's set, as rows of the reference table.
pub(super) fn reference_rows(storage: &Storage, object: u32) -> std::ops::Range<usize> {
    let refs = &storage.profiling.heap_graph_references;
    let Some(set) = storage
        .profiling
        .heap_graph_objects
        .get(object as usize)
        .and_then(|o| o.reference_set_id)
    else {
        return 0..0;
    };
    let start = set as usize;
    let mut end = start;
    while refs.get(end).is_some_and(|r| r.reference_set_id == set) {
        end += 1;
    }
    start..end
}

/// The objects an object keeps alive: its references, without the
/// referent of a weak, finalizer or phantom reference; sorted, once each.
pub(super) fn children(storage: &Storage, object: u32) -> Vec<u32> {
    let weak = storage
        .profiling
        .heap_graph_objects
        .get(object as usize)
        .and_then(|o| storage.profiling.heap_graph_classes.get(o.type_id as usize))
        .and_then(|c| storage.strings.get(c.kind))
        .is_some_and(|k| {
            matches!(
                k,
                "KIND_WEAK_REFERENCE" | "KIND_FINALIZER_REFERENCE" | "KIND_PHANTOM_REFERENCE"
            )
        });
    let referent = storage.strings.find("java.lang.ref.Reference.referent");
    let mut out = Vec::new();
    for row in reference_rows(storage, object) {
        let Some(r) = storage.profiling.heap_graph_references.get(row) else {
            continue;
        };
        let Some(owned) = r.owned_id else {
            continue;
        };
        if weak && Some(r.field_name) == referent {
            continue;
        }
        out.push(owned);
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// Makes an object a root of a kind (the better kind when it already is
/// one) and, the first time, marks what it reaches reachable.
pub(super) fn mark_root(storage: &mut Storage, row: u32, root_type: StrId) {
    let Some(current) = storage
        .profiling
        .heap_graph_objects
        .get(row as usize)
        .map(|o| o.root_type)
    else {
        return;
    };
    if current != StrId::NULL {
        if rank(storage, root_type) < rank(storage, current) {
            if let Some(o) = storage.profiling.heap_graph_objects.get_mut(row as usize) {
                o.root_type = root_type;
            }
        }
        return;
    }
    if let Some(o) = storage.profiling.heap_graph_objects.get_mut(row as usize) {
        o.root_type = root_type;
    }
    let mut stack = vec![row];
    while let Some(node) = stack.pop() {
        let Some(o) = storage.profiling.heap_graph_objects.get_mut(node as usize) else {
            continue;
        };
        if o.reachable != 0 {
            continue;
        }
        o.reachable = 1;
        stack.extend(children(storage, node));
    }
}

/// The object an object's field refers to.
pub(super) fn referred_by_field(storage: &Storage, object: u32, field: StrId) -> Option<u32> {
    reference_rows(storage, object)
        .filter_map(|row| storage.profiling.heap_graph_references.get(row))
        .find(|r| r.field_name == field)
        .and_then(|r| r.owned_id)
}

/// (class name, location) of an object's class.
pub(super) fn class_of(storage: &Storage, object: u32) -> Option<(StrId, StrId)> {
    let o = storage.profiling.heap_graph_objects.get(object as usize)?;
    let c = storage
        .profiling
        .heap_graph_classes
        .get(o.type_id as usize)?;
    Some((c.name, c.location))
}

/// Links each class to its superclass, read from the class objects'
/// `java.lang.Class.superClass` fields in the dump at (upid, ts).
pub(super) fn link_superclasses(storage: &mut Storage, upid: u32, ts: i64) {
    let Some(super_field) = storage.strings.find("java.lang.Class.superClass") else {
        return;
    };
    // (class name, location) → (superclass name, location).
    let mut supers: HashMap<(String, StrId), (String, StrId)> = HashMap::default();
    for i in 0..storage.profiling.heap_graph_objects.len() {
        let o = &storage.profiling.heap_graph_objects[i];
        if o.upid != upid || o.graph_sample_ts != ts {
            continue;
        }
        let Some((name, location)) = class_of(storage, i as u32) else {
            continue;
        };
        let n = normalize_type(storage.strings.get(name).unwrap_or(""));
        if !n.is_static_class || n.arrays > 0 {
            continue;
        }
        let Some(sup) = referred_by_field(storage, i as u32, super_field) else {
            continue;
        };
        let Some((sup_name, sup_location)) = class_of(storage, sup) else {
            continue;
        };
        let sup_name = normalize_type(storage.strings.get(sup_name).unwrap_or(""))
            .name
            .to_owned();
        supers.insert((n.name.to_owned(), location), (sup_name, sup_location));
    }
    if supers.is_empty() {
        return;
    }
    let mut ids: HashMap<(&str, StrId), u32> = HashMap::default();
    for (i, c) in storage.profiling.heap_graph_classes.iter().enumerate() {
        ids.insert(
            (storage.strings.get(c.name).unwrap_or(""), c.location),
            i as u32,
        );
    }
    let mut links = Vec::new();
    for (i, c) in storage.profiling.heap_graph_classes.iter().enumerate() {
        let n = normalize_type(storage.strings.get(c.name).unwrap_or(""));
        if n.is_static_class || n.arrays > 0 {
            continue;
        }
        let Some((sup, sup_location)) = supers.get(&(n.name.to_owned(), c.location)) else {
            continue;
        };
        if let Some(&id) = ids.get(&(sup.as_str(), *sup_location)) {
            links.push((i, id));
        }
    }
    for (i, id) in links {
        if let Some(c) = storage.profiling.heap_graph_classes.get_mut(i) {
            c.superclass_id = Some(id);
        }
    }
}

/// Adds to each object the native bytes its cleaners' registries hold.
pub(super) fn add_native_sizes(storage: &mut Storage, s: &Sequence) {
    if s.nar_sizes.is_empty() {
        return;
    }
    let find = |storage: &Storage, t: &str| storage.strings.find(t);
    let (Some(referent), Some(thunk), Some(this0)) = (
        find(storage, "java.lang.ref.Reference.referent"),
        find(storage, "sun.misc.Cleaner.thunk"),
        find(
            storage,
            "libcore.util.NativeAllocationRegistry$CleanerThunk.this$0",
        ),
    ) else {
        return;
    };
    let next = find(storage, "sun.misc.Cleaner.next");
    let Some(cleaner_name) = find(storage, "sun.misc.Cleaner") else {
        return;
    };
    let mut cleaners = Vec::new();
    for (class_id, c) in storage.profiling.heap_graph_classes.iter().enumerate() {
        if c.name != cleaner_name {
            continue;
        }
        for (i, o) in storage.profiling.heap_graph_objects.iter().enumerate() {
            if o.type_id != class_id as u32 || o.upid != s.upid || o.graph_sample_ts != s.ts {
                continue;
            }
            let i = i as u32;
            let (Some(r), Some(t)) = (
                referred_by_field(storage, i, referent),
                referred_by_field(storage, i, thunk),
            ) else {
                continue;
            };
            if next.and_then(|n| referred_by_field(storage, i, n)) == Some(i) {
                continue;
            }
            cleaners.push((r, t));
        }
    }
    for (r, t) in cleaners {
        let Some(registry) = referred_by_field(storage, t, this0) else {
            continue;
        };
        let Some(&size) = s.nar_sizes.get(&registry) else {
            continue;
        };
        if let Some(o) = storage.profiling.heap_graph_objects.get_mut(r as usize) {
            o.native_size += ((size as u64) & !1) as i64;
        }
    }
}

//! `HeapGraph` packets (TracePacket field 56): the parts of a Java heap
//! dump ART writes. This module reads a part's objects, classes, interned
//! field and location names and roots, with upstream's rules for ids
//! given as deltas, heap types carried over from the previous object and
//! repeated numbers packed or not, and hands them to the heap graph
//! tracker; a part not `continued` ends its dump. A malformed repeated
//! field counts `heap_graph_malformed_packet`.

use protozero::Decoder;

use super::Parser;
use super::importer::Importer;
use crate::tracker::heap_graph::{InternedType, SourceObject};

/// `TracePacket.heap_graph` (an extension of ART's).
pub const HEAP_GRAPH: u32 = 56;

/// The payloads this module imports.
pub const IMPORTERS: &[(u32, Importer)] = &[(HEAP_GRAPH, |p, i| {
    parse(p, i.bytes, i.ts, i.generation.sequence_id);
})];

/// The fields of one message, in order.
fn fields(msg: &[u8]) -> impl Iterator<Item = protozero::Field<'_>> {
    let mut d = Decoder::new(msg);
    std::iter::from_fn(move || d.read_field().and_then(Result::ok))
}

fn last_u64(msg: &[u8], id: u32) -> Option<u64> {
    Decoder::new(msg)
        .find_last(id)
        .and_then(|f| f.as_u64().ok())
}

/// A repeated varint field, packed or not; Err when a packed run is
/// malformed.
fn varints(msg: &[u8], id: u32) -> Result<Vec<u64>, ()> {
    let mut out = Vec::new();
    for f in fields(msg).filter(|f| f.id == id) {
        if let Ok(v) = f.as_u64() {
            out.push(v);
            continue;
        }
        let mut rest = f.as_bytes().map_err(|_| ())?;
        while !rest.is_empty() {
            match protozero::varint::decode_varint(rest) {
                Ok((v, n)) if n > 0 => {
                    out.push(v);
                    rest = rest.get(n..).unwrap_or(&[]);
                }
                _ => return Err(()),
            }
        }
    }
    Ok(out)
}

/// Reads one object; None when a repeated field is malformed.
fn object(p: &mut Parser, msg: &[u8], seq: u32) -> Option<SourceObject> {
    let tracker = &mut p.profiling.heap_graph;
    let mut obj = SourceObject {
        object_id: match last_u64(msg, 7) {
            Some(delta) if delta != 0 => tracker.last_object_id(seq).wrapping_add(delta),
            _ => last_u64(msg, 1).unwrap_or(0),
        },
        type_id: last_u64(msg, 2).unwrap_or(0),
        self_size: last_u64(msg, 3).unwrap_or(0),
        heap_type: match last_u64(msg, 9) {
            Some(t) => t,
            None => tracker.last_heap_type(seq),
        },
        native_allocation_registry_size: last_u64(msg, 8).map(|v| v as i64),
        bitmap_id: last_u64(msg, 11).map(|v| v as i64),
        bitmap_source_id: last_u64(msg, 12).map(|v| v as i64),
        bitmap_width: last_u64(msg, 13).map(|v| v as u32),
        bitmap_height: last_u64(msg, 14).map(|v| v as u32),
        ..Default::default()
    };
    let base = last_u64(msg, 6).unwrap_or(0);
    obj.field_name_ids = varints(msg, 4).ok()?;
    obj.referred_objects = varints(msg, 5)
        .ok()?
        .into_iter()
        .map(|v| if v != 0 { v.wrapping_add(base) } else { 0 })
        .collect();
    obj.runtime_internal_objects = varints(msg, 10).ok()?;
    Some(obj)
}

/// Parses one `HeapGraph` part at `ts` on sequence `seq`.
pub fn parse(p: &mut Parser, bytes: &[u8], ts: i64, seq: u32) {
    let pid = last_u64(bytes, 1).unwrap_or(0) as i32 as u32;
    let upid = p
        .processes
        .get_or_create_process(&mut p.storage, i64::from(pid));
    let malformed = |p: &mut Parser| {
        p.storage
            .stats
            .add_indexed("heap_graph_malformed_packet", i64::from(upid), 1);
    };
    let index = last_u64(bytes, 6).unwrap_or(0);
    p.profiling
        .heap_graph
        .set_packet_index(&mut p.storage, seq, index);
    if let Some(size) = last_u64(bytes, 10) {
        p.profiling.heap_graph.set_heap_size(seq, size as i64);
    }
    for f in fields(bytes).filter(|f| f.id == 2) {
        let Ok(msg) = f.as_bytes() else { continue };
        let Some(obj) = object(p, msg, seq) else {
            malformed(p);
            break;
        };
        if !obj.field_name_ids.is_empty() && obj.field_name_ids.len() != obj.referred_objects.len()
        {
            malformed(p);
            continue;
        }
        p.profiling
            .heap_graph
            .add_object(&mut p.storage, seq, upid, ts, obj);
    }
    for f in fields(bytes).filter(|f| f.id == 9) {
        let Ok(msg) = f.as_bytes() else { continue };
        let Ok(field_name_ids) = varints(msg, 6) else {
            malformed(p);
            continue;
        };
        let raw_kind = last_u64(msg, 7).unwrap_or(0);
        let kind = if raw_kind <= 11 { raw_kind } else { 0 };
        let name = Decoder::new(msg)
            .find_last(3)
            .and_then(|f| f.as_bytes().ok())
            .map(String::from_utf8_lossy)
            .unwrap_or_default();
        let t = InternedType {
            name: p
                .storage
                .strings
                .intern_opt(Some(&*name).filter(|n| !n.is_empty())),
            location_id: last_u64(msg, 2),
            object_size: last_u64(msg, 4).unwrap_or(0),
            field_name_ids,
            superclass_id: last_u64(msg, 5).unwrap_or(0),
            classloader_id: last_u64(msg, 8).unwrap_or(0),
            // NOREFERENCES, STRING, ARRAY.
            no_fields: matches!(raw_kind, 2..=4),
            kind,
        };
        p.profiling
            .heap_graph
            .add_type(seq, last_u64(msg, 1).unwrap_or(0), t);
    }
    for f in fields(bytes).filter(|f| f.id == 4) {
        let Ok(msg) = f.as_bytes() else { continue };
        let text = interned_text(msg);
        let iid = last_u64(msg, 1).unwrap_or(0);
        p.profiling
            .heap_graph
            .add_field_name(&mut p.storage, seq, iid, &text);
    }
    for f in fields(bytes).filter(|f| f.id == 8) {
        let Ok(msg) = f.as_bytes() else { continue };
        let text = interned_text(msg);
        let name = p
            .storage
            .strings
            .intern_opt(Some(text.as_str()).filter(|t| !t.is_empty()));
        p.profiling
            .heap_graph
            .add_location(seq, last_u64(msg, 1).unwrap_or(0), name);
    }
    for f in fields(bytes).filter(|f| f.id == 7) {
        let Ok(msg) = f.as_bytes() else { continue };
        let raw = last_u64(msg, 2).unwrap_or(0);
        let root_type = if raw <= 14 { raw } else { 0 };
        let Ok(ids) = varints(msg, 1) else {
            malformed(p);
            break;
        };
        p.profiling
            .heap_graph
            .add_root(&mut p.storage, seq, upid, ts, root_type, ids);
    }
    let continued = last_u64(bytes, 5).unwrap_or(0) != 0;
    if !continued {
        p.profiling
            .heap_graph
            .finalize(&mut p.storage, seq, package_of);
    }
}

/// An `InternedString`'s text.
fn interned_text(msg: &[u8]) -> String {
    Decoder::new(msg)
        .find_last(2)
        .and_then(|f| f.as_bytes().ok())
        .map(|b| String::from_utf8_lossy(b).into_owned())
        .unwrap_or_default()
}

/// The package a class location names (an app's path).
fn package_of(location: &str) -> Option<String> {
    super::deobfuscation::package_of(location).ok().flatten()
}

/// Ends the dumps the trace left open.
pub fn finish(p: &mut Parser) {
    p.profiling
        .heap_graph
        .finalize_all(&mut p.storage, package_of);
}

//! statsd atoms (`TracePacket.statsd_atom`, field 84): each atom, queued
//! on its own at its time by the loader (`load/statsd_queue.rs`), becomes
//! an instant on the one global `Statsd Atoms` track, named by the atom's
//! kind, as upstream's statsd module makes it.
//!
//! Upstream names an atom and types its args from a descriptor of
//! Android's `Atom` message that it compiles in; we ship no such
//! descriptor, so every atom takes upstream's path for an atom its
//! descriptor does not know: named `atom_<field number>`, its fields as
//! args by wire type (`field_N` for varints and the base64 of
//! length-delimited values, `field_N_assuming_float` and
//! `field_N_assuming_double` for fixed 32 and 64-bit values), counted in
//! `atom_unknown` unless it is an OEM atom (field 100000 and above).

use base64::Engine;
use protozero::{Decoder, FieldValue};

use super::Parser;
use super::importer::{Importer, Input};
use crate::storage::args::{ArgSetBuilder, ArgValue};
use crate::storage::rows::SliceRow;
use crate::tracker::tracks::{EventType, TrackSpec};

/// `TracePacket.statsd_atom`.
const STATSD_ATOM: u32 = 84;
/// `StatsdAtom.atom`.
const ATOM: u32 = 1;
/// `StatsdAtom.timestamp_nanos`.
const TIMESTAMP_NANOS: u32 = 2;
/// Atoms from this field number up are vendors' own (no descriptor could
/// know them, so they are not counted as unknown).
const FIRST_OEM_ATOM: u32 = 100_000;

/// The payload this module imports.
pub const IMPORTERS: &[(u32, Importer)] = &[(STATSD_ATOM, import)];

fn import(p: &mut Parser, input: &Input<'_>) {
    let d = Decoder::new(input.bytes);
    if d.find_last(TIMESTAMP_NANOS).is_none() {
        p.storage.stats.incr("atom_timestamp_missing");
    }
    let Some(atom) = d.find_last(ATOM).and_then(|f| f.as_bytes().ok()) else {
        return;
    };
    // An Atom is a oneof of every kind: its first field says which.
    let first = Decoder::new(atom).map_while(Result::ok).next();
    let kind = first.as_ref().map_or(0, |f| f.id);
    if kind < FIRST_OEM_ATOM {
        p.storage.stats.incr("atom_unknown");
    }
    let body = match first.map(|f| f.value) {
        Some(FieldValue::Bytes(b)) => b,
        _ => &[],
    };
    let arg_set_id = generic_args(p, body);
    let name = p.storage.strings.intern(&format!("atom_{kind}"));
    let spec = TrackSpec::new(Some("Statsd Atoms"), "statsd_atoms", EventType::Slice);
    let track_id = p.tracks.interned_counter(&mut p.storage, &spec);
    p.slices.instant(
        &mut p.storage,
        SliceRow {
            ts: input.ts,
            dur: 0,
            track_id,
            name,
            arg_set_id: arg_set_id.into(),
            ..Default::default()
        },
    );
}

/// An atom's fields as args by their wire types alone.
fn generic_args(p: &mut Parser, body: &[u8]) -> Option<u32> {
    let mut b = ArgSetBuilder::default();
    for f in Decoder::new(body).map_while(Result::ok) {
        let (key, value) = match f.value {
            FieldValue::Varint(v) => (format!("field_{}", f.id), ArgValue::Int(v as i64)),
            FieldValue::Fixed32(v) => (
                format!("field_{}_assuming_float", f.id),
                ArgValue::Real(f64::from(f32::from_bits(v))),
            ),
            FieldValue::Fixed64(v) => (
                format!("field_{}_assuming_double", f.id),
                ArgValue::Real(f64::from_bits(v)),
            ),
            FieldValue::Bytes(bytes) => {
                let text = base64::engine::general_purpose::STANDARD.encode(bytes);
                (
                    format!("field_{}", f.id),
                    ArgValue::String(p.storage.strings.intern(&text)),
                )
            }
            _ => continue,
        };
        let key = p.storage.strings.intern(&key);
        b.add(key, key, value);
    }
    p.storage.args.add_set(&b)
}

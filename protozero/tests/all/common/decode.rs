//! Reads bytes back into a model [`Node`] with our decoders, two ways: the
//! schema-less [`Decoder`] iterator (one pass, last one wins by assignment) and
//! the [`TypedDecoder`] (lookup by id, repeated fields in arrival order). Packed
//! fields accept both the packed and the unpacked encoding, as protobuf requires.

use protozero::{DecodeError, Decoder, Field, FieldValue, TypedDecoder};

use super::model::Node;

/// Dense table size: covers ids 1..=37; 1000 and 2^29−1 spill.
const DENSE: usize = 40;

fn push_varints(out: &mut Vec<u64>, f: &Field<'_>) -> Result<(), DecodeError> {
    match f.value {
        FieldValue::Bytes(_) => {
            let mut it = f.packed_varints()?;
            out.extend(&mut it);
            match it.error() {
                Some(e) => Err(e),
                None => Ok(()),
            }
        }
        _ => {
            out.push(f.as_varint()?);
            Ok(())
        }
    }
}

fn push_fixed32(out: &mut Vec<u32>, f: &Field<'_>) -> Result<(), DecodeError> {
    match f.value {
        FieldValue::Bytes(_) => out.extend(f.packed_fixed32()?),
        _ => out.push(f.as_fixed32()?),
    }
    Ok(())
}

fn push_fixed64(out: &mut Vec<u64>, f: &Field<'_>) -> Result<(), DecodeError> {
    match f.value {
        FieldValue::Bytes(_) => out.extend(f.packed_fixed64()?),
        _ => out.push(f.as_fixed64()?),
    }
    Ok(())
}

/// Raw element lists of the packed/repeated numeric fields, converted at the end.
#[derive(Default)]
struct Raw {
    varints: [Vec<u64>; 8],
    fixed32: [Vec<u32>; 3],
    fixed64: [Vec<u64>; 3],
    u_i32: Vec<u64>,
    u_s64: Vec<u64>,
}

/// Applies one field to `n`; the single place that maps ids to model fields.
fn apply(n: &mut Node, raw: &mut Raw, f: &Field<'_>) -> Result<(), DecodeError> {
    match f.id {
        1 => n.i32 = Some(f.as_i32()?),
        2 => n.i64 = Some(f.as_i64()?),
        3 => n.u32 = Some(f.as_u32()?),
        4 => n.u64 = Some(f.as_u64()?),
        5 => n.s32 = Some(f.as_sint32()?),
        6 => n.s64 = Some(f.as_sint64()?),
        7 => n.b = Some(f.as_bool()?),
        8 => n.e = Some(f.as_i32()?),
        9 => n.fx32 = Some(f.as_fixed32()?),
        10 => n.fx64 = Some(f.as_fixed64()?),
        11 => n.sfx32 = Some(f.as_sfixed32()?),
        12 => n.sfx64 = Some(f.as_sfixed64()?),
        13 => n.fl = Some(f.as_f32()?),
        14 => n.db = Some(f.as_f64()?),
        15 => n.s = Some(f.as_str()?.to_owned()),
        16 => n.by = Some(f.as_bytes()?.to_vec()),
        id @ 17..=24 => push_varints(&mut raw.varints[(id - 17) as usize], f)?,
        25 => push_fixed32(&mut raw.fixed32[0], f)?,
        26 => push_fixed64(&mut raw.fixed64[0], f)?,
        27 => push_fixed32(&mut raw.fixed32[1], f)?,
        28 => push_fixed64(&mut raw.fixed64[1], f)?,
        29 => push_fixed32(&mut raw.fixed32[2], f)?,
        30 => push_fixed64(&mut raw.fixed64[2], f)?,
        31 => push_varints(&mut raw.u_i32, f)?,
        32 => push_varints(&mut raw.u_s64, f)?,
        33 => push_fixed64(&mut n.u_fx64, f)?,
        34 => n.u_s.push(f.as_str()?.to_owned()),
        35 => n.u_by.push(f.as_bytes()?.to_vec()),
        36 => n.children.push(decode_iter(f.as_bytes()?)?),
        37 => n.child = Some(Box::new(decode_iter(f.as_bytes()?)?)),
        1000 => n.hi.push(f.as_str()?.to_owned()),
        536_870_911 => n.max_id = Some(f.as_u64()?),
        _ => {} // unknown: skipped
    }
    Ok(())
}

fn unzig32(v: u64) -> i32 {
    protozero::varint::unzigzag32(v as u32)
}

fn unzig64(v: u64) -> i64 {
    protozero::varint::unzigzag64(v)
}

fn finish(mut n: Node, raw: Raw) -> Node {
    let [i32s, i64s, u32s, u64s, s32s, s64s, bools, enums] = raw.varints;
    n.p_i32 = i32s.into_iter().map(|v| v as i32).collect();
    n.p_i64 = i64s.into_iter().map(|v| v as i64).collect();
    n.p_u32 = u32s.into_iter().map(|v| v as u32).collect();
    n.p_u64 = u64s;
    n.p_s32 = s32s.into_iter().map(unzig32).collect();
    n.p_s64 = s64s.into_iter().map(unzig64).collect();
    n.p_b = bools.into_iter().map(|v| v != 0).collect();
    n.p_e = enums.into_iter().map(|v| v as i32).collect();
    let [fx32, sfx32, fl] = raw.fixed32;
    n.p_fx32 = fx32;
    n.p_sfx32 = sfx32.into_iter().map(|v| v as i32).collect();
    n.p_fl = fl.into_iter().map(f32::from_bits).collect();
    let [fx64, sfx64, db] = raw.fixed64;
    n.p_fx64 = fx64;
    n.p_sfx64 = sfx64.into_iter().map(|v| v as i64).collect();
    n.p_db = db.into_iter().map(f64::from_bits).collect();
    n.u_i32 = raw.u_i32.into_iter().map(|v| v as i32).collect();
    n.u_s64 = raw.u_s64.into_iter().map(unzig64).collect();
    n
}

/// Decodes with the schema-less [`Decoder`], one pass over the fields.
pub fn decode_iter(buf: &[u8]) -> Result<Node, DecodeError> {
    let mut n = Node::default();
    let mut raw = Raw::default();
    for f in Decoder::new(buf) {
        apply(&mut n, &mut raw, &f?)?;
    }
    Ok(finish(n, raw))
}

/// Decodes with the [`TypedDecoder`]: singular fields through `get` (last one
/// wins), repeated ones through `repeated` (arrival order), children recursively.
pub fn decode_typed(buf: &[u8]) -> Result<Node, DecodeError> {
    let d = TypedDecoder::<'_, DENSE>::new(buf);
    if let Some(e) = d.error() {
        return Err(e);
    }
    let mut n = Node::default();
    let mut raw = Raw::default();
    // Singular scalars: only the last occurrence matters.
    for id in 1..=16 {
        if let Some(f) = d.get(id) {
            apply(&mut n, &mut raw, &f)?;
        }
    }
    for id in [536_870_911] {
        if let Some(f) = d.get(id) {
            apply(&mut n, &mut raw, &f)?;
        }
    }
    // Repeated fields: every occurrence, in order.
    for id in (17..=35).chain([1000]) {
        for f in d.repeated(id) {
            apply(&mut n, &mut raw, &f)?;
        }
    }
    for f in d.repeated(36) {
        n.children.push(decode_typed(f.as_bytes()?)?);
    }
    if let Some(f) = d.get(37) {
        n.child = Some(Box::new(decode_typed(f.as_message()?.buffer())?));
    }
    Ok(finish(n, raw))
}

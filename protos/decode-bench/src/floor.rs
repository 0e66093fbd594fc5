//! The floor: a hand-written tag/varint scanner that does the two tasks
//! with nothing but what they need, so the bench can say how far each
//! library is from the physical limit of a decoder. One function per
//! message, a `match` on (field number, wire type), every length and
//! offset bounds-checked, UTF-8 checked on exactly the strings the task
//! reads (as ours does; prost, quick-protobuf and rust-protobuf also check
//! the strings of messages the tasks only count, see the crate docs), no
//! allocation, no table, no state beyond the read position.
//!
//! Malformed bytes (a truncated field, a varint over 10 bytes, field 0, a
//! group, nesting deeper than [`MAX_DEPTH`]) or a string that is not UTF-8
//! make it refuse the packet, which then adds nothing (as with prost).
//! Repeated scalars are accepted packed and unpacked, like ours and prost;
//! a known field with an unexpected wire type is skipped as unknown.
//! Unlike the libraries it does not keep only the last occurrence of a
//! singular field: it adds every occurrence (no data set repeats one).

use crate::{Checksum, Weight};

/// Deepest nesting of messages the floor follows (prost's recursion limit).
pub const MAX_DEPTH: u32 = 100;

const VARINT: u64 = 0;
const I64: u64 = 1;
const LEN: u64 = 2;

/// A read position in one message's bytes.
struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    #[inline(always)]
    fn new(buf: &'a [u8]) -> Self {
        Reader { buf, pos: 0 }
    }

    #[inline(always)]
    fn at_end(&self) -> bool {
        self.pos >= self.buf.len()
    }

    #[inline(always)]
    fn varint(&mut self) -> Option<u64> {
        let b = *self.buf.get(self.pos)?;
        self.pos += 1;
        if b < 0x80 {
            return Some(u64::from(b));
        }
        self.varint_rest(b)
    }

    /// The bytes after the first of a multi-byte varint.
    #[inline]
    fn varint_rest(&mut self, first: u8) -> Option<u64> {
        let mut value = u64::from(first & 0x7f);
        let mut shift = 7;
        loop {
            let b = *self.buf.get(self.pos)?;
            self.pos += 1;
            value |= u64::from(b & 0x7f) << shift;
            if b < 0x80 {
                return Some(value);
            }
            shift += 7;
            if shift > 63 {
                return None;
            }
        }
    }

    /// The next field's (number, wire type).
    #[inline(always)]
    fn tag(&mut self) -> Option<(u64, u64)> {
        let tag = self.varint()?;
        let field = tag >> 3;
        if field == 0 || field > u64::from(u32::MAX >> 3) {
            return None;
        }
        Some((field, tag & 7))
    }

    #[inline(always)]
    fn fixed64(&mut self) -> Option<u64> {
        let bytes = self.buf.get(self.pos..)?.first_chunk::<8>()?;
        self.pos += 8;
        Some(u64::from_le_bytes(*bytes))
    }

    #[inline(always)]
    fn bytes(&mut self) -> Option<&'a [u8]> {
        let len = usize::try_from(self.varint()?).ok()?;
        let end = self.pos.checked_add(len)?;
        let bytes = self.buf.get(self.pos..end)?;
        self.pos = end;
        Some(bytes)
    }

    #[inline(always)]
    fn str(&mut self) -> Option<&'a str> {
        core::str::from_utf8(self.bytes()?).ok()
    }

    /// Skips a field of wire type `wire_type` (groups are refused).
    #[inline]
    fn skip(&mut self, wire_type: u64) -> Option<()> {
        match wire_type {
            VARINT => {
                self.varint()?;
            }
            I64 => {
                self.fixed64()?;
            }
            LEN => {
                self.bytes()?;
            }
            5 => {
                let end = self.pos.checked_add(4)?;
                if end > self.buf.len() {
                    return None;
                }
                self.pos = end;
            }
            _ => return None,
        }
        Some(())
    }
}

/// Adds every varint of a packed payload, each converted by `convert`.
#[inline]
fn packed_varints<T: Weight>(
    c: &mut Checksum,
    payload: &[u8],
    convert: fn(u64) -> T,
) -> Option<()> {
    let mut r = Reader::new(payload);
    while !r.at_end() {
        c.add(convert(r.varint()?));
    }
    Some(())
}

/// Adds every 8-byte value of a packed payload, each converted by `convert`.
#[inline]
fn packed_fixed64<T: Weight>(
    c: &mut Checksum,
    payload: &[u8],
    convert: fn(u64) -> T,
) -> Option<()> {
    let mut r = Reader::new(payload);
    while !r.at_end() {
        c.add(convert(r.fixed64()?));
    }
    Some(())
}

fn as_u64(v: u64) -> u64 {
    v
}

fn as_i64(v: u64) -> i64 {
    v as i64
}

fn as_f64(v: u64) -> f64 {
    f64::from_bits(v)
}

/// The full task: every field of every packet (see the crate docs).
pub fn full(packets: &[&[u8]]) -> u64 {
    let mut c = Checksum::default();
    for p in packets {
        let mut one = Checksum::default();
        if packet(&mut one, p).is_some() {
            c.0 = c.0.wrapping_add(one.0);
        }
    }
    c.0
}

/// The lazy task: each packet's timestamp and its TrackEvent's name.
pub fn lazy(packets: &[&[u8]]) -> u64 {
    let mut c = Checksum::default();
    for p in packets {
        let mut one = Checksum::default();
        if lazy_packet(&mut one, p).is_some() {
            c.0 = c.0.wrapping_add(one.0);
        }
    }
    c.0
}

fn lazy_packet(c: &mut Checksum, buf: &[u8]) -> Option<()> {
    let mut r = Reader::new(buf);
    let mut timestamp = None;
    let mut event = None;
    while !r.at_end() {
        match r.tag()? {
            (8, VARINT) => timestamp = Some(r.varint()?),
            (11, LEN) => event = Some(r.bytes()?),
            (_, wire_type) => r.skip(wire_type)?,
        }
    }
    c.opt(timestamp);
    if let Some(event) = event {
        let mut r = Reader::new(event);
        let mut name_iid = None;
        let mut name = None;
        while !r.at_end() {
            match r.tag()? {
                (10, VARINT) => name_iid = Some(r.varint()?),
                (23, LEN) => name = Some(r.bytes()?),
                (_, wire_type) => r.skip(wire_type)?,
            }
        }
        match (name_iid, name) {
            (Some(iid), _) => c.add(iid),
            (None, Some(name)) => c.add(core::str::from_utf8(name).ok()?),
            (None, None) => {}
        }
    }
    Some(())
}

fn packet(c: &mut Checksum, buf: &[u8]) -> Option<()> {
    let mut r = Reader::new(buf);
    while !r.at_end() {
        match r.tag()? {
            (8, VARINT) => c.add(r.varint()?),
            (58 | 10 | 13 | 42 | 98, VARINT) => c.add(r.varint()? as u32),
            (3 | 79, VARINT) => c.add(r.varint()? as i32),
            (41 | 87, VARINT) => c.add(r.varint()? != 0),
            (11, LEN) => {
                c.message();
                track_event(c, r.bytes()?, 1)?;
            }
            (12, LEN) => {
                c.message();
                interned_data(c, r.bytes()?)?;
            }
            (900, LEN) => {
                c.message();
                test_event(c, r.bytes()?)?;
            }
            // The messages only counted: the other members of oneof
            // `data`, and trace_packet_defaults.
            (
                60 | 6 | 89 | 33 | 35 | 45 | 46 | 69 | 124 | 125 | 126 | 43 | 44 | 113 | 107 | 59,
                LEN,
            ) => {
                r.bytes()?;
                c.message();
            }
            (36 | 50 | 133, LEN) => c.add(r.bytes()?),
            (_, wire_type) => r.skip(wire_type)?,
        }
    }
    Some(())
}

fn track_event(c: &mut Checksum, buf: &[u8], depth: u32) -> Option<()> {
    let mut r = Reader::new(buf);
    while !r.at_end() {
        match r.tag()? {
            // uint64, singular and repeated.
            (10 | 11 | 52 | 54 | 56 | 34 | 3 | 31 | 45 | 36 | 42, VARINT) => c.add(r.varint()?),
            // int64, singular and repeated.
            (30 | 1 | 16 | 2 | 17 | 8 | 20 | 12, VARINT) => c.add(r.varint()? as i64),
            (9, VARINT) => c.add(r.varint()? as i32),
            // double, singular and repeated.
            (44 | 57 | 46, I64) => c.add(as_f64(r.fixed64()?)),
            // repeated fixed64.
            (47 | 48, I64) => c.add(r.fixed64()?),
            (22 | 23 | 53, LEN) => c.add(r.str()?),
            (4, LEN) => debug_annotation(c, r.bytes()?, depth + 1)?,
            (33, LEN) => source_location(c, r.bytes()?)?,
            // Messages only counted: callstack, task_execution,
            // log_message, legacy_event.
            (55 | 5 | 21 | 6, LEN) => {
                r.bytes()?;
                c.message();
            }
            // Packed repeated scalars.
            (3 | 31 | 45 | 36 | 42, LEN) => packed_varints(c, r.bytes()?, as_u64)?,
            (12, LEN) => packed_varints(c, r.bytes()?, as_i64)?,
            (46, LEN) => packed_fixed64(c, r.bytes()?, as_f64)?,
            (47 | 48, LEN) => packed_fixed64(c, r.bytes()?, as_u64)?,
            (_, wire_type) => r.skip(wire_type)?,
        }
    }
    Some(())
}

fn debug_annotation(c: &mut Checksum, buf: &[u8], depth: u32) -> Option<()> {
    if depth > MAX_DEPTH {
        return None;
    }
    c.message();
    let mut r = Reader::new(buf);
    while !r.at_end() {
        match r.tag()? {
            (1 | 3 | 7 | 17 | 13, VARINT) => c.add(r.varint()?),
            (2, VARINT) => c.add(r.varint()? != 0),
            (4, VARINT) => c.add(r.varint()? as i64),
            (5, I64) => c.add(as_f64(r.fixed64()?)),
            (10 | 9 | 6 | 16, LEN) => c.add(r.str()?),
            (14, LEN) => c.add(r.bytes()?),
            (8, LEN) => nested_value(c, r.bytes()?, depth + 1)?,
            (11 | 12, LEN) => debug_annotation(c, r.bytes()?, depth + 1)?,
            (_, wire_type) => r.skip(wire_type)?,
        }
    }
    Some(())
}

fn nested_value(c: &mut Checksum, buf: &[u8], depth: u32) -> Option<()> {
    if depth > MAX_DEPTH {
        return None;
    }
    c.message();
    let mut r = Reader::new(buf);
    while !r.at_end() {
        match r.tag()? {
            (1, VARINT) => c.add(r.varint()? as i32),
            (5, VARINT) => c.add(r.varint()? as i64),
            (7, VARINT) => c.add(r.varint()? != 0),
            (6, I64) => c.add(as_f64(r.fixed64()?)),
            (2 | 8, LEN) => c.add(r.str()?),
            (3 | 4, LEN) => nested_value(c, r.bytes()?, depth + 1)?,
            (_, wire_type) => r.skip(wire_type)?,
        }
    }
    Some(())
}

fn source_location(c: &mut Checksum, buf: &[u8]) -> Option<()> {
    c.message();
    let mut r = Reader::new(buf);
    while !r.at_end() {
        match r.tag()? {
            (1, VARINT) => c.add(r.varint()?),
            (4, VARINT) => c.add(r.varint()? as u32),
            (2 | 3, LEN) => c.add(r.str()?),
            (_, wire_type) => r.skip(wire_type)?,
        }
    }
    Some(())
}

/// `EventCategory`, `EventName`, `DebugAnnotationName`,
/// `DebugAnnotationValueTypeName`, `LogMessageBody`: iid = 1, a string = 2.
fn iid_name(c: &mut Checksum, buf: &[u8]) -> Option<()> {
    c.message();
    let mut r = Reader::new(buf);
    while !r.at_end() {
        match r.tag()? {
            (1, VARINT) => c.add(r.varint()?),
            (2, LEN) => c.add(r.str()?),
            (_, wire_type) => r.skip(wire_type)?,
        }
    }
    Some(())
}

/// `InternedString`: iid = 1, bytes = 2 (not UTF-8 checked: `bytes`).
fn interned_string(c: &mut Checksum, buf: &[u8]) -> Option<()> {
    c.message();
    let mut r = Reader::new(buf);
    while !r.at_end() {
        match r.tag()? {
            (1, VARINT) => c.add(r.varint()?),
            (2, LEN) => c.add(r.bytes()?),
            (_, wire_type) => r.skip(wire_type)?,
        }
    }
    Some(())
}

/// `Mapping`: uint64 fields 1 to 6 and 8, repeated uint64 7.
fn mapping(c: &mut Checksum, buf: &[u8]) -> Option<()> {
    c.message();
    let mut r = Reader::new(buf);
    while !r.at_end() {
        match r.tag()? {
            (1..=8, VARINT) => c.add(r.varint()?),
            (7, LEN) => packed_varints(c, r.bytes()?, as_u64)?,
            (_, wire_type) => r.skip(wire_type)?,
        }
    }
    Some(())
}

/// `Callstack`: uint64 iid = 1, repeated uint64 frame_ids = 2.
fn callstack(c: &mut Checksum, buf: &[u8]) -> Option<()> {
    c.message();
    let mut r = Reader::new(buf);
    while !r.at_end() {
        match r.tag()? {
            (1 | 2, VARINT) => c.add(r.varint()?),
            (2, LEN) => packed_varints(c, r.bytes()?, as_u64)?,
            (_, wire_type) => r.skip(wire_type)?,
        }
    }
    Some(())
}

/// `UnsymbolizedSourceLocation`: uint64 fields 1 to 3.
fn unsymbolized_source_location(c: &mut Checksum, buf: &[u8]) -> Option<()> {
    c.message();
    let mut r = Reader::new(buf);
    while !r.at_end() {
        match r.tag()? {
            (1..=3, VARINT) => c.add(r.varint()?),
            (_, wire_type) => r.skip(wire_type)?,
        }
    }
    Some(())
}

fn frame(c: &mut Checksum, buf: &[u8]) -> Option<()> {
    c.message();
    let mut r = Reader::new(buf);
    while !r.at_end() {
        match r.tag()? {
            (1..=5, VARINT) => c.add(r.varint()?),
            (6, VARINT) => c.add(r.varint()? as u32),
            (7, VARINT) => c.add(r.varint()? as i32),
            (8, LEN) => c.add(r.str()?),
            (_, wire_type) => r.skip(wire_type)?,
        }
    }
    Some(())
}

fn interned_data(c: &mut Checksum, buf: &[u8]) -> Option<()> {
    let mut r = Reader::new(buf);
    while !r.at_end() {
        match r.tag()? {
            (1 | 2 | 3 | 27 | 20, LEN) => iid_name(c, r.bytes()?)?,
            (29 | 43 | 16 | 17 | 18 | 5 | 26, LEN) => interned_string(c, r.bytes()?)?,
            (19, LEN) => mapping(c, r.bytes()?)?,
            (6, LEN) => frame(c, r.bytes()?)?,
            (7, LEN) => callstack(c, r.bytes()?)?,
            (4, LEN) => source_location(c, r.bytes()?)?,
            (28, LEN) => unsymbolized_source_location(c, r.bytes()?)?,
            (_, wire_type) => r.skip(wire_type)?,
        }
    }
    Some(())
}

/// `TestEvent` (TracePacket.for_testing) and every message under it.
fn test_event(c: &mut Checksum, buf: &[u8]) -> Option<()> {
    let mut r = Reader::new(buf);
    while !r.at_end() {
        match r.tag()? {
            (1, LEN) => c.add(r.str()?),
            (2, VARINT) => c.add(r.varint()? as u32),
            (3, VARINT) => c.add(r.varint()?),
            (4, VARINT) => c.add(r.varint()? != 0),
            (5, LEN) => test_payload(c, r.bytes()?, 1)?,
            (6, LEN) => vm_state(c, r.bytes()?, true)?,
            (7, LEN) => vm_state(c, r.bytes()?, false)?,
            (_, wire_type) => r.skip(wire_type)?,
        }
    }
    Some(())
}

/// `TestEvent.TestPayload`, recursively (`nested`, `debug_annotations`).
fn test_payload(c: &mut Checksum, buf: &[u8], depth: u32) -> Option<()> {
    if depth > MAX_DEPTH {
        return None;
    }
    c.message();
    let mut r = Reader::new(buf);
    while !r.at_end() {
        match r.tag()? {
            (1 | 4, LEN) => c.add(r.str()?),
            (2, LEN) => test_payload(c, r.bytes()?, depth + 1)?,
            (3, VARINT) => c.add(r.varint()? as u32),
            (5 | 6, VARINT) => c.add(r.varint()? as i32),
            (6, LEN) => packed_varints(c, r.bytes()?, |v| v as i32)?,
            (7, LEN) => debug_annotation(c, r.bytes()?, depth + 1)?,
            (_, wire_type) => r.skip(wire_type)?,
        }
    }
    Some(())
}

/// `ProtoVmPatch` (`patch`) and `ProtoVmIncrementalState`: fields 1 to 4
/// alike, and the patch's `delete_message_ids` (5, absent from the state).
fn vm_state(c: &mut Checksum, buf: &[u8], patch: bool) -> Option<()> {
    c.message();
    let mut r = Reader::new(buf);
    while !r.at_end() {
        match r.tag()? {
            (1, LEN) => c.add(r.str()?),
            (2, VARINT) => c.add(r.varint()? as i32),
            (3 | 4, LEN) => vm_message(c, r.bytes()?)?,
            (5, VARINT) if patch => c.add(r.varint()? as u32),
            (5, LEN) if patch => packed_varints(c, r.bytes()?, |v| v as u32)?,
            (_, wire_type) => r.skip(wire_type)?,
        }
    }
    Some(())
}

/// `ProtoVmMessage`: uint32 id = 1, submessage = 2 (uint32 single_int = 1).
fn vm_message(c: &mut Checksum, buf: &[u8]) -> Option<()> {
    c.message();
    let mut r = Reader::new(buf);
    while !r.at_end() {
        match r.tag()? {
            (1, VARINT) => c.add(r.varint()? as u32),
            (2, LEN) => {
                c.message();
                let mut s = Reader::new(r.bytes()?);
                while !s.at_end() {
                    match s.tag()? {
                        (1, VARINT) => c.add(s.varint()? as u32),
                        (_, wire_type) => s.skip(wire_type)?,
                    }
                }
            }
            (_, wire_type) => r.skip(wire_type)?,
        }
    }
    Some(())
}

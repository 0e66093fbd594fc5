//! Writes a model [`Node`] through our `Message` API, field by field in tag
//! order, the way generated code would. Optionally records where each length
//! slot sits in the output and where its message ends, so tests can predict
//! which slots must become patches.

use protozero::Message;
use protozero::varint::varint_len;
use protozero::wire::{WireType, make_tag};

use super::model::Node;

/// `(slot offset, end offset)` of every reserved length slot, in stream bytes.
pub type Spans = Vec<(usize, usize)>;

/// Writes `n` as the fields of `msg`.
pub fn write_node(msg: &mut Message<'_>, n: &Node) {
    write_node_spans(msg, n, &mut None);
}

fn slot_offset(before: usize, id: u32) -> usize {
    before + varint_len(u64::from(make_tag(id, WireType::LengthDelimited)))
}

/// Like [`write_node`], also recording the span of every reserved slot (nested
/// messages and packed varints). Offsets are exact only with compaction off.
pub fn write_node_spans(msg: &mut Message<'_>, n: &Node, spans: &mut Option<&mut Spans>) {
    if let Some(v) = n.i32 {
        msg.append_int32(1, v);
    }
    if let Some(v) = n.i64 {
        msg.append_int64(2, v);
    }
    if let Some(v) = n.u32 {
        msg.append_uint32(3, v);
    }
    if let Some(v) = n.u64 {
        msg.append_uint64(4, v);
    }
    if let Some(v) = n.s32 {
        msg.append_sint32(5, v);
    }
    if let Some(v) = n.s64 {
        msg.append_sint64(6, v);
    }
    if let Some(v) = n.b {
        msg.append_bool(7, v);
    }
    if let Some(v) = n.e {
        msg.append_enum(8, v);
    }
    if let Some(v) = n.fx32 {
        msg.append_fixed32(9, v);
    }
    if let Some(v) = n.fx64 {
        msg.append_fixed64(10, v);
    }
    if let Some(v) = n.sfx32 {
        msg.append_sfixed32(11, v);
    }
    if let Some(v) = n.sfx64 {
        msg.append_sfixed64(12, v);
    }
    if let Some(v) = n.fl {
        msg.append_float(13, v);
    }
    if let Some(v) = n.db {
        msg.append_double(14, v);
    }
    if let Some(v) = &n.s {
        msg.append_string(15, v);
    }
    if let Some(v) = &n.by {
        msg.append_bytes(16, v);
    }

    // Packed varints go through a reserved slot, like nested messages.
    if !n.p_i32.is_empty() {
        with_slot(msg, 17, spans, |m| {
            m.append_packed_int32(17, n.p_i32.iter().copied())
        });
    }
    if !n.p_i64.is_empty() {
        let values = n.p_i64.iter().map(|&v| v as u64);
        with_slot(msg, 18, spans, |m| m.append_packed_varint(18, values));
    }
    if !n.p_u32.is_empty() {
        let values = n.p_u32.iter().map(|&v| u64::from(v));
        with_slot(msg, 19, spans, |m| m.append_packed_varint(19, values));
    }
    if !n.p_u64.is_empty() {
        with_slot(msg, 20, spans, |m| {
            m.append_packed_varint(20, n.p_u64.iter().copied())
        });
    }
    if !n.p_s32.is_empty() {
        with_slot(msg, 21, spans, |m| {
            m.append_packed_sint32(21, n.p_s32.iter().copied())
        });
    }
    if !n.p_s64.is_empty() {
        with_slot(msg, 22, spans, |m| {
            m.append_packed_sint64(22, n.p_s64.iter().copied())
        });
    }
    if !n.p_b.is_empty() {
        let values = n.p_b.iter().map(|&v| u64::from(v));
        with_slot(msg, 23, spans, |m| m.append_packed_varint(23, values));
    }
    if !n.p_e.is_empty() {
        with_slot(msg, 24, spans, |m| {
            m.append_packed_int32(24, n.p_e.iter().copied())
        });
    }

    // Packed fixed-width fields know their length: no slot.
    if !n.p_fx32.is_empty() {
        msg.append_packed_fixed32(25, &n.p_fx32);
    }
    if !n.p_fx64.is_empty() {
        msg.append_packed_fixed64(26, &n.p_fx64);
    }
    if !n.p_sfx32.is_empty() {
        msg.append_packed_sfixed32(27, &n.p_sfx32);
    }
    if !n.p_sfx64.is_empty() {
        msg.append_packed_sfixed64(28, &n.p_sfx64);
    }
    if !n.p_fl.is_empty() {
        msg.append_packed_float(29, &n.p_fl);
    }
    if !n.p_db.is_empty() {
        msg.append_packed_double(30, &n.p_db);
    }

    for &v in &n.u_i32 {
        msg.append_int32(31, v);
    }
    for &v in &n.u_s64 {
        msg.append_sint64(32, v);
    }
    for &v in &n.u_fx64 {
        msg.append_fixed64(33, v);
    }
    for v in &n.u_s {
        msg.append_string(34, v);
    }
    for v in &n.u_by {
        msg.append_bytes(35, v);
    }

    for c in &n.children {
        write_child(msg, 36, c, spans);
    }
    if let Some(c) = &n.child {
        write_child(msg, 37, c, spans);
    }

    for v in &n.hi {
        msg.append_string(1000, v);
    }
    if let Some(v) = n.max_id {
        msg.append_uint64(536_870_911, v);
    }
}

fn write_child(msg: &mut Message<'_>, id: u32, c: &Node, spans: &mut Option<&mut Spans>) {
    let before = msg.written();
    {
        let mut child = msg.begin_nested(id);
        write_node_spans(&mut child, c, spans);
    }
    if let Some(s) = spans.as_deref_mut() {
        s.push((slot_offset(before, id), msg.written()));
    }
}

/// Runs `write` (which appends one slot-backed field `id`) and records its span.
fn with_slot(
    msg: &mut Message<'_>,
    id: u32,
    spans: &mut Option<&mut Spans>,
    write: impl FnOnce(&mut Message<'_>),
) {
    let before = msg.written();
    write(msg);
    if let Some(s) = spans.as_deref_mut() {
        s.push((slot_offset(before, id), msg.written()));
    }
}

//! A known trace point's begin or instant as one small packet (see
//! `crate::producer::small_packet`): the timestamp, the sequence flags and
//! the point's cached TrackEvent prefix, then its scalar debug annotations,
//! byte for byte what the general path writes for the same event. Each
//! writer returns `false`, having written nothing, when the packet does not
//! fit the small form (the caller then takes the general path).

use protozero::varint::{MAX_VARINT_LEN, varint_len};

use super::debug_value::DebugValue;
use super::site_cache::{ArgHead, SiteEntry};
use super::small_values::{put_small_value, small_value_len, small_value_size};
use crate::producer::TraceWriter;
use crate::producer::small_packet::SmallPacket;

/// `TracePacket.sequence_flags`: NEEDS_INCREMENTAL_STATE.
const NEEDS_INCREMENTAL_STATE: u8 = 2;

/// `TracePacket` fields: timestamp (8, varint), sequence_flags (13,
/// varint), track_event (11, length-delimited).
const TIMESTAMP: u8 = 8 << 3;
const SEQUENCE_FLAGS: u8 = 13 << 3;
const TRACK_EVENT: u8 = 11 << 3 | 2;

/// Most annotations an event written here has.
pub(super) const MAX_ANNOTATIONS: usize = 8;

/// The packet's fields up to the TrackEvent's length (`event`).
#[inline(always)]
fn put_head(p: &mut SmallPacket<'_>, ts: u64, event: usize) {
    p.put([TIMESTAMP]);
    p.put_varint(ts);
    p.put([
        SEQUENCE_FLAGS,
        NEEDS_INCREMENTAL_STATE,
        TRACK_EVENT,
        event as u8,
    ]);
}

/// An event without annotations.
#[inline(always)]
pub(super) fn put_bare(writer: &mut TraceWriter, ts: u64, entry: &SiteEntry) -> bool {
    let (bytes, len) = entry.padded();
    // A bound known at compile time (the padded prefix's): the room check
    // folds to one compare.
    let max = 1 + MAX_VARINT_LEN + 4 + bytes.len();
    let Some(mut p) = writer.small_packet(max) else {
        return false;
    };
    put_head(&mut p, ts, len);
    p.put_padded(bytes, len);
    p.commit()
}

/// An event whose annotations are the point's own (`heads`, the names the
/// entry kept, in order): nothing interned, every size known before the
/// first byte, so the lengths are written in place.
#[inline(always)]
pub(super) fn put_with_heads(
    writer: &mut TraceWriter,
    ts: u64,
    entry: &SiteEntry,
    heads: &[ArgHead],
    annotations: &[(&'static str, DebugValue<'_>)],
) -> bool {
    let (bytes, len) = entry.padded();
    let mut sizes = [0u8; MAX_ANNOTATIONS];
    let mut event = len;
    for ((size, h), (_, v)) in sizes.iter_mut().zip(heads).zip(annotations) {
        let Some(s) = small_value_size(v) else {
            return false;
        };
        // The annotation's bytes after its length byte.
        let n = h.len() - 2 + s;
        *size = n as u8;
        event += 2 + n;
    }
    // A 1-byte TrackEvent length, and (each annotation being smaller) a
    // 1-byte length for each annotation.
    if event >= 128 {
        return false;
    }
    let Some(mut p) = writer.small_packet(1 + varint_len(ts) + 4 + event) else {
        return false;
    };
    put_head(&mut p, ts, event);
    p.put_padded(bytes, len);
    for ((size, h), (_, v)) in sizes.iter().zip(heads).zip(annotations) {
        let (word, n) = h.with_size(usize::from(*size));
        p.put_padded(&word, n);
        put_small_value(&mut p, v);
    }
    p.commit()
}

/// An event whose annotations are named by `iids` (interned already).
#[inline(always)]
pub(super) fn put_with_iids(
    writer: &mut TraceWriter,
    ts: u64,
    entry: &SiteEntry,
    iids: &[u64],
    annotations: &[(&'static str, DebugValue<'_>)],
) -> bool {
    let (bytes, len) = entry.padded();
    // timestamp, sequence_flags, track_event { the point's prefix,
    // debug_annotations (4) { name_iid (1), value } }.
    let mut max = 1 + MAX_VARINT_LEN + 4 + len;
    for (iid, (_, v)) in iids.iter().zip(annotations) {
        match small_value_len(v) {
            Some(l) => max += 3 + varint_len(*iid) + l,
            None => return false,
        }
    }
    let Some(mut p) = writer.small_packet(max) else {
        return false;
    };
    p.put([TIMESTAMP]);
    p.put_varint(ts);
    p.put([SEQUENCE_FLAGS, NEEDS_INCREMENTAL_STATE, TRACK_EVENT]);
    let event = p.open_len();
    p.put_padded(bytes, len);
    for (iid, (_, v)) in iids.iter().zip(annotations) {
        p.put([4 << 3 | 2]);
        let a = p.open_len();
        p.put([1 << 3]);
        p.put_varint(*iid);
        put_small_value(&mut p, v);
        p.close_len(a);
    }
    p.close_len(event);
    p.commit()
}

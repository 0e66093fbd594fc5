//! Android's app wakelock bundles (`TracePacket.app_wakelock_bundle`, a
//! frameworks extension) queued event by event: a bundle lists its events
//! as two packed lists, the interned id of each wakelock's description and
//! its time (the offset from the packet's time, shifted left by one, the
//! low bit set for an acquire), as upstream's module reads them. Each event
//! becomes a packet record of its own for `parser/app_wakelock.rs`, at the
//! packet's time plus its offset: an `AppWakelockBundle` holding the
//! description's interned id and whether the wakelock was acquired (the
//! parser reads the description from the same generation of interned data;
//! upstream copies it into each event, which would let a large description
//! named by many events grow the load past its trace's bytes). Malformed
//! lists count `app_wakelock_parse_error`, an id nothing interned
//! `app_wakelock_unknown_id`.

use protozero::varint::{decode_varint, encode_varint};
use protozero::{Decoder, FieldValue};

use super::Loader;
use crate::packet_fields::{PacketFields, Payload};

/// `TracePacket.app_wakelock_bundle`.
pub const APP_WAKELOCK_BUNDLE: u32 = 116;
/// `AppWakelockBundle.intern_id` (packed).
const INTERN_ID: u32 = 1;
/// `AppWakelockBundle.encoded_ts` (packed).
const ENCODED_TS: u32 = 2;
/// `AppWakelockBundle.acquired`.
const ACQUIRED: u32 = 4;
/// `InternedData.app_wakelock_info`.
const INTERNED_APP_WAKELOCK_INFO: u32 = 42;

/// The values of a packed varint field (every occurrence, in order); None
/// when one is malformed.
fn packed(bundle: &[u8], id: u32) -> Option<Vec<u64>> {
    let mut out = Vec::new();
    for f in Decoder::new(bundle).map_while(Result::ok) {
        if f.id != id {
            continue;
        }
        match f.value {
            FieldValue::Bytes(mut b) => {
                while !b.is_empty() {
                    let (v, n) = decode_varint(b).ok()?;
                    out.push(v);
                    b = b.get(n..)?;
                }
            }
            FieldValue::Varint(v) => out.push(v),
            _ => return None,
        }
    }
    Some(out)
}

/// An `AppWakelockBundle` of one event: its description's interned id
/// and whether the wakelock was acquired.
fn single_event(iid: u64, acquired: bool) -> Vec<u8> {
    let mut out = Vec::with_capacity(16);
    let mut buf = [0u8; 10];
    out.push((INTERN_ID << 3) as u8);
    let n = encode_varint(iid, &mut buf);
    out.extend_from_slice(&buf[..n]);
    out.push((ACQUIRED << 3) as u8);
    out.push(u8::from(acquired));
    out
}

impl Loader {
    /// Queues each event of an app wakelock bundle at its own time.
    pub(super) fn split_app_wakelocks(
        &mut self,
        payload: &[u8],
        pkt: &PacketFields<'_>,
        seq: u32,
        has_seq: bool,
        gen_idx: u32,
    ) {
        let (Some(ids), Some(times)) = (packed(payload, INTERN_ID), packed(payload, ENCODED_TS))
        else {
            self.parser.storage.stats.incr("app_wakelock_parse_error");
            return;
        };
        for (iid, encoded) in ids.into_iter().zip(times) {
            let known = self
                .generations
                .get(gen_idx as usize)
                .is_some_and(|g| g.interned(INTERNED_APP_WAKELOCK_INFO, iid).is_some());
            if !known {
                self.parser.storage.stats.incr("app_wakelock_unknown_id");
                continue;
            }
            let bytes = single_event(iid, encoded & 1 == 1);
            // The event's time is its packet's plus its offset: the offset
            // is added before the packet's clock is converted (a shift the
            // conversion keeps).
            let fields = PacketFields {
                timestamp: pkt.timestamp.map(|t| t.saturating_add(encoded >> 1)),
                ..*pkt
            };
            let forged = Payload {
                field: APP_WAKELOCK_BUNDLE,
                bytes: &bytes,
            };
            self.timestamp_and_queue(forged, &fields, seq, has_seq, gen_idx);
        }
    }
}

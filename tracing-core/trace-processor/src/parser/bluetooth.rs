//! Android Bluetooth stack events (`TracePacket.bluetooth_trace_event`, a
//! Bluetooth module extension, field 114): each event a
//! `BluetoothTraceEvent` slice of its duration on the one global
//! `BluetoothTraceEvent` track, with upstream's args for the fields the
//! event gives (`TracePacketType` by name, `Count`, `Length`, `Op Code`,
//! `Event Code`, `Subevent Code`, `Handle`).

use protozero::Decoder;

use super::Parser;
use super::importer::{Importer, Input};
use crate::storage::args::{ArgSetBuilder, ArgValue};
use crate::storage::rows::SliceRow;
use crate::tracker::tracks::{EventType, TrackSpec};

/// `TracePacket.bluetooth_trace_event`.
const BLUETOOTH_TRACE_EVENT: u32 = 114;

/// The payload this module imports.
pub const IMPORTERS: &[(u32, Importer)] = &[(BLUETOOTH_TRACE_EVENT, import)];

/// `BluetoothTracePacketType`'s names (an unknown value as protozero's
/// generated names give it).
fn packet_type(v: u64) -> &'static str {
    match v {
        1 => "HCI_CMD",
        2 => "HCI_EVT",
        3 => "HCI_ACL_RX",
        4 => "HCI_ACL_TX",
        5 => "HCI_SCO_RX",
        6 => "HCI_SCO_TX",
        7 => "HCI_ISO_RX",
        8 => "HCI_ISO_TX",
        _ => "PBZERO_UNKNOWN_ENUM_VALUE",
    }
}

fn import(p: &mut Parser, input: &Input<'_>) {
    let d = Decoder::new(input.bytes);
    let field = |id: u32| d.find_last(id).and_then(|f| f.as_u64().ok());
    let mut b = ArgSetBuilder::default();
    if let Some(t) = field(1) {
        let k = p.storage.strings.intern("TracePacketType");
        let v = p.storage.strings.intern(packet_type(t));
        b.add(k, k, ArgValue::String(v));
    }
    for (id, key) in [
        (2, "Count"),
        (3, "Length"),
        (5, "Op Code"),
        (6, "Event Code"),
        (7, "Subevent Code"),
        (8, "Handle"),
    ] {
        if let Some(v) = field(id) {
            let k = p.storage.strings.intern(key);
            b.add(k, k, ArgValue::Uint(v & 0xffff_ffff));
        }
    }
    let dur = field(4).map_or(0, |v| (v & 0xffff_ffff) as i64);
    let arg_set_id = p.storage.args.add_set(&b);
    let spec = TrackSpec::new(
        Some("BluetoothTraceEvent"),
        "bluetooth_trace_event",
        EventType::Slice,
    );
    let track_id = p.tracks.interned_counter(&mut p.storage, &spec);
    let name = p.storage.strings.intern("BluetoothTraceEvent");
    p.slices.begin(
        &mut p.storage,
        SliceRow {
            ts: input.ts,
            dur,
            track_id,
            name,
            arg_set_id: arg_set_id.into(),
            ..Default::default()
        },
    );
}

//! `surfaceflinger_transactions` (TracePacket field 94): one
//! `TransactionTraceEntry`, the transactions SurfaceFlinger committed at
//! one time, as a row of `__intrinsic_surfaceflinger_transactions` and one
//! row of `__intrinsic_surfaceflinger_transaction` per change: each layer
//! or display a transaction changed (its `what` bits named in
//! `__intrinsic_surfaceflinger_transaction_flag`), each transaction that
//! changed nothing, each layer or display added, destroyed or removed.

use protozero::{Decoder, FieldValue};

use super::super::Parser;
use super::super::importer::Input;
use super::{base64_proto_id, flatten_into};
use crate::column_store::strings::StrId;
use crate::hash::HashMap;
use crate::storage::args::ArgSetBuilder;
use crate::tables::winscope::{SfTransactionFlagRow, SfTransactionRow, SfTransactionsRow};

/// The stat counted when a proto could not be flattened into args.
const PARSE_ERRORS: &str = "winscope_sf_transactions_parse_errors";

/// `LayerState.what`'s low 32 bits (`ChangesLsb`), in upstream's order:
/// upstream lists `eShadowRadiusChanged` twice, so a change of the shadow
/// radius is named twice in its set.
const LAYER_FLAGS_LOW: &[(&str, u32)] = &[
    ("ePositionChanged", 0x1),
    ("eLayerChanged", 0x2),
    ("eAlphaChanged", 0x8),
    ("eMatrixChanged", 0x10),
    ("eTransparentRegionChanged", 0x20),
    ("eFlagsChanged", 0x40),
    ("eLayerStackChanged", 0x80),
    ("eReleaseBufferListenerChanged", 0x400),
    ("eShadowRadiusChanged", 0x800),
    ("eShadowRadiusChanged", 0x800),
    ("eBufferCropChanged", 0x2000),
    ("eRelativeLayerChanged", 0x4000),
    ("eReparent", 0x8000),
    ("eColorChanged", 0x1_0000),
    ("eBufferTransformChanged", 0x4_0000),
    ("eTransformToDisplayInverseChanged", 0x8_0000),
    ("eCropChanged", 0x10_0000),
    ("eBufferChanged", 0x20_0000),
    ("eAcquireFenceChanged", 0x40_0000),
    ("eDataspaceChanged", 0x80_0000),
    ("eHdrMetadataChanged", 0x100_0000),
    ("eSurfaceDamageRegionChanged", 0x200_0000),
    ("eApiChanged", 0x400_0000),
    ("eSidebandStreamChanged", 0x800_0000),
    ("eColorTransformChanged", 0x1000_0000),
    ("eHasListenerCallbacksChanged", 0x2000_0000),
    ("eInputInfoChanged", 0x4000_0000),
    ("eCornerRadiusChanged", 0x8000_0000),
];

/// `LayerState.what`'s high 32 bits (`ChangesMsb`).
const LAYER_FLAGS_HIGH: &[(&str, u32)] = &[
    ("eDestinationFrameChanged", 0x1),
    ("eCachedBufferChanged", 0x2),
    ("eBackgroundColorChanged", 0x4),
    ("eMetadataChanged", 0x8),
    ("eColorSpaceAgnosticChanged", 0x10),
    ("eFrameRateSelectionPriority", 0x20),
    ("eFrameRateChanged", 0x40),
    ("eBackgroundBlurRadiusChanged", 0x80),
    ("eProducerDisconnect", 0x100),
    ("eFixedTransformHintChanged", 0x200),
    ("eFrameNumberChanged", 0x400),
    ("eBlurRegionsChanged", 0x800),
    ("eAutoRefreshChanged", 0x1000),
    ("eStretchChanged", 0x2000),
    ("eTrustedOverlayChanged", 0x4000),
    ("eDropInputModeChanged", 0x8000),
];

/// `DisplayState.what` (`DisplayState.Changes`).
const DISPLAY_FLAGS: &[(&str, u32)] = &[
    ("eSurfaceChanged", 0x1),
    ("eLayerStackChanged", 0x2),
    ("eDisplayProjectionChanged", 0x4),
    ("eDisplaySizeChanged", 0x8),
    ("eFlagsChanged", 0x10),
];

/// The flag sets named so far: one id per distinct `what` of layers and
/// of displays, numbered together in order of first sight.
#[derive(Debug, Default)]
pub struct SfTransactionsState {
    layer_flags: HashMap<u64, u32>,
    display_flags: HashMap<u64, u32>,
}

/// TransactionTraceEntry's fields.
mod entry {
    pub const VSYNC_ID: u32 = 2;
    pub const TRANSACTIONS: u32 = 3;
    pub const ADDED_LAYERS: u32 = 4;
    pub const DESTROYED_LAYERS: u32 = 5;
    pub const ADDED_DISPLAYS: u32 = 6;
    pub const REMOVED_DISPLAYS: u32 = 7;
    pub const DESTROYED_LAYER_HANDLES: u32 = 8;
}

/// TransactionState's fields.
mod transaction {
    pub const PID: u32 = 1;
    pub const UID: u32 = 2;
    pub const TRANSACTION_ID: u32 = 6;
    pub const LAYER_CHANGES: u32 = 7;
    pub const DISPLAY_CHANGES: u32 = 8;
    /// `apply_token` and `transaction_barriers`: added to each change's
    /// args (upstream names fields 10 and 11).
    pub const SHARED_WITH_CHANGES: &[u32] = &[10, 11];
}

/// What a change row knows of its transaction.
#[derive(Clone, Copy)]
struct Txn<'a> {
    id: i64,
    pid: u32,
    uid: u32,
    bytes: &'a [u8],
}

/// Imports one entry.
pub(super) fn import(p: &mut Parser, input: &Input<'_>) {
    let bytes = input.bytes;
    let base64 = base64_proto_id(&mut p.storage.strings, bytes);
    let vsync_id = Decoder::new(bytes)
        .find_last(entry::VSYNC_ID)
        .and_then(|f| f.as_i64().ok());
    let arg_set_id = super::args_of(p, "TransactionTraceEntry", bytes, PARSE_ERRORS);
    let rows = &mut p.storage.winscope.sf_transactions;
    let snapshot_id = u32::try_from(rows.len()).unwrap_or(u32::MAX);
    rows.push(SfTransactionsRow {
        ts: input.ts,
        arg_set_id,
        base64_proto_id: Some(base64),
        vsync_id: Some(vsync_id.unwrap_or(0)),
    });

    // Upstream adds the kinds of change in this order, each kind in its
    // fields' order.
    let fields: Vec<_> = Decoder::new(bytes).map_while(Result::ok).collect();
    for f in fields.iter().filter(|f| f.id == entry::TRANSACTIONS) {
        if let FieldValue::Bytes(b) = f.value {
            import_transaction(p, snapshot_id, b);
        }
    }
    for f in fields.iter().filter(|f| f.id == entry::ADDED_LAYERS) {
        if let FieldValue::Bytes(b) = f.value {
            let layer_id = Decoder::new(b).find_last(1).and_then(|f| f.as_u32().ok());
            let row = SfTransactionRow {
                snapshot_id,
                layer_id: Some(layer_id.unwrap_or(0)),
                transaction_type: p.storage.strings.intern("LAYER_ADDED"),
                base64_proto_id: Some(base64_proto_id(&mut p.storage.strings, b)),
                ..Default::default()
            };
            push_change(p, row, "LayerCreationArgs", b, None);
        }
    }
    for id in scalars(&fields, entry::DESTROYED_LAYERS) {
        push_plain(p, snapshot_id, "LAYER_DESTROYED", Some(id as u32), None);
    }
    for f in fields.iter().filter(|f| f.id == entry::ADDED_DISPLAYS) {
        if let FieldValue::Bytes(b) = f.value {
            display_change(p, snapshot_id, b, "DISPLAY_ADDED", None);
        }
    }
    for id in scalars(&fields, entry::REMOVED_DISPLAYS) {
        push_plain(p, snapshot_id, "DISPLAY_REMOVED", None, Some(id as u32));
    }
    for id in scalars(&fields, entry::DESTROYED_LAYER_HANDLES) {
        push_plain(
            p,
            snapshot_id,
            "LAYER_HANDLE_DESTROYED",
            Some(id as u32),
            None,
        );
    }
}

/// The values of a repeated varint field, packed or not.
fn scalars(fields: &[protozero::Field<'_>], id: u32) -> Vec<u64> {
    let mut out = Vec::new();
    for f in fields.iter().filter(|f| f.id == id) {
        match f.value {
            FieldValue::Varint(v) => out.push(v),
            FieldValue::Bytes(_) => {
                if let Ok(it) = f.packed_varints() {
                    out.extend(it);
                }
            }
            _ => {}
        }
    }
    out
}

/// A change row with no args of its own.
fn push_plain(
    p: &mut Parser,
    snapshot_id: u32,
    kind: &str,
    layer_id: Option<u32>,
    display_id: Option<u32>,
) {
    let transaction_type = p.storage.strings.intern(kind);
    p.storage.winscope.sf_transaction.push(SfTransactionRow {
        snapshot_id,
        layer_id,
        display_id,
        transaction_type,
        ..Default::default()
    });
}

/// One `TransactionState`: a row per layer and display it changed, or one
/// `NOOP` row.
fn import_transaction(p: &mut Parser, snapshot_id: u32, bytes: &[u8]) {
    let d = Decoder::new(bytes);
    let txn = Txn {
        id: d
            .find_last(transaction::TRANSACTION_ID)
            .and_then(|f| f.as_u64().ok())
            .unwrap_or(0) as i64,
        pid: d
            .find_last(transaction::PID)
            .and_then(|f| f.as_i32().ok())
            .unwrap_or(0) as u32,
        uid: d
            .find_last(transaction::UID)
            .and_then(|f| f.as_i32().ok())
            .unwrap_or(0) as u32,
        bytes,
    };
    let fields: Vec<_> = Decoder::new(bytes).map_while(Result::ok).collect();
    let layers: Vec<&[u8]> = messages(&fields, transaction::LAYER_CHANGES);
    let displays: Vec<&[u8]> = messages(&fields, transaction::DISPLAY_CHANGES);
    if layers.is_empty() && displays.is_empty() {
        let transaction_type = p.storage.strings.intern("NOOP");
        p.storage.winscope.sf_transaction.push(SfTransactionRow {
            snapshot_id,
            transaction_id: Some(txn.id),
            pid: Some(txn.pid),
            uid: Some(txn.uid),
            transaction_type,
            ..Default::default()
        });
        return;
    }
    for b in layers {
        layer_change(p, snapshot_id, b, txn);
    }
    for b in displays {
        display_change(p, snapshot_id, b, "DISPLAY_CHANGED", Some(txn));
    }
}

/// The payloads of a repeated message field.
fn messages<'a>(fields: &[protozero::Field<'a>], id: u32) -> Vec<&'a [u8]> {
    fields
        .iter()
        .filter(|f| f.id == id)
        .filter_map(|f| match f.value {
            FieldValue::Bytes(b) => Some(b),
            _ => None,
        })
        .collect()
}

fn layer_change(p: &mut Parser, snapshot_id: u32, bytes: &[u8], txn: Txn<'_>) {
    let d = Decoder::new(bytes);
    let layer_id = d.find_last(1).and_then(|f| f.as_u32().ok()).unwrap_or(0);
    let flags_id = d.find_last(2).and_then(|f| f.as_u64().ok()).map(|what| {
        flags_id(p, what, true, |w| {
            let low = w as u32;
            let high = (w >> 32) as u32;
            LAYER_FLAGS_LOW
                .iter()
                .filter(|(_, bit)| low & bit != 0)
                .chain(LAYER_FLAGS_HIGH.iter().filter(|(_, bit)| high & bit != 0))
                .map(|(name, _)| *name)
                .collect()
        })
    });
    let row = SfTransactionRow {
        snapshot_id,
        transaction_id: Some(txn.id),
        pid: Some(txn.pid),
        uid: Some(txn.uid),
        layer_id: Some(layer_id),
        flags_id,
        transaction_type: p.storage.strings.intern("LAYER_CHANGED"),
        base64_proto_id: Some(base64_proto_id(&mut p.storage.strings, bytes)),
        ..Default::default()
    };
    push_change(p, row, "LayerState", bytes, Some(txn.bytes));
}

fn display_change(
    p: &mut Parser,
    snapshot_id: u32,
    bytes: &[u8],
    kind: &str,
    txn: Option<Txn<'_>>,
) {
    let d = Decoder::new(bytes);
    let display_id = d.find_last(1).and_then(|f| f.as_i32().ok()).unwrap_or(0) as u32;
    let flags_id = d.find_last(2).and_then(|f| f.as_u64().ok()).map(|what| {
        flags_id(p, what, false, |w| {
            DISPLAY_FLAGS
                .iter()
                .filter(|(_, bit)| (w as u32) & bit != 0)
                .map(|(name, _)| *name)
                .collect()
        })
    });
    let row = SfTransactionRow {
        snapshot_id,
        transaction_id: txn.map(|t| t.id),
        pid: txn.map(|t| t.pid),
        uid: txn.map(|t| t.uid),
        display_id: Some(display_id),
        flags_id,
        transaction_type: p.storage.strings.intern(kind),
        base64_proto_id: Some(base64_proto_id(&mut p.storage.strings, bytes)),
        ..Default::default()
    };
    push_change(p, row, "DisplayState", bytes, txn.map(|t| t.bytes));
}

/// The id of the flag set of `what`, its flags added the first time.
fn flags_id(
    p: &mut Parser,
    what: u64,
    layer: bool,
    names: impl Fn(u64) -> Vec<&'static str>,
) -> u32 {
    let st = &mut p.winscope.sf_transactions;
    let known = if layer {
        st.layer_flags.get(&what)
    } else {
        st.display_flags.get(&what)
    };
    if let Some(&id) = known {
        return id;
    }
    let id = u32::try_from(st.layer_flags.len() + st.display_flags.len()).unwrap_or(u32::MAX);
    if layer {
        st.layer_flags.insert(what, id);
    } else {
        st.display_flags.insert(what, id);
    }
    for name in names(what) {
        let flag: StrId = p.storage.strings.intern(name);
        p.storage
            .winscope
            .sf_transaction_flags
            .push(SfTransactionFlagRow { flags_id: id, flag });
    }
    id
}

/// Adds a change row with its args: the change's own fields, and the
/// transaction's apply token and barriers when it belongs to one.
fn push_change(
    p: &mut Parser,
    mut row: SfTransactionRow,
    message: &str,
    bytes: &[u8],
    txn: Option<&[u8]>,
) {
    let mut builder = ArgSetBuilder::default();
    let strings = &mut p.storage.strings;
    let ok = flatten_into(strings, &mut builder, message, bytes, None);
    if let Some(t) = txn {
        // Upstream does not count a failure of this second pass.
        let _ = flatten_into(
            strings,
            &mut builder,
            "TransactionState",
            t,
            Some(transaction::SHARED_WITH_CHANGES),
        );
    }
    if !ok {
        p.storage.stats.incr(PARSE_ERRORS);
    }
    row.arg_set_id = p.storage.args.add_set(&builder);
    p.storage.winscope.sf_transaction.push(row);
}

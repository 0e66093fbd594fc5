//! The Winscope tables (upstream's `winscope_tables.py` and the input
//! event tables of `android_tables.py`): Android's window-system state as
//! Winscope records it, SurfaceFlinger's transactions and layer snapshots,
//! the input method dumps, the input events. Each entry keeps its raw proto
//! (`base64_proto_id`: the string pool id of its base64 text, as upstream)
//! and its fields flattened into `args` (`parser/proto_to_args.rs`).

use super::table;
use crate::storage::strings::StrId;

table! {
    /// A row of `__intrinsic_surfaceflinger_transactions`: the transactions
    /// SurfaceFlinger committed together at one time.
    pub struct SfTransactionsRow in "__intrinsic_surfaceflinger_transactions" sorted by ts,
        views ["surfaceflinger_transactions"] {
        /// When they were committed.
        ts: i64,
        /// The entry's fields.
        arg_set_id: Option<u32>,
        /// The string id of the entry's proto, base64-encoded.
        base64_proto_id: Option<u32>,
        /// The vsync id of the entry.
        vsync_id: Option<i64>,
    }
}

table! {
    /// A row of `__intrinsic_surfaceflinger_transaction`: one change of
    /// one entry (a layer or display changed, added or removed, or a
    /// transaction with no change).
    pub struct SfTransactionRow in "__intrinsic_surfaceflinger_transaction" {
        /// The entry (`__intrinsic_surfaceflinger_transactions` id).
        snapshot_id: u32,
        /// The change's fields.
        arg_set_id: Option<u32>,
        /// The string id of the change's proto, base64-encoded.
        base64_proto_id: Option<u32>,
        /// The transaction.
        transaction_id: Option<i64>,
        /// The process that sent it.
        pid: Option<u32>,
        /// Its uid.
        uid: Option<u32>,
        /// The layer changed, added or destroyed.
        layer_id: Option<u32>,
        /// The display changed, added or removed.
        display_id: Option<u32>,
        /// The set of flags naming what changed
        /// (`__intrinsic_surfaceflinger_transaction_flag.flags_id`).
        flags_id: Option<u32>,
        /// `LAYER_CHANGED`, `DISPLAY_CHANGED`, `NOOP`, `LAYER_ADDED`, ...
        transaction_type: StrId,
    }
}

table! {
    /// A row of `__intrinsic_surfaceflinger_transaction_flag`: one flag of
    /// a set of change flags.
    pub struct SfTransactionFlagRow in "__intrinsic_surfaceflinger_transaction_flag" {
        /// The set.
        flags_id: u32,
        /// The flag's name (`ePositionChanged`, ...).
        flag: StrId,
    }
}

table! {
    /// A row of `__intrinsic_inputmethod_clients`: one dump of the input
    /// method clients.
    pub struct InputMethodClientsRow in "__intrinsic_inputmethod_clients" sorted by ts {
        /// When the dump was taken.
        ts: i64,
        /// The dump's fields.
        arg_set_id: Option<u32>,
        /// The string id of the dump's proto, base64-encoded.
        base64_proto_id: Option<u32>,
    }
}

table! {
    /// A row of `__intrinsic_inputmethod_manager_service`: one dump of the
    /// input method manager service.
    pub struct InputMethodManagerServiceRow in "__intrinsic_inputmethod_manager_service"
        sorted by ts {
        /// When the dump was taken.
        ts: i64,
        /// The dump's fields.
        arg_set_id: Option<u32>,
        /// The string id of the dump's proto, base64-encoded.
        base64_proto_id: Option<u32>,
    }
}

table! {
    /// A row of `__intrinsic_inputmethod_service`: one dump of the input
    /// method service.
    pub struct InputMethodServiceRow in "__intrinsic_inputmethod_service" sorted by ts {
        /// When the dump was taken.
        ts: i64,
        /// The dump's fields.
        arg_set_id: Option<u32>,
        /// The string id of the dump's proto, base64-encoded.
        base64_proto_id: Option<u32>,
    }
}

table! {
    /// A row of `__intrinsic_android_motion_events`: one motion event the
    /// input dispatcher saw.
    pub struct AndroidMotionEventRow in "__intrinsic_android_motion_events" {
        /// The event's id.
        event_id: u32,
        /// The packet's time.
        ts: i64,
        /// The event's fields.
        arg_set_id: Option<u32>,
        /// The string id of the event's proto, base64-encoded.
        base64_proto_id: Option<u32>,
        /// The input source.
        source: Option<u32>,
        /// The action.
        action: Option<i64>,
        /// The device.
        device_id: Option<i64>,
        /// The display.
        display_id: Option<i64>,
    }
}

table! {
    /// A row of `__intrinsic_android_key_events`: one key event the input
    /// dispatcher saw.
    pub struct AndroidKeyEventRow in "__intrinsic_android_key_events" {
        /// The event's id.
        event_id: u32,
        /// The packet's time.
        ts: i64,
        /// The event's fields.
        arg_set_id: Option<u32>,
        /// The string id of the event's proto, base64-encoded.
        base64_proto_id: Option<u32>,
        /// The input source.
        source: Option<u32>,
        /// The action.
        action: Option<i64>,
        /// The device.
        device_id: Option<i64>,
        /// The display.
        display_id: Option<i64>,
        /// The key.
        key_code: Option<i64>,
    }
}

table! {
    /// A row of `__intrinsic_android_input_event_dispatch`: one input
    /// event sent to one window.
    pub struct AndroidInputEventDispatchRow in "__intrinsic_android_input_event_dispatch" {
        /// The event's id.
        event_id: u32,
        /// The dispatch's fields.
        arg_set_id: Option<u32>,
        /// The vsync the window's frame was drawn at.
        vsync_id: i64,
        /// The window.
        window_id: i32,
        /// The string id of the dispatch's proto, base64-encoded.
        base64_proto_id: Option<u32>,
    }
}

/// The Winscope tables' rows as the importers fill them.
#[derive(Debug, Clone, Default)]
pub struct WinscopeRows {
    /// `__intrinsic_surfaceflinger_transactions`.
    pub sf_transactions: Vec<SfTransactionsRow>,
    /// `__intrinsic_surfaceflinger_transaction`.
    pub sf_transaction: Vec<SfTransactionRow>,
    /// `__intrinsic_surfaceflinger_transaction_flag`.
    pub sf_transaction_flags: Vec<SfTransactionFlagRow>,
    /// `__intrinsic_inputmethod_clients`.
    pub inputmethod_clients: Vec<InputMethodClientsRow>,
    /// `__intrinsic_inputmethod_manager_service`.
    pub inputmethod_manager_service: Vec<InputMethodManagerServiceRow>,
    /// `__intrinsic_inputmethod_service`.
    pub inputmethod_service: Vec<InputMethodServiceRow>,
    /// `__intrinsic_android_motion_events`.
    pub motion_events: Vec<AndroidMotionEventRow>,
    /// `__intrinsic_android_key_events`.
    pub key_events: Vec<AndroidKeyEventRow>,
    /// `__intrinsic_android_input_event_dispatch`.
    pub input_event_dispatch: Vec<AndroidInputEventDispatchRow>,
}

#[cfg(feature = "sql")]
impl WinscopeRows {
    /// Every Winscope table, frozen.
    pub fn freeze(
        &self,
        strings: &std::sync::Arc<crate::storage::strings::StringPool>,
    ) -> Vec<crate::sql::table::Table> {
        vec![
            SfTransactionsRow::freeze(&self.sf_transactions, strings),
            SfTransactionRow::freeze(&self.sf_transaction, strings),
            SfTransactionFlagRow::freeze(&self.sf_transaction_flags, strings),
            InputMethodClientsRow::freeze(&self.inputmethod_clients, strings),
            InputMethodManagerServiceRow::freeze(&self.inputmethod_manager_service, strings),
            InputMethodServiceRow::freeze(&self.inputmethod_service, strings),
            AndroidMotionEventRow::freeze(&self.motion_events, strings),
            AndroidKeyEventRow::freeze(&self.key_events, strings),
            AndroidInputEventDispatchRow::freeze(&self.input_event_dispatch, strings),
        ]
    }
}

/// The Winscope tables' declarations.
pub const TABLES: &[super::TableDecl] = &[
    SfTransactionsRow::TABLE,
    SfTransactionRow::TABLE,
    SfTransactionFlagRow::TABLE,
    InputMethodClientsRow::TABLE,
    InputMethodManagerServiceRow::TABLE,
    InputMethodServiceRow::TABLE,
    AndroidMotionEventRow::TABLE,
    AndroidKeyEventRow::TABLE,
    AndroidInputEventDispatchRow::TABLE,
];

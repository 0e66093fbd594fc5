//! The Winscope tables (upstream's `winscope_tables.py` and the input
//! event tables of `android_tables.py`): Android's window-system state as
//! Winscope records it, SurfaceFlinger's transactions and layer snapshots,
//! the input method dumps, the input events. Each entry keeps its raw proto
//! (`base64_proto_id`: the string pool id of its base64 text, as upstream)
//! and its fields flattened into `args` (`parser/proto_to_args.rs`).

use super::table;
use crate::column_store::strings::StrId;

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

table! {
    /// A row of `__intrinsic_surfaceflinger_layers_snapshot`: one dump of
    /// SurfaceFlinger's layers.
    pub struct SfLayersSnapshotRow in "__intrinsic_surfaceflinger_layers_snapshot" sorted by ts,
        views ["surfaceflinger_layers_snapshot"] {
        /// When it was taken.
        ts: i64,
        /// The snapshot's fields (but its layers).
        arg_set_id: Option<u32>,
        /// The string id of the snapshot's proto, base64-encoded.
        base64_proto_id: Option<u32>,
        /// The packet's sequence.
        sequence_id: u32,
        /// Whether the snapshot had no elapsed time.
        has_invalid_elapsed_ts: Option<u32>,
    }
}

table! {
    /// A row of `__intrinsic_surfaceflinger_layer`: one layer of one
    /// snapshot.
    pub struct SfLayerRow in "__intrinsic_surfaceflinger_layer", views ["surfaceflinger_layer"] {
        /// The snapshot.
        snapshot_id: u32,
        /// The layer's fields.
        arg_set_id: Option<u32>,
        /// The string id of the layer's proto, base64-encoded.
        base64_proto_id: Option<u32>,
        /// The layer's id.
        layer_id: Option<i64>,
        /// Its name.
        layer_name: StrId,
        /// Whether it is visible, as Winscope computes it.
        is_visible: i64,
        /// Its parent layer.
        parent: Option<i64>,
        /// Corner radius, top left.
        corner_radius_tl: Option<f64>,
        /// Corner radius, top right.
        corner_radius_tr: Option<f64>,
        /// Corner radius, bottom left.
        corner_radius_bl: Option<f64>,
        /// Corner radius, bottom right.
        corner_radius_br: Option<f64>,
        /// The hardware composer's composition type.
        hwc_composition_type: Option<i64>,
        /// Whether policy hides it (the hidden flag, or the offscreen root).
        is_hidden_by_policy: i64,
        /// The layer it is z-ordered relative to.
        z_order_relative_of: Option<i64>,
        /// Whether that layer is missing from the snapshot.
        is_missing_z_parent: i64,
        /// Its rect (`__intrinsic_winscope_trace_rect`).
        layer_rect_id: Option<u32>,
        /// Its input rect (`__intrinsic_winscope_trace_rect`).
        input_rect_id: Option<u32>,
    }
}

table! {
    /// A row of `__intrinsic_surfaceflinger_display`: one display of one
    /// snapshot.
    pub struct SfDisplayRow in "__intrinsic_surfaceflinger_display" {
        /// The snapshot.
        snapshot_id: u32,
        /// Whether the display is on.
        is_on: i64,
        /// Whether it is virtual.
        is_virtual: i64,
        /// Its rect (`__intrinsic_winscope_trace_rect`).
        trace_rect_id: u32,
        /// Its id.
        display_id: i64,
        /// Its name.
        display_name: StrId,
    }
}

table! {
    /// A row of `__intrinsic_winscope_rect`: one distinct rectangle.
    pub struct WinscopeRectRow in "__intrinsic_winscope_rect" {
        /// Left.
        x: f64,
        /// Top.
        y: f64,
        /// Width.
        w: f64,
        /// Height.
        h: f64,
    }
}

table! {
    /// A row of `__intrinsic_winscope_transform`: one distinct transform.
    pub struct WinscopeTransformRow in "__intrinsic_winscope_transform" {
        /// Scale x.
        dsdx: f64,
        /// Skew.
        dtdx: f64,
        /// Translation x.
        tx: f64,
        /// Skew.
        dtdy: f64,
        /// Scale y.
        dsdy: f64,
        /// Translation y.
        ty: f64,
    }
}

table! {
    /// A row of `__intrinsic_winscope_trace_rect`: a rectangle as one
    /// entry of a trace shows it.
    pub struct WinscopeTraceRectRow in "__intrinsic_winscope_trace_rect" {
        /// The rectangle.
        rect_id: u32,
        /// Its group (a display's layer stack).
        group_id: u32,
        /// Its depth.
        depth: u32,
        /// Whether it is a spy window's.
        is_spy: i64,
        /// Whether it is visible.
        is_visible: i64,
        /// Its opacity.
        opacity: Option<f64>,
        /// Its transform.
        transform_id: u32,
        /// Its border's width.
        border_width: Option<f64>,
        /// Its border's colour.
        border_color: Option<u32>,
    }
}

table! {
    /// A row of `__intrinsic_winscope_fill_region`: one rectangle of a
    /// trace rect's fill region.
    pub struct WinscopeFillRegionRow in "__intrinsic_winscope_fill_region" {
        /// The trace rect.
        trace_rect_id: u32,
        /// The rectangle.
        rect_id: u32,
    }
}

table! {
    /// A row of `__intrinsic_window_manager_shell_transition_protos`: one
    /// proto of one shell transition (a transition is written in several).
    pub struct ShellTransitionProtoRow in "__intrinsic_window_manager_shell_transition_protos" {
        /// The transition.
        transition_id: i64,
        /// The string id of the proto, base64-encoded.
        base64_proto_id: Option<u32>,
    }
}

table! {
    /// A row of `__intrinsic_window_manager_shell_transition_participants`:
    /// one window or layer a shell transition changed.
    pub struct ShellTransitionParticipantRow
        in "__intrinsic_window_manager_shell_transition_participants" {
        /// The transition.
        transition_id: i64,
        /// The layer.
        layer_id: Option<u32>,
        /// The window.
        window_id: Option<u32>,
        /// The change's mode.
        mode: Option<u32>,
        /// The change's flags.
        flags: Option<u32>,
        /// The display it starts on.
        start_display_id: Option<u32>,
        /// The display it ends on.
        end_display_id: Option<u32>,
        /// Its rotation at the start.
        start_rotation: Option<u32>,
        /// Its rotation at the end.
        end_rotation: Option<u32>,
        /// Its bounds at the start (`__intrinsic_winscope_rect`).
        start_abs_bounds_rect_id: Option<u32>,
        /// Its bounds at the end (`__intrinsic_winscope_rect`).
        end_abs_bounds_rect_id: Option<u32>,
    }
}

table! {
    /// A row of `__intrinsic_protolog`: one ProtoLog message, decoded
    /// with the viewer config's format string.
    pub struct ProtoLogRow in "__intrinsic_protolog" sorted by ts, views ["protolog"] {
        /// When it was logged.
        ts: i64,
        /// Its level (`DEBUG`, `VERBOSE`, `INFO`, `WARN`, `ERROR`, `WTF`,
        /// `UNKNOWN`).
        level: StrId,
        /// Its group's tag.
        tag: StrId,
        /// The format string filled with the message's arguments.
        message: StrId,
        /// The stack trace captured where it was logged.
        stacktrace: StrId,
        /// Where in the source it was logged.
        location: StrId,
    }
}

table! {
    /// A row of `__intrinsic_viewcapture`: one capture of an app window's
    /// views.
    pub struct ViewCaptureRow in "__intrinsic_viewcapture" sorted by ts {
        /// When the views were captured.
        ts: i64,
        /// The capture's fields (but its views).
        arg_set_id: Option<u32>,
        /// The string id of the capture's proto, base64-encoded.
        base64_proto_id: Option<u32>,
        /// The app's package (interned on the sequence).
        package_name: StrId,
        /// The window (interned on the sequence).
        window_name: StrId,
    }
}

table! {
    /// A row of `__intrinsic_viewcapture_view`: one view of one capture.
    pub struct ViewCaptureViewRow in "__intrinsic_viewcapture_view" {
        /// The capture (`__intrinsic_viewcapture` id).
        snapshot_id: u32,
        /// The view's fields, interned strings resolved.
        arg_set_id: Option<u32>,
        /// The string id of the view's proto, base64-encoded.
        base64_proto_id: Option<u32>,
        /// The view's id in the capture.
        node_id: u32,
        /// Its hash code.
        hashcode: u32,
        /// Whether it is visible (its and its ancestors' visibility flags,
        /// and a size).
        is_visible: i64,
        /// Its parent's id (the root's is -1 as an unsigned number).
        parent_id: u32,
        /// Its view id (interned on the sequence).
        view_id: StrId,
        /// Its class (interned on the sequence).
        class_name: StrId,
        /// Its rectangle (`__intrinsic_winscope_trace_rect`).
        trace_rect_id: u32,
    }
}

table! {
    /// A row of `__intrinsic_viewcapture_interned_data`: one interned
    /// string a ViewCapture proto refers to, so the proto can be read
    /// again without its sequence.
    pub struct ViewCaptureInternedDataRow in "__intrinsic_viewcapture_interned_data" {
        /// The proto (`base64_proto_id` of its row).
        base64_proto_id: u32,
        /// The field holding the iid.
        flat_key: StrId,
        /// The iid.
        iid: i64,
        /// The string it stands for.
        deinterned_value: StrId,
    }
}

table! {
    /// A row of `__intrinsic_window_manager_shell_transitions`: one shell
    /// transition, its protos merged.
    pub struct ShellTransitionRow in "__intrinsic_window_manager_shell_transitions",
        views ["window_manager_shell_transitions"] {
        /// When it was sent (else dispatched; 0 if neither).
        ts: i64,
        /// Its id.
        transition_id: i64,
        /// The fields of all its protos.
        arg_set_id: Option<u32>,
        /// Its type.
        transition_type: Option<u32>,
        /// When it was sent.
        send_time_ns: Option<i64>,
        /// When it was dispatched.
        dispatch_time_ns: Option<i64>,
        /// From dispatch to finish, for a played transition.
        duration_ns: Option<i64>,
        /// When it finished.
        finish_time_ns: Option<i64>,
        /// When the shell aborted it.
        shell_abort_time_ns: Option<i64>,
        /// When WindowManager aborted it.
        wm_abort_time_ns: Option<i64>,
        /// When it was merged.
        merge_time_ns: Option<i64>,
        /// When it was created.
        create_time_ns: Option<i64>,
        /// The handler that played it.
        handler: Option<i64>,
        /// `played`, `merged`, `aborted`, or none.
        status: StrId,
        /// Its flags.
        flags: Option<u32>,
        /// Its start transaction.
        start_transaction_id: Option<i64>,
        /// Its finish transaction.
        finish_transaction_id: Option<i64>,
    }
}

table! {
    /// A row of `__intrinsic_window_manager_shell_transition_handlers`:
    /// one transition handler's id and name.
    pub struct ShellTransitionHandlerRow in "__intrinsic_window_manager_shell_transition_handlers",
        views ["window_manager_shell_transition_handlers"] {
        /// The id transitions name it by.
        handler_id: i64,
        /// Its name.
        handler_name: StrId,
        /// The string id of the mappings' proto, base64-encoded.
        base64_proto_id: Option<u32>,
    }
}

table! {
    /// A row of `__intrinsic_windowmanager`: one dump of WindowManager's
    /// state (its window container tree left out).
    pub struct WindowManagerRow in "__intrinsic_windowmanager" sorted by ts {
        /// When it was taken.
        ts: i64,
        /// The dump's fields, the container tree left out.
        arg_set_id: Option<u32>,
        /// The string id of the dump's proto without the container tree,
        /// base64-encoded.
        base64_proto_id: Option<u32>,
        /// The focused display.
        focused_display_id: u32,
        /// Whether the dump had no elapsed time.
        has_invalid_elapsed_ts: i64,
    }
}

table! {
    /// A row of `__intrinsic_windowmanager_windowcontainer`: one window
    /// container of one WindowManager dump.
    pub struct WindowManagerWindowContainerRow in "__intrinsic_windowmanager_windowcontainer" {
        /// The dump (`__intrinsic_windowmanager`).
        snapshot_id: u32,
        /// Its fields (its children left out).
        arg_set_id: Option<u32>,
        /// The string id of its proto without children, base64-encoded.
        base64_proto_id: Option<u32>,
        /// Its title.
        title: StrId,
        /// Its token.
        token: i64,
        /// Its parent's token.
        parent_token: Option<i64>,
        /// Its index among its parent's children.
        child_index: Option<i64>,
        /// Whether it is visible.
        is_visible: Option<i64>,
        /// Its rect (`__intrinsic_winscope_trace_rect`).
        window_rect_id: Option<u32>,
        /// Its kind ("DisplayContent", "Task", ...).
        container_type: StrId,
        /// A name shown instead of its title.
        name_override: StrId,
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
    /// `__intrinsic_surfaceflinger_layers_snapshot`.
    pub sf_snapshots: Vec<SfLayersSnapshotRow>,
    /// `__intrinsic_surfaceflinger_layer`.
    pub sf_layers: Vec<SfLayerRow>,
    /// `__intrinsic_surfaceflinger_display`.
    pub sf_displays: Vec<SfDisplayRow>,
    /// `__intrinsic_winscope_rect`.
    pub rects: Vec<WinscopeRectRow>,
    /// `__intrinsic_winscope_transform`.
    pub transforms: Vec<WinscopeTransformRow>,
    /// `__intrinsic_winscope_trace_rect`.
    pub trace_rects: Vec<WinscopeTraceRectRow>,
    /// `__intrinsic_winscope_fill_region`.
    pub fill_regions: Vec<WinscopeFillRegionRow>,
    /// `__intrinsic_window_manager_shell_transition_protos`.
    pub shell_transition_protos: Vec<ShellTransitionProtoRow>,
    /// `__intrinsic_window_manager_shell_transition_participants`.
    pub shell_transition_participants: Vec<ShellTransitionParticipantRow>,
    /// `__intrinsic_protolog`.
    pub protolog: Vec<ProtoLogRow>,
    /// `__intrinsic_viewcapture`.
    pub viewcapture: Vec<ViewCaptureRow>,
    /// `__intrinsic_viewcapture_view`.
    pub viewcapture_views: Vec<ViewCaptureViewRow>,
    /// `__intrinsic_viewcapture_interned_data`.
    pub viewcapture_interned: Vec<ViewCaptureInternedDataRow>,
    /// `__intrinsic_window_manager_shell_transitions`.
    pub shell_transitions: Vec<ShellTransitionRow>,
    /// `__intrinsic_window_manager_shell_transition_handlers`.
    pub shell_transition_handlers: Vec<ShellTransitionHandlerRow>,
    /// `__intrinsic_windowmanager`.
    pub windowmanager: Vec<WindowManagerRow>,
    /// `__intrinsic_windowmanager_windowcontainer`.
    pub windowmanager_containers: Vec<WindowManagerWindowContainerRow>,
}

#[cfg(feature = "sql")]
impl WinscopeRows {
    /// Every Winscope table, frozen.
    pub fn freeze(
        &self,
        strings: &std::sync::Arc<crate::column_store::strings::StringPool>,
    ) -> Vec<crate::column_store::table::Table> {
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
            SfLayersSnapshotRow::freeze(&self.sf_snapshots, strings),
            SfLayerRow::freeze(&self.sf_layers, strings),
            SfDisplayRow::freeze(&self.sf_displays, strings),
            WinscopeRectRow::freeze(&self.rects, strings),
            WinscopeTransformRow::freeze(&self.transforms, strings),
            WinscopeTraceRectRow::freeze(&self.trace_rects, strings),
            WinscopeFillRegionRow::freeze(&self.fill_regions, strings),
            ShellTransitionProtoRow::freeze(&self.shell_transition_protos, strings),
            ShellTransitionParticipantRow::freeze(&self.shell_transition_participants, strings),
            ProtoLogRow::freeze(&self.protolog, strings),
            ViewCaptureRow::freeze(&self.viewcapture, strings),
            ViewCaptureViewRow::freeze(&self.viewcapture_views, strings),
            ViewCaptureInternedDataRow::freeze(&self.viewcapture_interned, strings),
            ShellTransitionRow::freeze(&self.shell_transitions, strings),
            ShellTransitionHandlerRow::freeze(&self.shell_transition_handlers, strings),
            WindowManagerRow::freeze(&self.windowmanager, strings),
            WindowManagerWindowContainerRow::freeze(&self.windowmanager_containers, strings),
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
    SfLayersSnapshotRow::TABLE,
    SfLayerRow::TABLE,
    SfDisplayRow::TABLE,
    WinscopeRectRow::TABLE,
    WinscopeTransformRow::TABLE,
    WinscopeTraceRectRow::TABLE,
    WinscopeFillRegionRow::TABLE,
    ShellTransitionProtoRow::TABLE,
    ShellTransitionParticipantRow::TABLE,
    ProtoLogRow::TABLE,
    ViewCaptureRow::TABLE,
    ViewCaptureViewRow::TABLE,
    ViewCaptureInternedDataRow::TABLE,
    ShellTransitionRow::TABLE,
    ShellTransitionHandlerRow::TABLE,
    WindowManagerRow::TABLE,
    WindowManagerWindowContainerRow::TABLE,
];

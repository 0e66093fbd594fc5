//! The input method dumps (`WinscopeExtensionsImpl` fields 1 to 3 of
//! TracePacket field 112): each dump of the input method clients, the
//! input method service or its manager service as a row of its table,
//! with its raw proto and its fields as args.

use super::super::Parser;
use super::{args_of, base64_proto_id};
use crate::tables::winscope::{
    InputMethodClientsRow, InputMethodManagerServiceRow, InputMethodServiceRow,
};

/// Which dump.
#[derive(Debug, Clone, Copy)]
pub(super) enum Kind {
    /// `InputMethodClientsTraceProto`.
    Clients,
    /// `InputMethodServiceTraceProto`.
    Service,
    /// `InputMethodManagerServiceTraceProto`.
    ManagerService,
}

/// Imports one dump.
pub(super) fn import(p: &mut Parser, ts: i64, bytes: &[u8], kind: Kind) {
    let base64 = Some(base64_proto_id(&mut p.storage.strings, bytes));
    let (message, stat) = match kind {
        Kind::Clients => (
            "InputMethodClientsTraceProto",
            "winscope_inputmethod_clients_parse_errors",
        ),
        Kind::Service => (
            "InputMethodServiceTraceProto",
            "winscope_inputmethod_service_parse_errors",
        ),
        Kind::ManagerService => (
            "InputMethodManagerServiceTraceProto",
            "winscope_inputmethod_manager_service_parse_errors",
        ),
    };
    let arg_set_id = args_of(p, message, bytes, stat);
    let w = &mut p.storage.winscope;
    match kind {
        Kind::Clients => w.inputmethod_clients.push(InputMethodClientsRow {
            ts,
            arg_set_id,
            base64_proto_id: base64,
        }),
        Kind::Service => w.inputmethod_service.push(InputMethodServiceRow {
            ts,
            arg_set_id,
            base64_proto_id: base64,
        }),
        Kind::ManagerService => w
            .inputmethod_manager_service
            .push(InputMethodManagerServiceRow {
                ts,
                arg_set_id,
                base64_proto_id: base64,
            }),
    }
}

//! Winscope: Android's window-system traces (SurfaceFlinger transactions,
//! the input method dumps, ...) as TracePacket fields. This module holds
//! what their importers share: the schema they are flattened with (the
//! Winscope descriptor set the schema pipeline generates), the sink that
//! turns flattened fields into an arg set, the raw proto kept in base64,
//! and the list of fields the importers claim; each packet kind's importer
//! is its own file beside this one.

mod geometry;
mod input_event;
mod inputmethod;
mod near_rects;
pub mod protolog;
mod protolog_format;
mod sf_layers;
mod sf_model;
mod sf_order;
mod sf_rects;
mod sf_transactions;
mod sf_visibility;
mod shell_transitions;
mod viewcapture;
mod viewcapture_geometry;
mod windowmanager;
mod windowmanager_prune;
mod windowmanager_tree;

use std::sync::OnceLock;

use base64::Engine as _;
use prost_reflect::DescriptorPool;

use super::Parser;
use super::importer::{Importer, Input};
use super::proto_to_args::{self, ArgSink, FlatValue, Options};
use crate::column_store::strings::StringPool;
use crate::storage::args::{ArgSetBuilder, ArgValue};

pub use sf_transactions::SfTransactionsState;
pub use shell_transitions::ShellTransitionsState;
#[cfg(feature = "sql")]
pub use shell_transitions::newer_key as shell_transition_key;

/// What the Winscope importers keep between packets.
#[derive(Debug, Default)]
pub struct WinscopeState {
    /// SurfaceFlinger transactions' flag sets.
    pub sf_transactions: SfTransactionsState,
    /// The shell transitions seen so far.
    pub shell_transitions: ShellTransitionsState,
    /// ProtoLog's formats and the messages still to decode.
    pub protolog: protolog::ProtologState,
    /// Each distinct rectangle's row in `__intrinsic_winscope_rect`, by
    /// its sides' bits.
    rect_ids: crate::hash::HashMap<[u64; 4], u32>,
    /// Each distinct transform's row in `__intrinsic_winscope_transform`,
    /// by its entries' bits.
    transform_ids: crate::hash::HashMap<[u64; 6], u32>,
    /// Where the WindowManager container walk is (it carries over from
    /// dump to dump).
    wm_walk: windowmanager_tree::WalkPosition,
    /// The transform row WindowManager's rects share, once added.
    wm_transform_id: Option<u32>,
}

impl WinscopeState {
    /// The row of a rectangle in `rects`, added the first time.
    pub fn rect_id(
        &mut self,
        rects: &mut Vec<crate::tables::winscope::WinscopeRectRow>,
        rect: crate::tables::winscope::WinscopeRectRow,
    ) -> u32 {
        let key = [rect.x, rect.y, rect.w, rect.h].map(f64::to_bits);
        *self.rect_ids.entry(key).or_insert_with(|| {
            rects.push(rect);
            u32::try_from(rects.len() - 1).unwrap_or(u32::MAX)
        })
    }

    /// The row of a transform in `transforms`, added the first time.
    pub fn transform_id(
        &mut self,
        transforms: &mut Vec<crate::tables::winscope::WinscopeTransformRow>,
        t: crate::tables::winscope::WinscopeTransformRow,
    ) -> u32 {
        let key = [t.dsdx, t.dtdx, t.tx, t.dtdy, t.dsdy, t.ty].map(f64::to_bits);
        *self.transform_ids.entry(key).or_insert_with(|| {
            transforms.push(t);
            u32::try_from(transforms.len() - 1).unwrap_or(u32::MAX)
        })
    }
}

/// The Winscope schema, upstream's `winscope.proto` with its imports.
static DESCRIPTOR_SET: &[u8] = include_bytes!("../../generated/winscope_descriptor.bin");

/// The Winscope schema, decoded once (None if the embedded set were
/// unreadable, which the tests rule out).
pub fn pool() -> Option<&'static DescriptorPool> {
    static POOL: OnceLock<Option<DescriptorPool>> = OnceLock::new();
    POOL.get_or_init(|| DescriptorPool::decode(DESCRIPTOR_SET).ok())
        .as_ref()
}

/// The full name of a Winscope message in the schema.
pub fn message_name(short: &str) -> String {
    format!("perfetto.protos.{short}")
}

/// TracePacket.surfaceflinger_layers_snapshot.
const SURFACEFLINGER_LAYERS_SNAPSHOT: u32 = 93;
/// TracePacket.surfaceflinger_transactions.
const SURFACEFLINGER_TRANSACTIONS: u32 = 94;
/// TracePacket.shell_transition.
const SHELL_TRANSITION: u32 = 96;
/// TracePacket.shell_handler_mappings.
const SHELL_HANDLER_MAPPINGS: u32 = 97;
/// TracePacket.winscope_extensions.
const WINSCOPE_EXTENSIONS: u32 = 112;

/// The payloads this module imports.
pub const IMPORTERS: &[(u32, Importer)] = &[
    (SURFACEFLINGER_LAYERS_SNAPSHOT, sf_layers::import),
    (SURFACEFLINGER_TRANSACTIONS, sf_transactions::import),
    (SHELL_TRANSITION, shell_transitions::import),
    (SHELL_HANDLER_MAPPINGS, shell_transitions::import_handlers),
    (protolog::PROTOLOG_MESSAGE, protolog::import),
    (WINSCOPE_EXTENSIONS, import_extensions),
];

/// The end of the trace: what the importers kept to the end goes into the
/// tables.
pub fn finish(p: &mut Parser) {
    protolog::finish(p);
    shell_transitions::finish(p);
}

/// WinscopeExtensionsImpl's fields.
mod ext {
    pub const INPUTMETHOD_CLIENTS: u32 = 1;
    pub const INPUTMETHOD_SERVICE: u32 = 2;
    pub const INPUTMETHOD_MANAGER_SERVICE: u32 = 3;
    pub const VIEWCAPTURE: u32 = 4;
    pub const ANDROID_INPUT_EVENT: u32 = 5;
    pub const WINDOWMANAGER: u32 = 6;
}

/// A `WinscopeExtensions` payload: its first known extension is imported
/// (a packet carries one).
fn import_extensions(p: &mut Parser, input: &Input<'_>) {
    for field in protozero::Decoder::new(input.bytes) {
        let Ok(field) = field else {
            return;
        };
        let protozero::FieldValue::Bytes(bytes) = field.value else {
            continue;
        };
        match field.id {
            ext::INPUTMETHOD_CLIENTS => {
                inputmethod::import(p, input.ts, bytes, inputmethod::Kind::Clients);
                return;
            }
            ext::INPUTMETHOD_SERVICE => {
                inputmethod::import(p, input.ts, bytes, inputmethod::Kind::Service);
                return;
            }
            ext::INPUTMETHOD_MANAGER_SERVICE => {
                inputmethod::import(p, input.ts, bytes, inputmethod::Kind::ManagerService);
                return;
            }
            ext::VIEWCAPTURE => {
                viewcapture::import(p, input.ts, bytes, input.generation);
                return;
            }
            ext::WINDOWMANAGER => {
                windowmanager::import(p, input.ts, bytes);
                return;
            }
            ext::ANDROID_INPUT_EVENT => {
                input_event::import(p, input.ts, bytes);
                return;
            }
            _ => {}
        }
    }
}

/// The string id of a proto's base64 text (upstream's `base64_proto_id`).
pub fn base64_proto_id(strings: &mut StringPool, bytes: &[u8]) -> u32 {
    let text = base64::engine::general_purpose::STANDARD.encode(bytes);
    strings.intern(&text).0
}

/// Flattened fields into an arg set being built (bytes as base64 text, as
/// upstream's args show them).
pub struct SetSink<'a> {
    /// Where keys and strings are interned.
    pub strings: &'a mut StringPool,
    /// The set.
    pub builder: &'a mut ArgSetBuilder,
}

impl ArgSink for SetSink<'_> {
    fn add(&mut self, flat_key: &str, key: &str, value: FlatValue<'_>) {
        let flat = self.strings.intern(flat_key);
        let k = if key == flat_key {
            flat
        } else {
            self.strings.intern(key)
        };
        let v = match value {
            FlatValue::Int(x) => ArgValue::Int(x),
            FlatValue::Uint(x) => ArgValue::Uint(x),
            FlatValue::Real(x) => ArgValue::Real(x),
            FlatValue::Bool(x) => ArgValue::Bool(x),
            FlatValue::Str(s) => ArgValue::String(self.strings.intern(&s)),
            FlatValue::Bytes(b) => ArgValue::String(
                self.strings
                    .intern(&base64::engine::general_purpose::STANDARD.encode(b)),
            ),
            FlatValue::Null => ArgValue::Null,
        };
        self.builder.add(flat, k, v);
    }
}

/// Flattens a message of Winscope type `short` into `builder`; false
/// when it could not be flattened completely.
pub fn flatten_into(
    strings: &mut StringPool,
    builder: &mut ArgSetBuilder,
    short: &str,
    bytes: &[u8],
    allowed_fields: Option<&[u32]>,
) -> bool {
    let Some(pool) = pool() else {
        return false;
    };
    let Ok(desc) = proto_to_args::find_message(pool, &message_name(short)) else {
        return false;
    };
    let mut sink = SetSink { strings, builder };
    let options = Options {
        allowed_fields,
        add_defaults: false,
    };
    proto_to_args::flatten(&desc, bytes, options, &mut sink).is_ok()
}

/// Flattens a message of Winscope type `short` into a new arg set;
/// counts `error_stat` when it could not be flattened completely.
pub fn args_of(p: &mut Parser, short: &str, bytes: &[u8], error_stat: &str) -> Option<u32> {
    let mut builder = ArgSetBuilder::default();
    if !flatten_into(&mut p.storage.strings, &mut builder, short, bytes, None) {
        p.storage.stats.incr(error_stat);
    }
    p.storage.args.add_set(&builder)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_schema_has_the_winscope_messages() {
        let pool = pool().expect("the embedded descriptor set decodes");
        for m in [
            "TransactionTraceEntry",
            "LayerState",
            "DisplayState",
            "LayerCreationArgs",
            "TransactionState",
            "InputMethodClientsTraceProto",
            "InputMethodServiceTraceProto",
            "InputMethodManagerServiceTraceProto",
        ] {
            assert!(
                pool.get_message_by_name(&message_name(m)).is_some(),
                "{m} is missing"
            );
        }
    }
}

//! V8's JIT code records (`TracePacket.v8_js_code`, `v8_internal_code`,
//! `v8_wasm_code`, `v8_reg_exp_code`, `v8_code_move`) into the V8 and
//! JIT tables, as upstream's V8 module imports them. Each record names
//! its isolate (and function or WebAssembly script) by interned id; each
//! sequence's incremental-state interval resolves an id once
//! (`v8_isolates.rs` makes the rows, deduplicated across sequences), a
//! missing one counted in `v8_intern_errors`. The record's thread is its
//! `tid`, else the sequence's `V8CodeDefaults`' (`v8_no_defaults` when
//! neither). Generated code is loaded into the JIT cache of its isolate
//! that holds it (`v8_no_code_range` when none does), where profiled
//! frames then find it; bytecode run by the interpreter has no code
//! there and keeps its bytes in `__intrinsic_v8_js_code`.

use base64::Engine as _;
use protozero::Decoder;

use super::Parser;
use super::fields::Fields;
use super::importer::{Importer, Input};
use super::v8_isolates::{
    V8Isolates, enum_name, intern_isolate, intern_js_function, intern_js_script,
    intern_wasm_script, v8_string,
};
use crate::column_store::strings::StrId;
use crate::hash::HashMap;
use crate::sequence_state::Generation;
use crate::tables::v8::{V8InternalCodeRow, V8JsCodeRow, V8RegexpCodeRow, V8WasmCodeRow};
use crate::tracker::address_range::AddressRange;
use crate::tracker::jit_cache::{LoadedCode, SourceLocation};

/// `TracePacket` fields of V8's code records.
mod field {
    pub const V8_JS_CODE: u32 = 99;
    pub const V8_INTERNAL_CODE: u32 = 100;
    pub const V8_WASM_CODE: u32 = 101;
    pub const V8_REG_EXP_CODE: u32 = 102;
    pub const V8_CODE_MOVE: u32 = 103;
}

/// `InternedData` fields of V8's interned messages.
mod interned {
    pub const V8_JS_FUNCTION_NAME: u32 = 31;
    pub const V8_JS_FUNCTION: u32 = 32;
    pub const V8_JS_SCRIPT: u32 = 33;
    pub const V8_WASM_SCRIPT: u32 = 34;
    pub const V8_ISOLATE: u32 = 35;
}

/// `TracePacketDefaults.v8_code_defaults`.
const V8_CODE_DEFAULTS: u32 = 99;

/// Every code record's isolate (field 1) and thread (field 2).
const ISOLATE_IID: u32 = 1;
const TID: u32 = 2;

/// `V8JsCode.Tier` names without their `TIER_` prefix.
const JS_TIERS: &[&str] = &[
    "UNKNOWN",
    "IGNITION",
    "SPARKPLUG",
    "MAGLEV",
    "TURBOSHAFT",
    "TURBOFAN",
];

/// `V8InternalCode.Type` names without their `TYPE_` prefix.
const INTERNAL_TYPES: &[&str] = &[
    "UNKNOWN",
    "BYTECODE_HANDLER",
    "FOR_TESTING",
    "BUILTIN",
    "WASM_FUNCTION",
    "WASM_TO_CAPI_FUNCTION",
    "WASM_TO_JS_FUNCTION",
    "JS_TO_WASM_FUNCTION",
    "JS_TO_JS_FUNCTION",
    "C_WASM_ENTRY",
];

/// `V8WasmCode.Tier` names without their `TIER_` prefix.
const WASM_TIERS: &[&str] = &["UNKNOWN", "LIFTOFF", "TURBOFAN"];

/// The payloads this module imports.
pub const IMPORTERS: &[(u32, Importer)] = &[
    (field::V8_JS_CODE, js_code),
    (field::V8_INTERNAL_CODE, internal_code),
    (field::V8_WASM_CODE, wasm_code),
    (field::V8_REG_EXP_CODE, regexp_code),
    (field::V8_CODE_MOVE, code_move),
];

/// What one incremental-state interval of a sequence resolved, by iid.
#[derive(Debug, Default)]
struct SequenceIds {
    isolates: HashMap<u64, Option<u32>>,
    js_scripts: HashMap<u64, u32>,
    wasm_scripts: HashMap<u64, u32>,
    js_functions: HashMap<u64, u32>,
    js_function_names: HashMap<u64, StrId>,
}

/// What the V8 importer keeps across packets.
#[derive(Debug, Default)]
pub struct V8State {
    /// The rows made so far, across sequences.
    pub isolates: V8Isolates,
    /// Each generation's resolved ids.
    sequences: HashMap<u32, SequenceIds>,
}

/// The interned message of `kind` and `iid`, counting
/// `v8_intern_errors` when the sequence has none.
fn lookup<'g>(p: &mut Parser, generation: &'g Generation, kind: u32, iid: u64) -> Option<&'g [u8]> {
    let found = generation.interned(kind, iid);
    if found.is_none() {
        p.storage.stats.incr("v8_intern_errors");
    }
    found
}

fn ids<'p>(p: &'p mut Parser, i: &Input<'_>) -> &'p mut SequenceIds {
    p.v8.sequences.entry(i.packet.generation).or_default()
}

fn isolate(p: &mut Parser, i: &Input<'_>, iid: u64) -> Option<u32> {
    if let Some(id) = ids(p, i).isolates.get(&iid) {
        return *id;
    }
    let bytes = lookup(p, i.generation, interned::V8_ISOLATE, iid)?;
    let id = intern_isolate(p, bytes);
    ids(p, i).isolates.insert(iid, id);
    id
}

fn js_script(p: &mut Parser, i: &Input<'_>, iid: u64, isolate: u32) -> Option<u32> {
    if let Some(id) = ids(p, i).js_scripts.get(&iid) {
        return Some(*id);
    }
    let bytes = lookup(p, i.generation, interned::V8_JS_SCRIPT, iid)?;
    let id = intern_js_script(p, bytes, isolate);
    ids(p, i).js_scripts.insert(iid, id);
    Some(id)
}

fn wasm_script(p: &mut Parser, i: &Input<'_>, iid: u64, isolate: u32) -> Option<u32> {
    if let Some(id) = ids(p, i).wasm_scripts.get(&iid) {
        return Some(*id);
    }
    let bytes = lookup(p, i.generation, interned::V8_WASM_SCRIPT, iid)?;
    let id = intern_wasm_script(p, bytes, isolate);
    ids(p, i).wasm_scripts.insert(iid, id);
    Some(id)
}

fn js_function_name(p: &mut Parser, i: &Input<'_>, iid: u64) -> Option<StrId> {
    if let Some(id) = ids(p, i).js_function_names.get(&iid) {
        return Some(*id);
    }
    let bytes = lookup(p, i.generation, interned::V8_JS_FUNCTION_NAME, iid)?;
    // `InternedV8String` inlines `V8String`'s fields after its iid.
    let id = p.storage.strings.intern(&v8_string(bytes, 2, 3, 4));
    ids(p, i).js_function_names.insert(iid, id);
    Some(id)
}

fn js_function(p: &mut Parser, i: &Input<'_>, iid: u64, isolate: u32) -> Option<u32> {
    if let Some(id) = ids(p, i).js_functions.get(&iid) {
        return Some(*id);
    }
    let bytes = lookup(p, i.generation, interned::V8_JS_FUNCTION, iid)?;
    let f = Fields::new(bytes);
    let script = js_script(p, i, f.uint(3).unwrap_or(0), isolate)?;
    let name = js_function_name(p, i, f.uint(2).unwrap_or(0))?;
    let id = intern_js_function(p, bytes, name, script);
    ids(p, i).js_functions.insert(iid, id);
    Some(id)
}

/// The thread of a record of `isolate`: its `tid`, else the sequence's
/// default one, in the isolate's process.
fn utid(p: &mut Parser, i: &Input<'_>, isolate: u32, code: &Fields<'_>) -> Option<u32> {
    let pid = p.v8.isolates.pid(isolate).unwrap_or(0);
    let tid = match code.uint(TID) {
        Some(tid) => tid,
        None => {
            let default = i
                .generation
                .defaults
                .as_deref()
                .and_then(|d| Decoder::new(d).find_last(V8_CODE_DEFAULTS))
                .and_then(|f| f.as_bytes().ok())
                .and_then(|d| Fields::new(d).uint(1));
            match default {
                Some(tid) => tid,
                None => {
                    p.storage.stats.incr("v8_no_defaults");
                    return None;
                }
            }
        }
    };
    let tid = i64::from(tid as u32);
    Some(p.processes.update_thread(&mut p.storage, tid, pid))
}

/// The JIT cache of `isolate` holding all of `range`; None for an empty
/// range (`v8_code_load_missing_code_range`) or, when `count_miss`, no
/// such cache (`v8_no_code_range`).
fn jit_cache(p: &mut Parser, isolate: u32, range: AddressRange, count_miss: bool) -> Option<usize> {
    if range.is_empty() {
        p.storage.stats.incr("v8_code_load_missing_code_range");
        return None;
    }
    let found =
        p.v8.isolates
            .caches(isolate)
            .and_then(|c| c.find_containing(range))
            .map(|(_, cache)| *cache);
    if found.is_none() && count_miss {
        p.storage.stats.incr("v8_no_code_range");
    }
    found
}

fn code_range(f: &Fields<'_>, start: u32, size: u32) -> AddressRange {
    AddressRange::from_start_and_size(f.uint(start).unwrap_or(0), f.uint(size).unwrap_or(0))
}

/// Loads code into a JIT cache; its `__intrinsic_jit_code` id.
fn load(p: &mut Parser, cache: usize, code: &LoadedCode<'_>) -> Option<u32> {
    let cache = p.profiling.stacks.jit_cache_mut(cache)?;
    Some(cache.load_code(&mut p.storage, code))
}

/// Loads code that has no source location (internal, WASM and RegExp
/// code) into its isolate's JIT cache; its `jit_code` row.
fn load_sourceless(
    p: &mut Parser,
    i: &Input<'_>,
    isolate: u32,
    utid: u32,
    range: AddressRange,
    function_name: StrId,
    native_code: &[u8],
) -> Option<u32> {
    let cache = jit_cache(p, isolate, range, true)?;
    let code = LoadedCode {
        ts: i.ts,
        utid,
        range,
        function_name,
        source: None,
        native_code,
    };
    load(p, cache, &code)
}

fn js_code(p: &mut Parser, i: &Input<'_>) {
    let f = Fields::new(i.bytes);
    let Some(isolate) = isolate(p, i, f.uint(ISOLATE_IID).unwrap_or(0)) else {
        return;
    };
    let Some(utid) = utid(p, i, isolate, &f) else {
        return;
    };
    let Some(function) = js_function(p, i, f.uint(3).unwrap_or(0), isolate) else {
        return;
    };
    let tier_value = f.int32(4).unwrap_or(0);
    let tier = p.storage.strings.intern(enum_name(JS_TIERS, tier_value));
    let range = code_range(&f, 5, 6);
    let cache = match tier_value {
        // Bytecode: in a JIT cache only when the interpreter's frames are
        // native code too; else kept as bytecode.
        1 => match jit_cache(p, isolate, range, false) {
            Some(cache) => cache,
            None => {
                let bytecode = base64::engine::general_purpose::STANDARD
                    .encode(f.bytes(8).unwrap_or_default());
                let bytecode_base64 = p.storage.strings.intern(&bytecode);
                p.storage.v8.js_code.push(V8JsCodeRow {
                    jit_code_id: None,
                    v8_js_function_id: function,
                    tier,
                    bytecode_base64,
                });
                return;
            }
        },
        2..=5 => match jit_cache(p, isolate, range, true) {
            Some(cache) => cache,
            None => return,
        },
        _ => {
            p.storage.stats.incr("v8_unknown_code_type");
            return;
        }
    };
    let Some(row) = p.storage.v8.js_functions.get(function as usize) else {
        return;
    };
    let (function_name, script, line) = (row.name, row.v8_js_script_id, row.line);
    let file_name = p
        .storage
        .v8
        .js_scripts
        .get(script as usize)
        .map_or(StrId::NULL, |s| s.name);
    let code = LoadedCode {
        ts: i.ts,
        utid,
        range,
        function_name,
        source: Some(SourceLocation {
            file_name,
            line: line.unwrap_or(0),
        }),
        native_code: f.bytes(7).unwrap_or_default(),
    };
    let Some(jit_code_id) = load(p, cache, &code) else {
        return;
    };
    p.storage.v8.js_code.push(V8JsCodeRow {
        jit_code_id: Some(jit_code_id),
        v8_js_function_id: function,
        tier,
        bytecode_base64: StrId::NULL,
    });
}

fn internal_code(p: &mut Parser, i: &Input<'_>) {
    let f = Fields::new(i.bytes);
    let Some(isolate) = isolate(p, i, f.uint(ISOLATE_IID).unwrap_or(0)) else {
        return;
    };
    let Some(utid) = utid(p, i, isolate, &f) else {
        return;
    };
    let function_name = p.storage.strings.intern_opt(f.str(3).as_deref());
    let code_type = p
        .storage
        .strings
        .intern(enum_name(INTERNAL_TYPES, f.int32(4).unwrap_or(0)));
    let range = code_range(&f, 6, 7);
    let native_code = f.bytes(8).unwrap_or_default();
    let Some(jit_code_id) = load_sourceless(p, i, isolate, utid, range, function_name, native_code)
    else {
        return;
    };
    p.storage.v8.internal_code.push(V8InternalCodeRow {
        jit_code_id,
        v8_isolate_id: isolate,
        function_name,
        code_type,
    });
}

fn wasm_code(p: &mut Parser, i: &Input<'_>) {
    let f = Fields::new(i.bytes);
    let Some(isolate) = isolate(p, i, f.uint(ISOLATE_IID).unwrap_or(0)) else {
        return;
    };
    let Some(script) = wasm_script(p, i, f.uint(3).unwrap_or(0), isolate) else {
        return;
    };
    let Some(utid) = utid(p, i, isolate, &f) else {
        return;
    };
    let function_name = p.storage.strings.intern_opt(f.str(4).as_deref());
    let tier = p
        .storage
        .strings
        .intern(enum_name(WASM_TIERS, f.int32(5).unwrap_or(0)));
    let range = code_range(&f, 7, 8);
    let native_code = f.bytes(9).unwrap_or_default();
    let Some(jit_code_id) = load_sourceless(p, i, isolate, utid, range, function_name, native_code)
    else {
        return;
    };
    p.storage.v8.wasm_code.push(V8WasmCodeRow {
        jit_code_id,
        v8_isolate_id: isolate,
        v8_wasm_script_id: script,
        function_name,
        tier,
        // Upstream does not read `code_offset_in_module`.
        code_offset_in_module: 0,
    });
}

fn regexp_code(p: &mut Parser, i: &Input<'_>) {
    let f = Fields::new(i.bytes);
    let Some(isolate) = isolate(p, i, f.uint(ISOLATE_IID).unwrap_or(0)) else {
        return;
    };
    let Some(utid) = utid(p, i, isolate, &f) else {
        return;
    };
    let function_name = p.storage.strings.intern("[RegExp]");
    let pattern = v8_string(f.bytes(3).unwrap_or_default(), 1, 2, 3);
    let pattern = p.storage.strings.intern(&pattern);
    let range = code_range(&f, 4, 5);
    let native_code = f.bytes(6).unwrap_or_default();
    let Some(jit_code_id) = load_sourceless(p, i, isolate, utid, range, function_name, native_code)
    else {
        return;
    };
    p.storage.v8.regexp_code.push(V8RegexpCodeRow {
        jit_code_id,
        v8_isolate_id: isolate,
        pattern,
    });
}

fn code_move(p: &mut Parser, i: &Input<'_>) {
    let f = Fields::new(i.bytes);
    let Some(isolate) = isolate(p, i, f.uint(ISOLATE_IID).unwrap_or(0)) else {
        return;
    };
    if utid(p, i, isolate, &f).is_none() {
        return;
    }
    let Some(from) = f.uint(3) else {
        return;
    };
    let range = AddressRange::from_start_and_size(from, f.uint(5).unwrap_or(0));
    let Some(cache) = jit_cache(p, isolate, range, true) else {
        return;
    };
    let to = f.uint(4).unwrap_or(0);
    if let Some(cache) = p.profiling.stacks.jit_cache_mut(cache) {
        cache.move_code(&mut p.storage, i.ts, from, to);
    }
}

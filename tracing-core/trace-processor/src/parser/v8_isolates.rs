//! What V8's code records refer to, made once per trace as upstream's V8
//! tracker makes it: an isolate per (process, V8's isolate id), with the
//! JIT caches of its code range and embedded blob (an isolate sharing its
//! process's code range shares its caches too; one without a code range
//! is skipped and counted), a JavaScript or WebAssembly script per
//! (isolate, V8's script id), and a JavaScript function per distinct row.
//! Also V8's strings (Latin-1, UTF-16 either way) turned into UTF-8.

use base64::Engine as _;

use super::Parser;
use super::fields::Fields;
use crate::column_store::strings::StrId;
use crate::hash::HashMap;
use crate::tables::v8::{V8IsolateRow, V8JsFunctionRow, V8JsScriptRow, V8WasmScriptRow};
use crate::tracker::address_range::{AddressRange, AddressRangeMap, AddressSet};

/// The JIT caches (by index) of an isolate's code, by range.
pub type IsolateCaches = AddressRangeMap<usize>;

/// The ranges an isolate's code lives in.
#[derive(Debug, Clone, PartialEq, Eq)]
struct CodeRanges {
    /// Its heap's code (the code range less the embedded blob).
    heap_code: AddressSet,
    /// Its embedded blob, as mapped when a mapping starts there.
    embedded_blob: Option<AddressRange>,
}

/// A JavaScript function's row, as the key it is deduplicated by.
type FunctionKey = (StrId, u32, bool, StrId, Option<u32>, Option<u32>);

/// What the V8 importer keeps across sequences.
#[derive(Debug, Default)]
pub struct V8Isolates {
    /// Isolates by (process, V8's isolate id): their row, or None when
    /// the isolate had no code range.
    isolate_index: HashMap<(u32, i32), Option<u32>>,
    /// Each isolate's JIT caches.
    caches: HashMap<u32, IsolateCaches>,
    /// Each isolate's process id.
    pids: HashMap<u32, i64>,
    /// The code range a process's isolates share, with its caches.
    shared: HashMap<u32, (CodeRanges, IsolateCaches)>,
    /// JavaScript scripts by (isolate, V8's script id).
    js_scripts: HashMap<(u32, i32), u32>,
    /// WebAssembly scripts by (isolate, V8's script id).
    wasm_scripts: HashMap<(u32, i32), u32>,
    /// JavaScript functions by their row.
    js_functions: HashMap<FunctionKey, u32>,
}

/// `InternedV8Isolate` fields.
mod isolate {
    pub const PID: u32 = 2;
    pub const ISOLATE_ID: u32 = 3;
    pub const CODE_RANGE: u32 = 4;
    pub const EMBEDDED_BLOB_CODE_START_ADDRESS: u32 = 5;
    pub const EMBEDDED_BLOB_CODE_SIZE: u32 = 6;
    /// `InternedV8Isolate.CodeRange` fields.
    pub const BASE_ADDRESS: u32 = 1;
    pub const SIZE: u32 = 2;
    pub const EMBEDDED_BLOB_CODE_COPY_START_ADDRESS: u32 = 3;
    pub const IS_PROCESS_WIDE: u32 = 4;
}

/// `InternedV8JsScript.Type` names without their `TYPE_` prefix.
const SCRIPT_TYPES: &[&str] = &[
    "UNKNOWN",
    "NORMAL",
    "EVAL",
    "MODULE",
    "NATIVE",
    "EXTENSION",
    "INSPECTOR",
];

/// `InternedV8JsFunction.Kind` names without their `KIND_` prefix.
const FUNCTION_KINDS: &[&str] = &[
    "UNKNOWN",
    "NORMAL_FUNCTION",
    "MODULE",
    "ASYNC_MODULE",
    "BASE_CONSTRUCTOR",
    "DEFAULT_BASE_CONSTRUCTOR",
    "DEFAULT_DERIVED_CONSTRUCTOR",
    "DERIVED_CONSTRUCTOR",
    "GETTER_FUNCTION",
    "STATIC_GETTER_FUNCTION",
    "SETTER_FUNCTION",
    "STATIC_SETTER_FUNCTION",
    "ARROW_FUNCTION",
    "ASYNC_ARROW_FUNCTION",
    "ASYNC_FUNCTION",
    "ASYNC_CONCISE_METHOD",
    "STATIC_ASYNC_CONCISE_METHOD",
    "ASYNC_CONCISE_GENERATOR_METHOD",
    "STATIC_ASYNC_CONCISE_GENERATOR_METHOD",
    "ASYNC_GENERATOR_FUNCTION",
    "GENERATOR_FUNCTION",
    "CONCISE_GENERATOR_METHOD",
    "STATIC_CONCISE_GENERATOR_METHOD",
    "CONCISE_METHOD",
    "STATIC_CONCISE_METHOD",
    "CLASS_MEMBERS_INITIALIZER_FUNCTION",
    "CLASS_STATIC_INITIALIZER_FUNCTION",
    "INVALID",
];

/// The name of enum value `v` in `names`, `UNKNOWN` outside them.
pub fn enum_name(names: &[&'static str], v: i32) -> &'static str {
    usize::try_from(v)
        .ok()
        .and_then(|i| names.get(i))
        .copied()
        .unwrap_or("UNKNOWN")
}

/// A V8 string's text in UTF-8: its Latin-1, UTF-16LE or UTF-16BE field
/// (by field number), tried in that order; "" when none is set.
pub fn v8_string(bytes: &[u8], latin1: u32, utf16_le: u32, utf16_be: u32) -> String {
    let f = Fields::new(bytes);
    if let Some(b) = f.bytes(latin1) {
        b.iter().map(|&c| char::from(c)).collect()
    } else if let Some(b) = f.bytes(utf16_le) {
        utf16(b, u16::from_le_bytes)
    } else if let Some(b) = f.bytes(utf16_be) {
        utf16(b, u16::from_be_bytes)
    } else {
        String::new()
    }
}

/// UTF-16 code units read two bytes at a time into UTF-8: a lone or
/// misplaced surrogate, or an odd last byte, becomes U+FFFD (a high
/// surrogate followed by anything else takes that unit with it).
fn utf16(bytes: &[u8], unit: fn([u8; 2]) -> u16) -> String {
    let mut units = bytes.chunks(2).map(|c| match c {
        [a, b] => Some(unit([*a, *b])),
        _ => None,
    });
    let mut out = String::new();
    let is_high = |u: u16| (u & 0xfc00) == 0xd800;
    let is_low = |u: u16| (u & 0xfc00) == 0xdc00;
    while let Some(first) = units.next() {
        let c = match first {
            Some(u) if is_low(u) => None,
            Some(u) if !is_high(u) => char::from_u32(u32::from(u)),
            Some(high) => match units.next() {
                Some(Some(low)) if is_low(low) => {
                    let cp = ((u32::from(high) & 0x3ff) << 10) + (u32::from(low) & 0x3ff) + 0x10000;
                    char::from_u32(cp)
                }
                _ => None,
            },
            None => None,
        };
        out.push(c.unwrap_or('\u{fffd}'));
    }
    out
}

/// A `V8String` message's text.
fn v8_string_message(bytes: &[u8]) -> String {
    v8_string(bytes, 1, 2, 3)
}

fn base64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

impl V8Isolates {
    /// The JIT caches of an isolate.
    pub fn caches(&self, isolate: u32) -> Option<&IsolateCaches> {
        self.caches.get(&isolate)
    }

    /// The process id of an isolate.
    pub fn pid(&self, isolate: u32) -> Option<i64> {
        self.pids.get(&isolate).copied()
    }
}

/// The isolate of an `InternedV8Isolate`, made on first sight; None
/// (counted once in `v8_isolate_has_no_code_range`) when it has no code
/// range.
pub fn intern_isolate(p: &mut Parser, bytes: &[u8]) -> Option<u32> {
    let f = Fields::new(bytes);
    let pid = i64::from(f.uint(isolate::PID).unwrap_or(0) as u32);
    let upid = p.processes.get_or_create_process(&mut p.storage, pid);
    let key = (upid, f.int32(isolate::ISOLATE_ID).unwrap_or(0));
    if let Some(id) = p.v8.isolates.isolate_index.get(&key) {
        return *id;
    }
    let Some(code_range) = f.bytes(isolate::CODE_RANGE) else {
        p.storage.stats.incr("v8_isolate_has_no_code_range");
        p.v8.isolates.isolate_index.insert(key, None);
        return None;
    };
    let cr = Fields::new(code_range);
    let base = cr.uint(isolate::BASE_ADDRESS).unwrap_or(0);
    let size = cr.uint(isolate::SIZE).unwrap_or(0);
    let process_wide = cr.bool(isolate::IS_PROCESS_WIDE).unwrap_or(false);
    let blob_start = f.uint(isolate::EMBEDDED_BLOB_CODE_START_ADDRESS);
    let blob_size = f.uint(isolate::EMBEDDED_BLOB_CODE_SIZE).unwrap_or(0);
    let id = u32::try_from(p.storage.v8.isolates.len()).unwrap_or(u32::MAX);
    p.storage.v8.isolates.push(V8IsolateRow {
        upid,
        internal_isolate_id: key.1,
        embedded_blob_code_start_address: blob_start.unwrap_or(0) as i64,
        embedded_blob_code_size: blob_size as i64,
        code_range_base_address: Some(base as i64),
        code_range_size: Some(size as i64),
        shared_code_range: Some(process_wide),
        embedded_blob_code_copy_start_address: cr
            .uint(isolate::EMBEDDED_BLOB_CODE_COPY_START_ADDRESS)
            .map(|a| a as i64),
    });
    let mut ranges = CodeRanges {
        heap_code: AddressSet::default(),
        embedded_blob: None,
    };
    ranges
        .heap_code
        .add(AddressRange::from_start_and_size(base, size));
    if let Some(start) = blob_start.filter(|_| blob_size != 0) {
        let mut blob = AddressRange::from_start_and_size(start, blob_size);
        // The blob as the process mapped it, when a mapping starts there.
        if let Some((_, m)) = p
            .profiling
            .stacks
            .find_user_mapping(&mut p.storage, upid, blob.start)
            && m.start == blob.start
            && blob.end <= m.end
        {
            blob = m;
        }
        ranges.heap_code.remove(blob);
        ranges.embedded_blob = Some(blob);
    }
    let caches = if process_wide {
        match p.v8.isolates.shared.get(&upid) {
            // Upstream requires every isolate sharing the range to report
            // the same ranges; the first report stands.
            Some((_, caches)) => caches.clone(),
            None => {
                let caches = create_caches(p, upid, &ranges);
                p.v8.isolates.shared.insert(upid, (ranges, caches.clone()));
                caches
            }
        }
    } else {
        create_caches(p, upid, &ranges)
    };
    let v8 = &mut p.v8.isolates;
    v8.caches.insert(id, caches);
    v8.pids.insert(id, pid);
    v8.isolate_index.insert(key, Some(id));
    Some(id)
}

fn create_caches(p: &mut Parser, upid: u32, ranges: &CodeRanges) -> IsolateCaches {
    let mut caches = IsolateCaches::default();
    let stacks = &mut p.profiling.stacks;
    for r in ranges.heap_code.iter() {
        let cache = stacks.create_jit_cache("v8 code", upid, r);
        caches.emplace(r, cache);
    }
    if let Some(blob) = ranges.embedded_blob {
        let cache = stacks.create_jit_cache("v8 blob", upid, blob);
        caches.emplace(blob, cache);
    }
    caches
}

/// The JavaScript script of an `InternedV8JsScript` in `isolate`.
pub fn intern_js_script(p: &mut Parser, bytes: &[u8], isolate: u32) -> u32 {
    let f = Fields::new(bytes);
    let key = (isolate, f.int32(2).unwrap_or(0));
    if let Some(id) = p.v8.isolates.js_scripts.get(&key) {
        return *id;
    }
    let strings = &mut p.storage.strings;
    let row = V8JsScriptRow {
        v8_isolate_id: isolate,
        internal_script_id: key.1,
        script_type: strings.intern(enum_name(SCRIPT_TYPES, f.int32(3).unwrap_or(0))),
        name: strings.intern(&v8_string_message(f.bytes(4).unwrap_or_default())),
        source: strings.intern(&v8_string_message(f.bytes(5).unwrap_or_default())),
    };
    let id = u32::try_from(p.storage.v8.js_scripts.len()).unwrap_or(u32::MAX);
    p.storage.v8.js_scripts.push(row);
    p.v8.isolates.js_scripts.insert(key, id);
    id
}

/// The WebAssembly script of an `InternedV8WasmScript` in `isolate`.
pub fn intern_wasm_script(p: &mut Parser, bytes: &[u8], isolate: u32) -> u32 {
    let f = Fields::new(bytes);
    let key = (isolate, f.int32(2).unwrap_or(0));
    if let Some(id) = p.v8.isolates.wasm_scripts.get(&key) {
        return *id;
    }
    let strings = &mut p.storage.strings;
    let row = V8WasmScriptRow {
        v8_isolate_id: isolate,
        internal_script_id: key.1,
        url: strings.intern_opt(f.str(3).as_deref()),
        wire_bytes_base64: strings.intern(&base64(f.bytes(4).unwrap_or_default())),
        source: StrId::NULL,
    };
    let id = u32::try_from(p.storage.v8.wasm_scripts.len()).unwrap_or(u32::MAX);
    p.storage.v8.wasm_scripts.push(row);
    p.v8.isolates.wasm_scripts.insert(key, id);
    id
}

/// The JavaScript function of an `InternedV8JsFunction` named `name` in
/// `script`: one row per distinct name, script, kind and place.
pub fn intern_js_function(p: &mut Parser, bytes: &[u8], name: StrId, script: u32) -> u32 {
    let f = Fields::new(bytes);
    let (line, col) = match (f.uint(7), f.uint(8), f.uint(6)) {
        (Some(line), Some(col), _) => (Some(line as u32), Some(col as u32)),
        // Only a byte offset: upstream keeps it as the column of line 1.
        (_, _, Some(offset)) => (Some(1), Some(offset as u32)),
        _ => (None, None),
    };
    let row = V8JsFunctionRow {
        name,
        v8_js_script_id: script,
        is_toplevel: f.bool(4).unwrap_or(false),
        kind: p
            .storage
            .strings
            .intern(enum_name(FUNCTION_KINDS, f.int32(5).unwrap_or(0))),
        line,
        col,
    };
    let key = (
        row.name,
        row.v8_js_script_id,
        row.is_toplevel,
        row.kind,
        row.line,
        row.col,
    );
    if let Some(id) = p.v8.isolates.js_functions.get(&key) {
        return *id;
    }
    let id = u32::try_from(p.storage.v8.js_functions.len()).unwrap_or(u32::MAX);
    p.storage.v8.js_functions.push(row);
    p.v8.isolates.js_functions.insert(key, id);
    id
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v8_strings_decode_as_upstream_decodes_them() {
        // Latin-1 (field 1): é is one byte.
        assert_eq!(v8_string(&[0x0a, 2, b'a', 0xe9], 1, 2, 3), "aé");
        // UTF-16LE (field 2): "hi" then a surrogate pair (U+1F600).
        let le = [0x12, 8, b'h', 0, b'i', 0, 0x3d, 0xd8, 0x00, 0xde];
        assert_eq!(v8_string(&le, 1, 2, 3), "hi\u{1f600}");
        // UTF-16BE (field 3): a high surrogate then 'A' swallows the 'A';
        // an odd last byte is U+FFFD too.
        let be = [0x1a, 5, 0xd8, 0x3d, 0x00, b'A', 0x00];
        assert_eq!(v8_string(&be, 1, 2, 3), "\u{fffd}\u{fffd}");
        // A lone low surrogate.
        assert_eq!(v8_string(&[0x12, 2, 0x00, 0xdc], 1, 2, 3), "\u{fffd}");
        assert_eq!(v8_string(&[], 1, 2, 3), "");
        assert_eq!(enum_name(SCRIPT_TYPES, 3), "MODULE");
        assert_eq!(enum_name(SCRIPT_TYPES, 99), "UNKNOWN");
        assert_eq!(enum_name(FUNCTION_KINDS, -1), "UNKNOWN");
        assert_eq!(enum_name(FUNCTION_KINDS, 27), "INVALID");
    }
}

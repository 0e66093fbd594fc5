//! V8's tables (upstream's `v8_tables.py`): the isolates (engine
//! instances) of each process, the JavaScript and WebAssembly scripts and
//! the JavaScript functions they define, each made once however many
//! sequences intern it, and the code V8 generated for them: JavaScript
//! code per compilation tier, V8's own builtins and handlers, WebAssembly
//! functions and regular expressions, each tied to its
//! `__intrinsic_jit_code` row (`tables/jit.rs`). Filled by
//! `parser/v8.rs`; the views are the `v8.jit` module's.

use super::table;
use crate::column_store::strings::StrId;

table! {
    /// A row of `__intrinsic_v8_isolate`: one V8 engine instance.
    pub struct V8IsolateRow in "__intrinsic_v8_isolate" {
        /// The process it runs in.
        upid: u32,
        /// V8's own id of the isolate, unique in its process.
        internal_isolate_id: i32,
        /// Where the embedded blob's code starts.
        embedded_blob_code_start_address: i64,
        /// The embedded blob's code size in bytes.
        embedded_blob_code_size: i64,
        /// The code range's base address, when the isolate has one.
        code_range_base_address: Option<i64>,
        /// The code range's size, when the isolate has one.
        code_range_size: Option<i64>,
        /// Whether the code range is the one its process's isolates share.
        shared_code_range: Option<bool>,
        /// Where the embedded builtins were copied into the code range,
        /// when they were (short builtin calls).
        embedded_blob_code_copy_start_address: Option<i64>,
    }
}

table! {
    /// A row of `__intrinsic_v8_js_script`: one JavaScript script.
    pub struct V8JsScriptRow in "__intrinsic_v8_js_script" {
        /// Its isolate (`__intrinsic_v8_isolate.id`).
        v8_isolate_id: u32,
        /// V8's id of the script, unique in its isolate.
        internal_script_id: i32,
        /// Its type (`NORMAL`, `EVAL`, `MODULE`, ...).
        script_type: StrId,
        /// Its name.
        name: StrId,
        /// Its source text.
        source: StrId,
    }
}

table! {
    /// A row of `__intrinsic_v8_wasm_script`: one WebAssembly module.
    pub struct V8WasmScriptRow in "__intrinsic_v8_wasm_script" {
        /// Its isolate (`__intrinsic_v8_isolate.id`).
        v8_isolate_id: u32,
        /// V8's id of the script, unique in its isolate.
        internal_script_id: i32,
        /// Where it was loaded from.
        url: StrId,
        /// Its wire bytes in base64.
        wire_bytes_base64: StrId,
        /// Its source (never recorded: NULL).
        source: StrId,
    }
}

table! {
    /// A row of `__intrinsic_v8_js_function`: one JavaScript function.
    pub struct V8JsFunctionRow in "__intrinsic_v8_js_function" {
        /// Its name.
        name: StrId,
        /// The script defining it (`__intrinsic_v8_js_script.id`).
        v8_js_script_id: u32,
        /// Whether it is its script's top level.
        is_toplevel: bool,
        /// Its kind (`NORMAL_FUNCTION`, `BASE_CONSTRUCTOR`, ...).
        kind: StrId,
        /// Its line in the script, from 1.
        line: Option<u32>,
        /// Its column in the script, from 1 (a byte offset when only that
        /// was recorded, with line 1).
        col: Option<u32>,
    }
}

table! {
    /// A row of `__intrinsic_v8_js_code`: code of a JavaScript function at
    /// one tier.
    pub struct V8JsCodeRow in "__intrinsic_v8_js_code" {
        /// Its generated code (`__intrinsic_jit_code.id`); NULL for bytecode
        /// that runs in the interpreter.
        jit_code_id: Option<u32>,
        /// The function (`__intrinsic_v8_js_function.id`).
        v8_js_function_id: u32,
        /// The tier (`IGNITION`, `SPARKPLUG`, `MAGLEV`, `TURBOSHAFT`,
        /// `TURBOFAN`).
        tier: StrId,
        /// The bytecode in base64, for interpreted code.
        bytecode_base64: StrId,
    }
}

table! {
    /// A row of `__intrinsic_v8_internal_code`: code of one of V8's own
    /// functions (builtins, bytecode handlers, ...).
    pub struct V8InternalCodeRow in "__intrinsic_v8_internal_code" {
        /// Its generated code (`__intrinsic_jit_code.id`).
        jit_code_id: u32,
        /// Its isolate (`__intrinsic_v8_isolate.id`).
        v8_isolate_id: u32,
        /// The function's name.
        function_name: StrId,
        /// Its type (`BUILTIN`, `BYTECODE_HANDLER`, ...).
        code_type: StrId,
    }
}

table! {
    /// A row of `__intrinsic_v8_wasm_code`: code of one WebAssembly
    /// function.
    pub struct V8WasmCodeRow in "__intrinsic_v8_wasm_code" {
        /// Its generated code (`__intrinsic_jit_code.id`).
        jit_code_id: u32,
        /// Its isolate (`__intrinsic_v8_isolate.id`).
        v8_isolate_id: u32,
        /// The module defining it (`__intrinsic_v8_wasm_script.id`).
        v8_wasm_script_id: u32,
        /// The function's name.
        function_name: StrId,
        /// The tier (`LIFTOFF`, `TURBOFAN`).
        tier: StrId,
        /// Where the function starts in its module (never filled: 0, as
        /// upstream leaves it).
        code_offset_in_module: i32,
    }
}

table! {
    /// A row of `__intrinsic_v8_regexp_code`: code of one regular
    /// expression.
    pub struct V8RegexpCodeRow in "__intrinsic_v8_regexp_code" {
        /// Its generated code (`__intrinsic_jit_code.id`).
        jit_code_id: u32,
        /// Its isolate (`__intrinsic_v8_isolate.id`).
        v8_isolate_id: u32,
        /// The pattern it was compiled from.
        pattern: StrId,
    }
}

/// V8's tables' rows as the importer fills them.
#[derive(Debug, Clone, Default)]
pub struct V8Rows {
    /// `__intrinsic_v8_isolate`.
    pub isolates: Vec<V8IsolateRow>,
    /// `__intrinsic_v8_js_script`.
    pub js_scripts: Vec<V8JsScriptRow>,
    /// `__intrinsic_v8_wasm_script`.
    pub wasm_scripts: Vec<V8WasmScriptRow>,
    /// `__intrinsic_v8_js_function`.
    pub js_functions: Vec<V8JsFunctionRow>,
    /// `__intrinsic_v8_js_code`.
    pub js_code: Vec<V8JsCodeRow>,
    /// `__intrinsic_v8_internal_code`.
    pub internal_code: Vec<V8InternalCodeRow>,
    /// `__intrinsic_v8_wasm_code`.
    pub wasm_code: Vec<V8WasmCodeRow>,
    /// `__intrinsic_v8_regexp_code`.
    pub regexp_code: Vec<V8RegexpCodeRow>,
}

#[cfg(feature = "sql")]
impl V8Rows {
    /// Every V8 table, frozen.
    pub fn freeze(
        &self,
        strings: &std::sync::Arc<crate::column_store::strings::StringPool>,
    ) -> Vec<crate::column_store::table::Table> {
        vec![
            V8IsolateRow::freeze(&self.isolates, strings),
            V8JsScriptRow::freeze(&self.js_scripts, strings),
            V8WasmScriptRow::freeze(&self.wasm_scripts, strings),
            V8JsFunctionRow::freeze(&self.js_functions, strings),
            V8JsCodeRow::freeze(&self.js_code, strings),
            V8InternalCodeRow::freeze(&self.internal_code, strings),
            V8WasmCodeRow::freeze(&self.wasm_code, strings),
            V8RegexpCodeRow::freeze(&self.regexp_code, strings),
        ]
    }
}

/// V8's tables' declarations.
pub const TABLES: &[super::TableDecl] = &[
    V8IsolateRow::TABLE,
    V8JsScriptRow::TABLE,
    V8WasmScriptRow::TABLE,
    V8JsFunctionRow::TABLE,
    V8JsCodeRow::TABLE,
    V8InternalCodeRow::TABLE,
    V8WasmCodeRow::TABLE,
    V8RegexpCodeRow::TABLE,
];

-- Written for zerotrace: the `v8.jit` module, the views over what the V8
-- importer (`parser/v8.rs`) reads of V8's code records. An isolate is one
-- V8 engine in a process; its scripts define functions; V8 generates code
-- for them (per compilation tier), for its own builtins, for WebAssembly
-- functions and for regular expressions. V8 never says when code is
-- freed: code loaded over other code marks the older one deleted, and
-- code moves are followed, in the JIT tables of `stack_trace.jit`.

-- One V8 isolate.
CREATE PERFETTO VIEW v8_isolate(
  -- The isolate's id.
  v8_isolate_id LONG,
  -- The process it runs in.
  upid JOINID(process.id),
  -- V8's own id of the isolate, unique in its process.
  internal_isolate_id LONG,
  -- Where the embedded blob's code starts.
  embedded_blob_code_start_address LONG,
  -- The embedded blob's code size in bytes.
  embedded_blob_code_size LONG,
  -- The code range's base address, when the isolate has one.
  code_range_base_address LONG,
  -- The code range's size, when the isolate has one.
  code_range_size LONG,
  -- Whether the process's isolates share this code range.
  shared_code_range LONG,
  -- Where the embedded builtins were copied into the code range, if
  -- they were.
  embedded_blob_code_copy_start_address LONG
) AS
SELECT
  id AS v8_isolate_id,
  upid,
  internal_isolate_id,
  embedded_blob_code_start_address,
  embedded_blob_code_size,
  code_range_base_address,
  code_range_size,
  shared_code_range,
  embedded_blob_code_copy_start_address
FROM __intrinsic_v8_isolate;

-- One JavaScript script.
CREATE PERFETTO VIEW v8_js_script(
  -- The script's id.
  v8_js_script_id LONG,
  -- Its isolate (`v8_isolate.v8_isolate_id`).
  v8_isolate_id LONG,
  -- V8's id of the script, unique in its isolate.
  internal_script_id LONG,
  -- Its type.
  script_type STRING,
  -- Its name.
  name STRING,
  -- Its source text.
  source STRING
) AS
SELECT
  id AS v8_js_script_id,
  v8_isolate_id,
  internal_script_id,
  script_type,
  name,
  source
FROM __intrinsic_v8_js_script;

-- One WebAssembly module.
CREATE PERFETTO VIEW v8_wasm_script(
  -- The script's id.
  v8_wasm_script_id LONG,
  -- Its isolate (`v8_isolate.v8_isolate_id`).
  v8_isolate_id LONG,
  -- V8's id of the script, unique in its isolate.
  internal_script_id LONG,
  -- Where it was loaded from.
  url STRING,
  -- Its wire bytes.
  wire_bytes BYTES,
  -- Its source.
  source STRING
) AS
SELECT
  id AS v8_wasm_script_id,
  v8_isolate_id,
  internal_script_id,
  url,
  base64_decode(wire_bytes_base64) AS wire_bytes,
  source
FROM __intrinsic_v8_wasm_script;

-- One JavaScript function.
CREATE PERFETTO VIEW v8_js_function(
  -- The function's id.
  v8_js_function_id LONG,
  -- Its name.
  name STRING,
  -- The script defining it (`v8_js_script.v8_js_script_id`).
  v8_js_script_id LONG,
  -- Whether it is its script's top level.
  is_toplevel BOOL,
  -- Its kind.
  kind STRING,
  -- Its line in the script, from 1.
  line LONG,
  -- Its column in the script, from 1.
  col LONG
) AS
SELECT
  id AS v8_js_function_id,
  name,
  v8_js_script_id,
  is_toplevel,
  kind,
  line,
  col
FROM __intrinsic_v8_js_function;

-- Code of a JavaScript function at one tier.
CREATE PERFETTO VIEW _v8_js_code(
  -- The row's id.
  id LONG,
  -- Its generated code (`_jit_code.jit_code_id`); NULL for bytecode.
  jit_code_id LONG,
  -- The function (`v8_js_function.v8_js_function_id`).
  v8_js_function_id LONG,
  -- The tier.
  tier STRING,
  -- The bytecode, for the interpreter's tier.
  bytecode BYTES
) AS
SELECT
  id,
  jit_code_id,
  v8_js_function_id,
  tier,
  base64_decode(bytecode_base64) AS bytecode
FROM __intrinsic_v8_js_code;

-- Code of one of V8's own functions.
CREATE PERFETTO VIEW _v8_internal_code(
  -- The row's id.
  id LONG,
  -- Its generated code (`_jit_code.jit_code_id`).
  jit_code_id LONG,
  -- Its isolate (`v8_isolate.v8_isolate_id`).
  v8_isolate_id LONG,
  -- The function's name.
  function_name STRING,
  -- The kind of code.
  code_type STRING
) AS
SELECT id, jit_code_id, v8_isolate_id, function_name, code_type
FROM __intrinsic_v8_internal_code;

-- Code of one WebAssembly function.
CREATE PERFETTO VIEW _v8_wasm_code(
  -- The row's id.
  id LONG,
  -- Its generated code (`_jit_code.jit_code_id`).
  jit_code_id LONG,
  -- Its isolate (`v8_isolate.v8_isolate_id`).
  v8_isolate_id LONG,
  -- Its module (`v8_wasm_script.v8_wasm_script_id`).
  v8_wasm_script_id LONG,
  -- The function's name.
  function_name STRING,
  -- The tier.
  tier STRING,
  -- Where the function starts in its module.
  code_offset_in_module LONG
) AS
SELECT
  id,
  jit_code_id,
  v8_isolate_id,
  v8_wasm_script_id,
  function_name,
  tier,
  code_offset_in_module
FROM __intrinsic_v8_wasm_code;

-- Code of one regular expression.
CREATE PERFETTO VIEW _v8_regexp_code(
  -- The row's id.
  id LONG,
  -- Its generated code (`_jit_code.jit_code_id`).
  jit_code_id LONG,
  -- Its isolate (`v8_isolate.v8_isolate_id`).
  v8_isolate_id LONG,
  -- The pattern it was compiled from.
  pattern STRING
) AS
SELECT id, jit_code_id, v8_isolate_id, pattern
FROM __intrinsic_v8_regexp_code;

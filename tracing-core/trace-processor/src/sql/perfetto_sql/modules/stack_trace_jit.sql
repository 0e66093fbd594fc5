-- Written for zerotrace: the `stack_trace.jit` module, the views over the
-- JIT tables: code a virtual machine generated at run time, and the
-- stack-profile frames that lie in it (filled by the JIT caches of
-- `tracker/jit_cache.rs`).

-- One piece of generated code.
CREATE PERFETTO VIEW _jit_code(
  -- The code's id.
  jit_code_id LONG,
  -- When it was created.
  create_ts TIMESTAMP,
  -- When it was found gone: an upper bound, known only when newer code
  -- was loaded over it.
  estimated_delete_ts TIMESTAMP,
  -- The thread that generated it.
  utid JOINID(thread.id),
  -- Its first address.
  start_address LONG,
  -- Its size in bytes.
  size LONG,
  -- The function it is the code of.
  function_name STRING,
  -- Its machine code.
  native_code BYTES
) AS
SELECT
  id AS jit_code_id,
  create_ts,
  estimated_delete_ts,
  utid,
  start_address,
  size,
  function_name,
  base64_decode(native_code_base64) AS native_code
FROM __intrinsic_jit_code;

-- A frame in generated code.
CREATE PERFETTO VIEW _jit_frame(
  -- The code it lies in (`_jit_code.jit_code_id`).
  jit_code_id LONG,
  -- The frame (`stack_profile_frame.id`).
  frame_id LONG
) AS
SELECT jit_code_id, frame_id
FROM __intrinsic_jit_frame;

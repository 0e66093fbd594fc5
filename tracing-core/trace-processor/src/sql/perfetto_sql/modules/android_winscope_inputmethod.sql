-- Written for zerotrace: the `android.winscope.inputmethod` module. The
-- input method dumps Winscope records (the clients, the input method
-- service and its manager service), one row per dump with its time and the
-- arg set its proto's fields were flattened into.

CREATE PERFETTO VIEW android_inputmethod_clients(
  -- The dump's row.
  id LONG,
  -- When the dump was taken.
  ts TIMESTAMP,
  -- The dump's fields.
  arg_set_id ARGSETID
) AS
SELECT id, ts, arg_set_id FROM __intrinsic_inputmethod_clients;

CREATE PERFETTO VIEW android_inputmethod_manager_service(
  -- The dump's row.
  id LONG,
  -- When the dump was taken.
  ts TIMESTAMP,
  -- The dump's fields.
  arg_set_id ARGSETID
) AS
SELECT id, ts, arg_set_id FROM __intrinsic_inputmethod_manager_service;

CREATE PERFETTO VIEW android_inputmethod_service(
  -- The dump's row.
  id LONG,
  -- When the dump was taken.
  ts TIMESTAMP,
  -- The dump's fields.
  arg_set_id ARGSETID
) AS
SELECT id, ts, arg_set_id FROM __intrinsic_inputmethod_service;

-- Written for zerotrace: the `std.traceinfo.trace` module. It provides
-- `_metadata_by_trace`: one row per trace of the session (each trace_id
-- the metadata names) with its session name, UUID, type, size, trigger
-- and the names of its machines (the machine's system name, else
-- `Machine <id>`, joined with ', '; '' when none).

CREATE PERFETTO FUNCTION _zt_trace_metadata(trace_id LONG, key STRING)
RETURNS ANY AS
SELECT coalesce(str_value, int_value)
FROM metadata
WHERE trace_id = $trace_id AND name = $key AND machine_id IS NULL
UNION ALL
SELECT coalesce(str_value, int_value)
FROM metadata
WHERE trace_id = $trace_id AND name = $key
LIMIT 1;

CREATE PERFETTO FUNCTION _zt_machine_metadata(machine_id LONG, key STRING)
RETURNS ANY AS
SELECT coalesce(str_value, int_value)
FROM metadata
WHERE machine_id = $machine_id AND name = $key
LIMIT 1;

CREATE PERFETTO TABLE _metadata_by_trace(
  trace_id LONG,
  unique_session_name STRING,
  trace_uuid STRING,
  trace_type STRING,
  trace_size_bytes LONG,
  trace_trigger STRING,
  machines STRING
) AS
WITH
  trace_machine AS (
    SELECT DISTINCT trace_id, machine_id
    FROM metadata
    WHERE trace_id IS NOT NULL AND machine_id IS NOT NULL
  ),
  machine_names AS (
    SELECT
      trace_id,
      group_concat(
        coalesce(_zt_machine_metadata(machine_id, 'system_name'), 'Machine ' || machine_id),
        ', '
      ) AS machines
    FROM trace_machine
    GROUP BY trace_id
  ),
  traces AS (
    SELECT DISTINCT trace_id FROM metadata WHERE trace_id IS NOT NULL
  )
SELECT
  traces.trace_id,
  _zt_trace_metadata(traces.trace_id, 'unique_session_name') AS unique_session_name,
  _zt_trace_metadata(traces.trace_id, 'trace_uuid') AS trace_uuid,
  _zt_trace_metadata(traces.trace_id, 'trace_type') AS trace_type,
  _zt_trace_metadata(traces.trace_id, 'trace_size_bytes') AS trace_size_bytes,
  _zt_trace_metadata(traces.trace_id, 'trace_trigger') AS trace_trigger,
  coalesce(machine_names.machines, '') AS machines
FROM traces
LEFT JOIN machine_names USING (trace_id);

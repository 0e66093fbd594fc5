-- Written for zerotrace: the `std.traceinfo.metadata_for_primary_scope`
-- module. It provides `_metadata_for_primary_scope`: one metadata entry
-- per name, the one of the root trace and machine when there are several
-- (entries without a trace or machine id come after those with one, lower
-- ids first).

CREATE PERFETTO TABLE _metadata_for_primary_scope(
  name STRING,
  str_value STRING,
  int_value LONG,
  key_type STRING
) AS
SELECT name, str_value, int_value, key_type
FROM (
  SELECT
    name,
    str_value,
    int_value,
    key_type,
    row_number() OVER (
      PARTITION BY name
      ORDER BY trace_id IS NULL, trace_id, machine_id IS NULL, machine_id
    ) AS rank_in_name
  FROM metadata
)
WHERE rank_in_name = 1;

-- Written for zerotrace: the v1 metric file android/process_metadata.sql.
-- Republishes the standard library's per-process metadata (package, uid,
-- debuggable, …) under the metric's names:
--   process_metadata_table     one row per process (android_process_metadata)
--   is_process_debuggable(n)   whether the process named n is debuggable

INCLUDE PERFETTO MODULE android.process_metadata;

CREATE OR REPLACE PERFETTO VIEW process_metadata_table AS
SELECT * FROM android_process_metadata;

CREATE OR REPLACE PERFETTO FUNCTION is_process_debuggable(process_name STRING)
RETURNS BOOL AS
SELECT debuggable
FROM android_process_metadata
WHERE process_name = $process_name
LIMIT 1;

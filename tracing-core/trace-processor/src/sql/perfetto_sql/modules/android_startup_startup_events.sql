-- android.startup.startup_events, written for zerotrace: the
-- `launching: <package>` async slices system_server emits around each
-- app launch (all Android versions).
--   _startup_events  (ts, dur, ts_end, package_name)

INCLUDE PERFETTO MODULE slices.with_context;

-- One row per `launching: <package>` process slice in system_server (or
-- in an unnamed process).
CREATE PERFETTO TABLE _startup_events(
  ts TIMESTAMP,
  dur DURATION,
  ts_end TIMESTAMP,
  package_name STRING
) AS
SELECT ts, dur, ts + dur AS ts_end, str_split(name, ': ', 1) AS package_name
FROM process_slice
WHERE name GLOB 'launching: *'
  AND (process_name IS NULL OR process_name = 'system_server');

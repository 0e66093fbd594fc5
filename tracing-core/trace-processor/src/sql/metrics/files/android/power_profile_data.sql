-- Written for zerotrace: the v1 metric file android/power_profile_data.sql.
-- Table `power_profile` (device, cpu, cluster, freq, power): per device,
-- the power each CPU draws at each frequency, in milliamps. Upstream's
-- file bundles measured profiles of a list of devices; zerotrace bundles
-- none (that data is upstream's, and no trace packet carries it), so the
-- table has its columns and no rows: the views over it are empty, and the
-- queries naming them still run.

CREATE OR REPLACE PERFETTO TABLE power_profile AS
SELECT
  CAST(NULL AS TEXT) AS device,
  CAST(NULL AS INT) AS cpu,
  CAST(NULL AS INT) AS cluster,
  CAST(NULL AS INT) AS freq,
  CAST(NULL AS REAL) AS power
WHERE FALSE;

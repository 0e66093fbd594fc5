-- android.aflags, written for zerotrace: the aconfig flags the
-- android.aflags data source saw, one row per flag per snapshot, over the
-- table its importer (parser/android_aflags.rs) fills.

-- Each flag of each aflags snapshot.
CREATE PERFETTO VIEW android_aflags(
  -- When the snapshot was taken.
  ts TIMESTAMP,
  -- The flag's aconfig package.
  package STRING,
  -- The flag's name in its package.
  name STRING,
  -- The flag's namespace.
  flag_namespace STRING,
  -- Where the flag lives (system, vendor, a mainline module).
  container STRING,
  -- Its value when the snapshot was taken.
  value STRING,
  -- Its value after the next reboot, when one is staged.
  staged_value STRING,
  -- read-only or read-write.
  permission STRING,
  -- default, server or local.
  value_picked_from STRING,
  -- none, aconfigd or device_config.
  storage_backend STRING,
  -- boolean or integer.
  type STRING
) AS
SELECT ts, package, name, flag_namespace, container, value, staged_value,
  permission, value_picked_from, storage_backend, type
FROM __intrinsic_android_aflags;

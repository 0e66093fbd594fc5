-- Written for zerotrace: the `android.device` module: the device's name as
-- Android's build fingerprint spells it (`brand/product/device:release/...`,
-- the part after the second slash and before the colon), per machine.

CREATE PERFETTO FUNCTION android_device_name_from_fingerprint(fingerprint STRING)
RETURNS STRING AS
SELECT str_split(str_split($fingerprint, '/', 2), ':', 0);

CREATE PERFETTO TABLE android_device_name(
  name STRING,
  machine_id JOINID(machine.id)
) AS
SELECT android_device_name_from_fingerprint(android_build_fingerprint) AS name, id AS machine_id
FROM machine
WHERE android_build_fingerprint IS NOT NULL;

-- Written for zerotrace: the v1 metric file android/cpu_info.sql. The CPUs
-- of the traced device by cluster and core type, from the power profile
-- of the device the build fingerprint names (android/power_profile_data.sql):
--   cluster_core_type     each cluster number's core type (little, big,
--                         bigger)
--   device_power_profile  the power profile rows of the traced device
--   core_cluster_per_cpu  each CPU's cluster
--   core_type_per_cpu     each CPU's core type
--   cpu_cluster_power     each core type's power at each frequency

SELECT RUN_METRIC('android/power_profile_data.sql');

CREATE OR REPLACE PERFETTO TABLE cluster_core_type AS
SELECT column1 AS cluster, column2 AS core_type
FROM (VALUES (0, 'little'), (1, 'big'), (2, 'bigger'));

-- A profile is the device's when the build fingerprint holds its name.
CREATE OR REPLACE PERFETTO VIEW device_power_profile AS
SELECT p.cpu, p.cluster, p.freq, p.power
FROM power_profile AS p
WHERE EXISTS (
  SELECT 1
  FROM metadata AS m
  WHERE m.name = 'android_build_fingerprint'
    AND INSTR(m.str_value, p.device) > 0
);

CREATE OR REPLACE PERFETTO VIEW core_cluster_per_cpu AS
SELECT DISTINCT cpu, cluster FROM device_power_profile;

CREATE OR REPLACE PERFETTO VIEW core_type_per_cpu AS
SELECT c.cpu, t.core_type
FROM core_cluster_per_cpu AS c
JOIN cluster_core_type AS t ON t.cluster = c.cluster;

CREATE OR REPLACE PERFETTO VIEW cpu_cluster_power AS
SELECT DISTINCT t.core_type, p.freq, p.power
FROM device_power_profile AS p
JOIN cluster_core_type AS t ON t.cluster = p.cluster;

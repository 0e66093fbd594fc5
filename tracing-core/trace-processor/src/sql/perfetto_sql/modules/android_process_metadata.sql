-- Written for zerotrace: the `android.process_metadata` module.
-- `android_process_metadata` gives each process its Android identity: its
-- name (the command line when the kernel's 15-character name is a
-- truncation of it or a zygote's), uid (app id) and user, whether several
-- packages share the uid, the package it runs (of those with its uid, the
-- one whose name prefixes the process's and is longest; any one when the
-- uid has one package; isolated processes by their name's part before ':')
-- and whether it is a kernel task. Also `android_is_kernel_task(upid)`.

INCLUDE PERFETTO MODULE android.user_list;

CREATE PERFETTO TABLE _uid_package_count AS
SELECT uid, count(1) AS cnt FROM package_list GROUP BY uid;

-- An app id with the per-profile offsets of SDK sandbox and other ranges
-- taken off, as packages list it.
CREATE PERFETTO FUNCTION _app_id_to_base_package(app_id LONG)
RETURNS LONG AS
SELECT
  CASE
    WHEN $app_id < 20000 THEN $app_id
    WHEN $app_id < 30000 THEN $app_id - 10000
    WHEN $app_id < 40000 THEN $app_id - 20000
    ELSE $app_id
  END;

CREATE PERFETTO FUNCTION _android_package_for_process(
  uid LONG,
  uid_count LONG,
  process_name STRING
)
RETURNS TABLE(package_name STRING, version_code LONG, debuggable BOOL) AS
WITH
  candidates AS (
    SELECT
      length($process_name) - length(package_name) AS distance,
      package_name,
      version_code,
      debuggable
    FROM package_list
    WHERE
      ($uid = uid AND ($uid_count = 1 OR $process_name GLOB package_name || '*'))
      OR ($uid >= 90000 AND $uid < 100000
          AND str_split($process_name, ':', 0) GLOB package_name || '*')
  ),
  best AS (SELECT min(distance) AS distance FROM candidates)
SELECT c.package_name, c.version_code, c.debuggable
FROM candidates AS c
WHERE c.distance = (SELECT distance FROM best)
LIMIT 1;

CREATE PERFETTO TABLE _android_kernel_tasks(upid LONG) AS
SELECT p.upid
FROM process AS p
LEFT JOIN process AS parent ON parent.upid = p.parent_upid
WHERE parent.name = 'kthreadd' OR p.pid = 0 OR parent.pid = 0
ORDER BY p.upid;

CREATE PERFETTO FUNCTION android_is_kernel_task(upid LONG)
RETURNS BOOL AS
SELECT EXISTS (SELECT 1 FROM _android_kernel_tasks WHERE upid = $upid);

CREATE PERFETTO TABLE android_process_metadata(
  upid JOINID(process.id),
  pid LONG,
  process_name STRING,
  uid LONG,
  shared_uid BOOL,
  user_id LONG,
  user_type STRING,
  package_name STRING,
  version_code LONG,
  debuggable LONG,
  is_kernel_task BOOL
) AS
SELECT
  p.upid,
  p.pid,
  iif(
    length(p.name) = 15
      AND (p.cmdline IN ('zygote', 'zygote64', '<pre-initialized>') OR p.cmdline GLOB '*' || p.name),
    p.cmdline,
    p.name
  ) AS process_name,
  p.android_appid AS uid,
  p.android_user_id AS user_id,
  u.type AS user_type,
  iif(n.cnt > 1, TRUE, NULL) AS shared_uid,
  pkg.package_name,
  pkg.version_code,
  pkg.debuggable,
  android_is_kernel_task(p.upid) AS is_kernel_task
FROM process AS p
LEFT JOIN _uid_package_count AS n ON n.uid = _app_id_to_base_package(p.android_appid)
LEFT JOIN _android_package_for_process(
  _app_id_to_base_package(p.android_appid),
  n.cnt,
  p.name
) AS pkg
LEFT JOIN android_user_list AS u ON u.android_user_id = p.android_user_id
ORDER BY p.upid;

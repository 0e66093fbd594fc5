-- Written for zerotrace: the `android.cpu.cpu_per_uid` module, over the
-- CPU time per uid that `cpu_per_uid_data` packets carry.
-- `android_cpu_per_uid_track`: each uid and cluster's counter track, its
-- CPU time over the trace (ms) and, for an app uid (10000 and up, any
-- user), the first package of that app id. `android_cpu_per_uid_counter`:
-- between each two successive readings of a track, the CPU time used (ms)
-- and the share of one CPU that is over the interval's wall time.

INCLUDE PERFETTO MODULE counters.intervals;

CREATE PERFETTO TABLE android_cpu_per_uid_track(
  id LONG,
  uid LONG,
  cluster LONG,
  total_cpu_millis LONG,
  package_name STRING
)
AS
SELECT
  t.track_id AS id,
  t.uid,
  t.cluster,
  t.total_cpu_millis,
  (
    SELECT p.package_name
    FROM package_list AS p
    WHERE p.uid = t.uid % 100000 AND p.uid >= 10000
    LIMIT 1
  ) AS package_name
FROM __intrinsic_android_cpu_per_uid_track AS t;

CREATE PERFETTO VIEW android_cpu_per_uid_counter(
  id LONG,
  ts LONG,
  dur LONG,
  track_id LONG,
  diff_ms LONG,
  cpu_ratio DOUBLE
)
AS
SELECT
  i.id,
  i.ts,
  i.dur,
  i.track_id,
  i.next_value - i.value AS diff_ms,
  (i.next_value - i.value) * 1e6 / i.dur AS cpu_ratio
FROM counter_leading_intervals!((
  SELECT c.id, c.ts, c.track_id, c.value
  FROM counter AS c
  JOIN android_cpu_per_uid_track AS t ON t.id = c.track_id
)) AS i
WHERE i.next_value IS NOT NULL;

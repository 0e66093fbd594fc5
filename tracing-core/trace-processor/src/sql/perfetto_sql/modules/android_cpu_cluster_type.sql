-- Written for zerotrace: the `android.cpu.cluster_type` module. Android
-- devices group their CPUs in two to four clusters; the cluster's index
-- among the device's clusters tells its kind (the first the little cores,
-- the last the big ones, those between medium). It provides
-- `android_cpu_cluster_mapping` (each CPU's kind, NULL when the trace has
-- a cluster count it does not know) and
-- `_active_cpu_count_for_cluster_type(kind)` (how many CPUs of the kind run
-- a task other than the idle one, from each change on).

INCLUDE PERFETTO MODULE intervals.overlap;

-- The kinds by cluster count and index.
CREATE PERFETTO TABLE _cores AS
SELECT column1 AS cluster_id, column2 AS cluster_type, column3 AS cluster_count
FROM (
  VALUES
    (0, 'little', 2), (1, 'big', 2),
    (0, 'little', 3), (1, 'medium', 3), (2, 'big', 3),
    (0, 'little', 4), (1, 'medium', 4), (2, 'medium', 4), (3, 'big', 4)
);

CREATE PERFETTO TABLE android_cpu_cluster_mapping(
  ucpu LONG,
  cpu LONG,
  cluster_type STRING
) AS
WITH n AS (SELECT count(DISTINCT cluster_id) AS clusters FROM cpu)
SELECT c.ucpu, c.cpu, k.cluster_type
FROM cpu AS c
LEFT JOIN _cores AS k
  ON k.cluster_id = c.cluster_id AND k.cluster_count = (SELECT clusters FROM n);

CREATE PERFETTO FUNCTION _active_cpu_count_for_cluster_type(cluster_type STRING)
RETURNS TABLE(
  ts TIMESTAMP,
  active_cpu_count LONG
) AS
WITH
  wanted AS (
    SELECT ucpu FROM android_cpu_cluster_mapping WHERE cluster_type = $cluster_type
  ),
  busy AS (
    SELECT ts, dur
    FROM sched
    WHERE ucpu IN (SELECT ucpu FROM wanted)
      AND utid NOT IN (SELECT utid FROM thread WHERE is_idle)
  )
SELECT ts, value AS active_cpu_count
FROM intervals_overlap_count!(busy, ts, dur)
ORDER BY ts;

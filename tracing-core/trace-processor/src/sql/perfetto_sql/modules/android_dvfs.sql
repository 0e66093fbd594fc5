-- Written for zerotrace: the `android.dvfs` module, over the frequency
-- counters of the DVFS domains Pixel devices expose (CPU domains, memory
-- interface, interconnect, DSU and the per-CPU memory latency governors):
-- `android_dvfs_counters` (each value with the time it held, to the next
-- value or the trace's end), `android_dvfs_counter_stats` (per counter:
-- extremes, span and time-weighted mean) and
-- `android_dvfs_counter_residency` (per counter and value: time held and
-- its share of the counter's time).

CREATE PERFETTO TABLE _android_dvfs_names AS
SELECT column1 AS name
FROM (
  VALUES
    ('domain@0 Frequency'), ('domain@1 Frequency'), ('domain@2 Frequency'),
    ('17000010.devfreq_mif Frequency'), ('17000020.devfreq_int Frequency'),
    ('17000090.devfreq_dsu Frequency'), ('170000a0.devfreq_bci Frequency'),
    ('dsu_throughput Frequency'), ('bus_throughput Frequency'),
    ('cpu0dsu Frequency'), ('cpu1dsu Frequency'), ('cpu2dsu Frequency'),
    ('cpu3dsu Frequency'), ('cpu4dsu Frequency'), ('cpu5dsu Frequency'),
    ('cpu6dsu Frequency'), ('cpu7dsu Frequency'), ('cpu8dsu Frequency'),
    ('gs_memlat_devfreq:devfreq_mif_cpu0_memlat@17000010 Frequency'),
    ('gs_memlat_devfreq:devfreq_mif_cpu1_memlat@17000010 Frequency'),
    ('gs_memlat_devfreq:devfreq_mif_cpu2_memlat@17000010 Frequency'),
    ('gs_memlat_devfreq:devfreq_mif_cpu3_memlat@17000010 Frequency'),
    ('gs_memlat_devfreq:devfreq_mif_cpu4_memlat@17000010 Frequency'),
    ('gs_memlat_devfreq:devfreq_mif_cpu5_memlat@17000010 Frequency'),
    ('gs_memlat_devfreq:devfreq_mif_cpu6_memlat@17000010 Frequency'),
    ('gs_memlat_devfreq:devfreq_mif_cpu7_memlat@17000010 Frequency'),
    ('gs_memlat_devfreq:devfreq_mif_cpu8_memlat@17000010 Frequency')
);

CREATE PERFETTO VIEW android_dvfs_counters(
  name STRING,
  ts TIMESTAMP,
  value DOUBLE,
  dur DURATION
) AS
SELECT
  t.name,
  c.ts,
  c.value,
  lead(c.ts, 1, trace_end()) OVER (PARTITION BY t.id ORDER BY c.ts) - c.ts AS dur
FROM counter AS c
JOIN counter_track AS t ON t.id = c.track_id
WHERE t.name IN (SELECT name FROM _android_dvfs_names)
ORDER BY c.ts;

CREATE PERFETTO TABLE android_dvfs_counter_stats(
  name STRING,
  max DOUBLE,
  min DOUBLE,
  dur DURATION,
  wgt_avg DOUBLE
) AS
SELECT
  name,
  max(value) AS max,
  min(value) AS min,
  max(ts) - min(ts) AS dur,
  sum(value * dur) / sum(dur) AS wgt_avg
FROM android_dvfs_counters
WHERE dur > 0
GROUP BY name;

CREATE PERFETTO VIEW android_dvfs_counter_residency(
  name STRING,
  value DOUBLE,
  dur DURATION,
  pct DOUBLE
) AS
WITH
  held AS (SELECT name, value, dur FROM android_dvfs_counters WHERE dur > 0),
  per_name AS (SELECT name, sum(dur) AS total FROM held GROUP BY name)
SELECT
  h.name,
  h.value,
  sum(h.dur) AS dur,
  sum(h.dur) * 100.0 / n.total AS pct
FROM held AS h
JOIN per_name AS n USING (name)
GROUP BY h.name, h.value;

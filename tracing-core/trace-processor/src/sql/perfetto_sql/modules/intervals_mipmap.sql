-- Written for zerotrace: the `intervals.mipmap` module. It summarises
-- slices at a coarser time resolution: each partition's time (the span
-- of its slices) is cut into fixed-length buckets
-- (`_mipmap_bucket_metadata!`, `_mipmap_buckets_table!`), each bucket
-- takes the group (`group_hash`) its slices overlap longest
-- (ties: the earliest-starting, then the smallest hash), and runs of
-- consecutive buckets with the same group merge into one slice
-- (`_mipmap_merged!`).

INCLUDE PERFETTO MODULE intervals.intersect;

-- For each value of `_partition_column` of `_source_table` (`ts`, `dur`):
-- the partition, trace_min_ts (its first start), trace_max_ts (its last
-- end), bucket_duration_ns and bucket_count (how many buckets of that
-- length cover the span, the last one possibly partly).
CREATE PERFETTO MACRO _mipmap_bucket_metadata(
  _source_table TableOrSubQuery,
  _partition_column ColumnName,
  _bucket_duration_ns Expr
)
RETURNS TableOrSubQuery
AS (
  SELECT
    $_partition_column,
    trace_min_ts,
    trace_max_ts,
    bucket_duration_ns,
    (trace_max_ts - trace_min_ts + bucket_duration_ns - 1) / bucket_duration_ns
      AS bucket_count
  FROM (
    SELECT
      $_partition_column,
      $_bucket_duration_ns AS bucket_duration_ns,
      min(ts) AS trace_min_ts,
      max(ts + dur) AS trace_max_ts
    FROM $_source_table
    GROUP BY $_partition_column
  )
);

-- The buckets of each partition: id (unique, in partition then bucket
-- order), the partition, bucket_index (from 0), ts and dur.
CREATE PERFETTO MACRO _mipmap_buckets_table(
  _source_table TableOrSubQuery,
  _partition_column ColumnName,
  _bucket_duration_ns Expr
)
RETURNS TableOrSubQuery
AS (
  WITH RECURSIVE
    _zt_meta AS (
      SELECT * FROM _mipmap_bucket_metadata!(
        $_source_table, $_partition_column, $_bucket_duration_ns)
    ),
    _zt_buckets($_partition_column, bucket_index, ts, dur) AS (
      SELECT $_partition_column, 0, trace_min_ts, bucket_duration_ns
      FROM _zt_meta
      UNION ALL
      SELECT
        b.$_partition_column,
        b.bucket_index + 1,
        b.ts + m.bucket_duration_ns,
        m.bucket_duration_ns
      FROM _zt_buckets AS b
      JOIN _zt_meta AS m USING ($_partition_column)
      WHERE b.bucket_index + 1 < m.bucket_count
    )
  SELECT
    row_number() OVER (ORDER BY $_partition_column, bucket_index) AS id,
    $_partition_column,
    bucket_index,
    CAST(ts AS INT) AS ts,
    dur
  FROM _zt_buckets
);

-- The slices of `_source_slices_with_ids` (`id`, `ts`, `dur`,
-- `group_hash` and the partition) at the resolution of `_buckets` (from
-- `_mipmap_buckets_table!` with the same bucket length): for each run of
-- buckets whose dominant group is the same, the partition, id (the
-- smallest id among the dominant slices), ts (the run's first bucket),
-- dur (the run's buckets' length) and group_hash; sorted by ts.
CREATE PERFETTO MACRO _mipmap_merged(
  _source_slices_with_ids TableOrSubQuery,
  _buckets TableOrSubQuery,
  _partition_column ColumnName,
  _bucket_duration_ns Expr
)
RETURNS TableOrSubQuery
AS (
  WITH
    _zt_cut AS (
      SELECT
        ii.dur AS overlap_dur,
        b.bucket_index,
        b.ts AS bucket_ts,
        s.$_partition_column AS part,
        s.id AS source_id,
        s.group_hash,
        s.ts AS source_ts
      FROM _interval_intersect!(
        ($_buckets, $_source_slices_with_ids), ($_partition_column)) AS ii
      JOIN $_buckets AS b ON b.id = ii.id_0
      JOIN $_source_slices_with_ids AS s ON s.id = ii.id_1
    ),
    _zt_bucket_time AS (
      SELECT part, bucket_index, bucket_ts, sum(overlap_dur) AS busy
      FROM _zt_cut
      GROUP BY part, bucket_index, bucket_ts
    ),
    _zt_group_time AS (
      SELECT
        part,
        bucket_index,
        group_hash,
        min(source_id) AS source_id,
        sum(overlap_dur) AS overlap,
        min(source_ts) AS first_ts
      FROM _zt_cut
      GROUP BY part, bucket_index, group_hash
    ),
    _zt_dominant AS (
      SELECT part, bucket_index, source_id, group_hash
      FROM (
        SELECT
          *,
          row_number() OVER (
            PARTITION BY part, bucket_index
            ORDER BY overlap DESC, first_ts ASC, group_hash ASC
          ) AS rank
        FROM _zt_group_time
      )
      WHERE rank = 1
    ),
    _zt_changes AS (
      SELECT
        t.part,
        t.bucket_index,
        t.bucket_ts AS ts,
        d.source_id,
        d.group_hash,
        d.group_hash != coalesce(
          lag(d.group_hash) OVER (PARTITION BY t.part ORDER BY t.bucket_index), ''
        ) AS changed
      FROM _zt_bucket_time AS t
      JOIN _zt_dominant AS d USING (part, bucket_index)
    ),
    _zt_runs AS (
      SELECT
        *,
        sum(CAST(changed AS INT)) OVER (
          PARTITION BY part ORDER BY bucket_index ROWS UNBOUNDED PRECEDING
        ) AS run
      FROM _zt_changes
    )
  SELECT
    part AS $_partition_column,
    min(source_id) AS id,
    CAST(min(ts) AS INT) AS ts,
    (max(bucket_index) - min(bucket_index) + 1) * $_bucket_duration_ns AS dur,
    group_hash
  FROM _zt_runs
  GROUP BY part, run, group_hash
  ORDER BY ts
);

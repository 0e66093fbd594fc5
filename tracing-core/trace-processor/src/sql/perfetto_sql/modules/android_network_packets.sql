-- Written for zerotrace: the `android.network_packets` module.
-- `android_network_packets`: the Android network trace's packets (one row
-- per packet, or per aggregate of packets), with the app, interface,
-- direction, transport, ports, ICMP type and code, TCP flags and socket
-- tag of each; and two macros modelling a radio that stays up for a
-- while after traffic: `android_network_uptime_spans!(src, (cols),
-- timeout)`, the spans the interface is up per partition, and
-- `android_network_uptime_cost!(src, (cols), timeout)`, how much of that
-- up time each row is responsible for.

INCLUDE PERFETTO MODULE std.metasql.unparenthesize;

CREATE PERFETTO VIEW android_network_packets(
  id ID,
  ts TIMESTAMP,
  dur DURATION,
  track_name STRING,
  package_name STRING,
  iface STRING,
  direction STRING,
  packet_count LONG,
  packet_length LONG,
  packet_transport STRING,
  packet_tcp_flags STRING,
  socket_tag STRING,
  socket_uid LONG,
  local_port LONG,
  remote_port LONG,
  packet_icmp_type LONG,
  packet_icmp_code LONG,
  packet_tcp_flags_int LONG,
  socket_tag_int LONG
) AS
SELECT
  s.id,
  s.ts,
  s.dur,
  s.category AS track_name,
  s.name AS package_name,
  n.iface,
  n.direction,
  n.packet_count,
  n.packet_length,
  n.packet_transport,
  -- The text forms keep the plain names (the UI shows them); the numbers
  -- take the `_int` suffix.
  n.packet_tcp_flags_str AS packet_tcp_flags,
  n.socket_tag_str AS socket_tag,
  n.socket_uid,
  n.local_port,
  n.remote_port,
  n.packet_icmp_type,
  n.packet_icmp_code,
  n.packet_tcp_flags AS packet_tcp_flags_int,
  n.socket_tag AS socket_tag_int
FROM __intrinsic_android_network_packets AS n
JOIN slice AS s ON s.id = n.slice_id;

-- `src` with, per partition, the latest end among the rows before each
-- (`max_end_so_far`, NULL for the first) and the number of the group of
-- rows that overlap one another contiguously that the row is in
-- (`group_id`: a row starts a new group when it begins after everything
-- before it ended).
CREATE PERFETTO MACRO _add_overlap_group_id(
  src TableOrSubquery,
  partition_columns ColumnNameList
)
RETURNS TableOrSubquery
AS (
  SELECT
    *,
    SUM(IIF(max_end_so_far IS NULL OR ts > max_end_so_far, 1, 0)) OVER (
      PARTITION BY metasql_unparenthesize_exprlist!($partition_columns)
      ORDER BY ts
    ) AS group_id
  FROM (
    SELECT
      *,
      MAX(ts + dur) OVER (
        PARTITION BY metasql_unparenthesize_exprlist!($partition_columns)
        ORDER BY ts
        ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING
      ) AS max_end_so_far
    FROM $src
  )
);

-- The spans an interface is up per partition, when each row keeps it up
-- for `timeout` ns after it ends: (partition columns, ts, dur,
-- packet_count, packet_length). Rows are first merged per partition and
-- `timeout`-long time bucket.
CREATE PERFETTO MACRO android_network_uptime_spans(
  src TableOrSubquery,
  partition_columns ColumnNameList,
  timeout Expr
)
RETURNS TableOrSubquery
AS (
  SELECT
    metasql_unparenthesize_exprlist!($partition_columns),
    MIN(ts) AS ts,
    MAX(ts + dur) - MIN(ts) AS dur,
    SUM(packet_count) AS packet_count,
    SUM(packet_length) AS packet_length
  FROM _add_overlap_group_id!(
    (
      SELECT
        metasql_unparenthesize_exprlist!($partition_columns),
        MIN(ts) AS ts,
        MAX(ts + dur + $timeout) - MIN(ts) AS dur,
        SUM(packet_count) AS packet_count,
        SUM(packet_length) AS packet_length
      FROM $src
      GROUP BY
        metasql_unparenthesize_exprlist!($partition_columns),
        CAST(ts / $timeout AS LONG)
    ),
    $partition_columns
  )
  GROUP BY metasql_unparenthesize_exprlist!($partition_columns), group_id
);

-- Each row's share of the up time (id, uptime_cost in ns): the time it
-- pushed the timeout forward since what came before it (at most
-- `timeout`; `timeout` for a partition's first row), plus the length of
-- its overlap group spread over the group's rows by packet count.
CREATE PERFETTO MACRO android_network_uptime_cost(
  src TableOrSubquery,
  partition_columns ColumnNameList,
  timeout Expr
)
RETURNS TableOrSubquery
AS (
  SELECT
    id,
    COALESCE(MAX(0, MIN($timeout, ts - max_end_so_far)), $timeout)
      + group_dur * packet_count / group_packets AS uptime_cost
  FROM (
    SELECT
      *,
      SUM(packet_count) OVER g AS group_packets,
      MAX(ts + dur) OVER g - MIN(ts) OVER g AS group_dur
    FROM _add_overlap_group_id!($src, $partition_columns)
    WINDOW g AS (
      PARTITION BY metasql_unparenthesize_exprlist!($partition_columns), group_id
    )
  )
);

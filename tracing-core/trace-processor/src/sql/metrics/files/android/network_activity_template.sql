-- Written for zerotrace: the v1 metric file
-- android/network_activity_template.sql. View `{{view_name}}`: the
-- Android network trace's packets matching `{{filter}}` turned into spans
-- of interface activity per `{{group_by}}` (an expression, `null` for one
-- group): packets are first merged per `{{quant_ns}}`-long time bucket;
-- activity continues while each merged piece starts at most `{{idle_ns}}`
-- after everything before it in its group ended, and each span lasts
-- `{{idle_ns}}` past its last packet. Columns: the group_by column(s),
-- ts, dur, packet_count, packet_length.

INCLUDE PERFETTO MODULE android.network_packets;

CREATE OR REPLACE PERFETTO VIEW {{view_name}} AS
WITH buckets AS (
  SELECT
    {{group_by}},
    MIN(ts) AS ts,
    MAX(ts + dur) - MIN(ts) AS dur,
    SUM(packet_count) AS packet_count,
    SUM(packet_length) AS packet_length
  FROM android_network_packets
  WHERE {{filter}}
  GROUP BY CAST(ts / {{quant_ns}} AS INT64), {{group_by}}
),
numbered AS (
  SELECT
    *,
    -- A new activity span starts where this piece begins more than
    -- idle_ns after every earlier piece of its group ended.
    SUM(IIF(ts - prev_end > {{idle_ns}}, 1, 0)) OVER (
      PARTITION BY {{group_by}} ORDER BY ts
    ) AS span_id
  FROM (
    SELECT
      *,
      MAX(ts + dur) OVER (
        PARTITION BY {{group_by}} ORDER BY ts
        ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING
      ) AS prev_end
    FROM buckets
  )
)
SELECT
  {{group_by}},
  MIN(ts) AS ts,
  MAX(ts + dur) - MIN(ts) + {{idle_ns}} AS dur,
  SUM(packet_count) AS packet_count,
  SUM(packet_length) AS packet_length
FROM numbered
GROUP BY span_id, {{group_by}};

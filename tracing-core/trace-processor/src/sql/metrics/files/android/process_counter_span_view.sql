-- Written for zerotrace: the v1 metric file
-- android/process_counter_span_view.sql. View `{{table_name}}_span` (ts,
-- dur, upid, {{table_name}}_val): the readings of process counter
-- `{{counter_name}}` as spans, each lasting until the next reading on its
-- track; the last until its process ends (the trace's end when it has not)
-- plus one nanosecond.

CREATE OR REPLACE PERFETTO VIEW {{table_name}}_span AS
SELECT
  c.ts,
  LEAD(c.ts, 1, (
    SELECT COALESCE(p.end_ts, trace_end()) + 1 FROM process AS p WHERE p.upid = t.upid
  )) OVER (PARTITION BY c.track_id ORDER BY c.ts) - c.ts AS dur,
  t.upid,
  c.value AS {{table_name}}_val
FROM counter AS c
JOIN process_counter_track AS t ON t.id = c.track_id
WHERE t.name = '{{counter_name}}' AND t.upid IS NOT NULL;

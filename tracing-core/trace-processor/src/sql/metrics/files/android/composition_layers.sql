-- Written for zerotrace: the v1 metric file android/composition_layers.sql.
-- View `{{output}}` (ts, display_id, value): the readings of the
-- process counters named `{{track_name}}…` (HWComposer's per-display layer
-- counts, `<name>(<display>)`), each stamped with the time of the reading
-- before it (a count holds until the next one), the first of all left out,
-- as are negative counts. `display_id` is the text between the name's
-- parentheses, `unspecified` without them.

CREATE OR REPLACE PERFETTO VIEW {{output}} AS
WITH readings AS (
  SELECT
    LAG(c.ts) OVER (ORDER BY c.ts) AS prev_ts,
    t.name,
    c.value
  FROM counter AS c
  JOIN process_counter_track AS t ON t.id = c.track_id
  WHERE t.name GLOB '{{track_name}}*'
)
SELECT
  prev_ts AS ts,
  IIF(
    instr(name, '(') = 0,
    'unspecified',
    substr(name, instr(name, '(') + 1, instr(name, ')') - instr(name, '(') - 1)
  ) AS display_id,
  value
FROM readings
WHERE prev_ts IS NOT NULL AND value >= 0;

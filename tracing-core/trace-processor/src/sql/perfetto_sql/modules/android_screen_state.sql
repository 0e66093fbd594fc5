-- Written for zerotrace: the `android.screen_state` module.
-- `android_screen_state`: the display's state over the whole trace, from
-- the `ScreenState` counter (Display.STATE_*: 1 off, 2 on, 3 doze, 4
-- doze-suspend, 5 on in VR, 6 on-suspend), as a simple state (off, on,
-- doze), a short and a long name; each value held until the next, the
-- time before the first reading and any other value `unknown`; rows
-- numbered from 1 in time order.

INCLUDE PERFETTO MODULE counters.intervals;
INCLUDE PERFETTO MODULE intervals.fill_gaps;

CREATE PERFETTO TABLE android_screen_state(
  id ID,
  ts TIMESTAMP,
  dur DURATION,
  simple_screen_state STRING,
  short_screen_state STRING,
  screen_state STRING
)
AS
WITH
  held AS (
    SELECT id, ts, dur, value AS v
    FROM counter_leading_intervals!((
      SELECT c.id, c.ts, 0 AS track_id, c.value
      FROM counter AS c
      JOIN counter_track AS t ON t.id = c.track_id
      WHERE t.name = 'ScreenState'
    ))
    WHERE dur > 0
  ),
  named AS (
    SELECT
      id,
      ts,
      dur,
      CASE
        WHEN v = 1 THEN 'off'
        WHEN v IN (2, 5, 6) THEN 'on'
        WHEN v IN (3, 4) THEN 'doze'
      END AS simple_screen_state,
      CASE v
        WHEN 1 THEN 'off'
        WHEN 2 THEN 'on'
        WHEN 3 THEN 'doze'
        WHEN 4 THEN 'doze-suspend'
        WHEN 5 THEN 'on-vr'
        WHEN 6 THEN 'on-suspend'
      END AS short_screen_state,
      CASE v
        WHEN 1 THEN 'Screen off'
        WHEN 2 THEN 'Screen on'
        WHEN 3 THEN 'Always-on display (doze)'
        WHEN 4 THEN 'Always-on display (doze-suspend)'
        WHEN 5 THEN 'Screen on (VR)'
        WHEN 6 THEN 'Screen on (suspend)'
      END AS screen_state
    FROM held
  )
SELECT
  row_number() OVER () AS id,
  ts,
  dur,
  coalesce(simple_screen_state, 'unknown') AS simple_screen_state,
  coalesce(short_screen_state, 'unknown') AS short_screen_state,
  coalesce(screen_state, 'Unknown') AS screen_state
FROM _intervals_fill_gaps!(
  (NULL),
  (simple_screen_state, short_screen_state, screen_state),
  named
);

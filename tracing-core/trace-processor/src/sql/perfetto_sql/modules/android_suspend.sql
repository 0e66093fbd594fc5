-- Written for zerotrace: the `android.suspend` module. The kernel's
-- suspend/resume events become slices on the `Suspend/Resume Minimal`
-- track (or, from older kernels, `syscore_resume(0)` and
-- `timekeeping_freeze(0)` slices on `Suspend/Resume Latency`); this module
-- turns them into `android_suspend_state`, each machine's time split into
-- `awake` and `suspended` intervals (a suspension that overlaps the next
-- one, left by lost data, is ignored; machine 0 is awake over the whole
-- trace when it has none), and `_extract_duration_without_suspend(ts,
-- dur)`, a duration less the time suspended within it.

INCLUDE PERFETTO MODULE intervals.fill_gaps;

-- Each track is chosen by name first and its slices read through the
-- slice table's track (`track CROSS JOIN slice`): joined the other way,
-- SQLite scanned every slice of the trace with a track lookup each.
CREATE PERFETTO TABLE android_suspend_state(
  ts TIMESTAMP,
  dur DURATION,
  power_state STRING,
  machine_id JOINID(machine.id)
) AS
WITH
  minimal AS (
    SELECT s.ts, s.dur, t.machine_id
    FROM track AS t
    CROSS JOIN slice AS s ON s.track_id = t.id
    WHERE t.name = 'Suspend/Resume Minimal'
  ),
  latency AS (
    SELECT s.ts, s.dur, t.machine_id
    FROM track AS t
    CROSS JOIN slice AS s ON s.track_id = t.id
    WHERE t.name = 'Suspend/Resume Latency'
      AND s.name IN ('syscore_resume(0)', 'timekeeping_freeze(0)')
      AND s.dur != -1
      AND NOT EXISTS (
        SELECT 1 FROM minimal AS m WHERE m.machine_id IS t.machine_id
      )
  ),
  both_kinds AS (
    SELECT ts, dur, machine_id FROM minimal
    UNION ALL
    SELECT ts, dur, machine_id FROM latency
  ),
  spaced AS (
    SELECT
      ts,
      dur,
      machine_id,
      coalesce(lead(ts) OVER (PARTITION BY machine_id ORDER BY ts), trace_end()) - ts - dur
        AS room_after
    FROM both_kinds
  ),
  suspended AS (
    SELECT ts, dur, machine_id, 'suspended' AS power_state
    FROM spaced
    WHERE room_after >= 0
    UNION ALL
    SELECT NULL, NULL, 0, NULL
  )
SELECT
  ts,
  dur,
  coalesce(power_state, 'awake') AS power_state,
  coalesce(machine_id, 0) AS machine_id
FROM _intervals_fill_gaps!((machine_id), (power_state), suspended)
ORDER BY ts;

CREATE PERFETTO FUNCTION _extract_duration_without_suspend(ts TIMESTAMP, dur DURATION)
RETURNS LONG AS
SELECT to_monotonic($ts + $dur) - to_monotonic($ts);

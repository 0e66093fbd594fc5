-- Written for zerotrace: the `android.profiling_manager.util` module.
-- `_android_generate_start_to_end_slices(start_pattern, end_pattern,
-- inclusive)`: for each slice whose name matches `start_pattern` (GLOB),
-- the span from its start to the first later-starting slice matching
-- `end_pattern`: to that slice's start, or its end when `inclusive`.
-- A start with no such end has a NULL `dur`.

CREATE PERFETTO FUNCTION _android_generate_start_to_end_slices(
  start_pattern STRING,
  end_pattern STRING,
  inclusive BOOL
)
RETURNS TABLE(
  name STRING,
  ts LONG,
  dur LONG
)
AS
SELECT
  s.name,
  s.ts,
  (
    SELECT e.ts + iif($inclusive, e.dur, 0)
    FROM slice AS e
    WHERE e.name GLOB $end_pattern AND e.ts > s.ts
    ORDER BY e.ts
    LIMIT 1
  ) - s.ts AS dur
FROM slice AS s
WHERE s.name GLOB $start_pattern;

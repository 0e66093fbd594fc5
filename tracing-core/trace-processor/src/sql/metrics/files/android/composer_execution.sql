-- Written for zerotrace: the v1 metric file android/composer_execution.sql.
-- How long HWComposer took per frame and display, from its slices
-- `HwcPresentOrValidateDisplay`, `HwcValidateDisplay` and
-- `HwcPresentDisplay` (each optionally followed by ` <display>`): a
-- validation followed on its display by a present is one execution of
-- both durations (`separated_validation` after HwcValidateDisplay,
-- `unskipped_validation` after HwcPresentOrValidateDisplay); a
-- present-or-validate alone is `skipped_validation`.

-- Those slices by display, with the next one's name and duration on the
-- same display ('' and 0 for the last).
CREATE OR REPLACE PERFETTO VIEW raw_hwc_function_spans AS
WITH named AS (
  SELECT
    s.id,
    s.ts,
    s.dur,
    IIF(instr(s.name, ' ') = 0, s.name, substr(s.name, 1, instr(s.name, ' ') - 1)) AS name,
    IIF(instr(s.name, ' ') = 0, 'unspecified', substr(s.name, instr(s.name, ' ') + 1))
      AS display_id
  FROM slice AS s
  WHERE s.name GLOB 'HwcPresentOrValidateDisplay*'
    OR s.name GLOB 'HwcValidateDisplay*'
    OR s.name GLOB 'HwcPresentDisplay*'
)
SELECT
  id,
  display_id,
  name,
  dur,
  LEAD(name, 1, '') OVER (PARTITION BY display_id ORDER BY ts) AS next_name,
  LEAD(dur, 1, 0) OVER (PARTITION BY display_id ORDER BY ts) AS next_dur
FROM named
ORDER BY ts;

-- View `{{output}}` (id, display_id, execution_time_ns, validation_type):
-- one row per validation slice.
CREATE OR REPLACE PERFETTO VIEW {{output}} AS
SELECT
  id,
  display_id,
  CASE
    WHEN next_name = 'HwcPresentDisplay' THEN dur + next_dur
    WHEN name = 'HwcPresentOrValidateDisplay' THEN dur
    ELSE 0
  END AS execution_time_ns,
  CASE
    WHEN next_name = 'HwcPresentDisplay' AND name = 'HwcValidateDisplay'
      THEN 'separated_validation'
    WHEN next_name = 'HwcPresentDisplay' THEN 'unskipped_validation'
    WHEN name = 'HwcPresentOrValidateDisplay' THEN 'skipped_validation'
    ELSE 'unknown'
  END AS validation_type
FROM raw_hwc_function_spans
WHERE name IN ('HwcValidateDisplay', 'HwcPresentOrValidateDisplay');

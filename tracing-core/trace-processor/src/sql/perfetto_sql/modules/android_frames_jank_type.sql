-- android.frames.jank_type, written for zerotrace: which party a frame
-- timeline's jank type (the `Jank type` arg, several types joined by
-- commas) blames. Each function answers whether any of the named types
-- appears in the text.

-- Whether the jank type names a SurfaceFlinger jank (its CPU or GPU
-- deadline, its scheduling, a prediction error or the display HAL).
CREATE PERFETTO FUNCTION android_is_sf_jank_type(
  -- The jank type (the `Jank type` arg's display value).
  jank_type STRING
)
-- True when SurfaceFlinger caused the jank.
RETURNS BOOL
AS
SELECT
  instr($jank_type, 'SurfaceFlinger CPU Deadline Missed') > 0
  OR instr($jank_type, 'SurfaceFlinger GPU Deadline Missed') > 0
  OR instr($jank_type, 'SurfaceFlinger Scheduling') > 0
  OR instr($jank_type, 'Prediction Error') > 0
  OR instr($jank_type, 'Display HAL') > 0;

-- Whether the jank type names an app jank (a missed deadline or resynced
-- jitter of the app).
CREATE PERFETTO FUNCTION android_is_app_jank_type(
  -- The jank type (the `Jank type` arg's display value).
  jank_type STRING
)
-- True when the app caused the jank.
RETURNS BOOL
AS
SELECT
  instr($jank_type, 'App Deadline Missed') > 0
  OR instr($jank_type, 'App Resynced Jitter') > 0;

-- Whether the jank type is a missed frame: SurfaceFlinger's, the app's,
-- or a dropped frame.
CREATE PERFETTO FUNCTION android_is_missed_frame_type(
  -- The jank type (the `Jank type` arg's display value).
  jank_type STRING
)
-- True when the frame was missed.
RETURNS BOOL
AS
SELECT
  android_is_sf_jank_type($jank_type)
  OR android_is_app_jank_type($jank_type)
  OR instr($jank_type, 'Dropped Frame') > 0;

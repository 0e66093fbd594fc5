-- Written for zerotrace: the `android.screenshots` module.
-- `android_screenshots`: the screenshots a trace carries, the instants
-- named `Screenshot` in category `android_screenshot` that hold an image
-- in their `screenshot.jpg_image` arg.

CREATE PERFETTO TABLE android_screenshots(
  id ID(slice.id),
  ts TIMESTAMP,
  dur DURATION,
  name STRING
)
AS
SELECT s.id, s.ts, s.dur, s.name
FROM slice AS s
JOIN args AS a ON a.arg_set_id = s.arg_set_id
WHERE s.name = 'Screenshot'
  AND s.category = 'android_screenshot'
  AND a.key = 'screenshot.jpg_image';

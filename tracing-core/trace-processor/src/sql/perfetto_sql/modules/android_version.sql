-- android.version, written for zerotrace: the Android SDK level the
-- trace's metadata records.
--   _android_sdk_version()  the `android_sdk_version` metadata, or NULL

-- The device's SDK level from the trace metadata; NULL when absent.
CREATE PERFETTO FUNCTION _android_sdk_version()
RETURNS LONG
AS
SELECT int_value FROM metadata WHERE name = 'android_sdk_version' LIMIT 1;

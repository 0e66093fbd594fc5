-- Written for zerotrace: the `android.user_list` module:
-- `android_user_list`, the device's users (id and type) as Android's
-- probes listed them.

CREATE PERFETTO VIEW android_user_list(
  android_user_id LONG,
  type STRING
) AS
SELECT android_user_id, type FROM __intrinsic_android_user_list;

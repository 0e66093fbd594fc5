-- Written for zerotrace: the `linux.block_io` module. It provides
-- `linux_active_block_io_operations_by_device` (per block device, the
-- number of IO operations queued in the kernel or in the device over
-- time, from the slices of `block_io` tracks) and the parts of a
-- userland dev_t: `linux_device_major_id(dev)` (12 bits) and
-- `linux_device_minor_id(dev)` (20 bits).

INCLUDE PERFETTO MODULE intervals.overlap;

CREATE PERFETTO VIEW linux_active_block_io_operations_by_device(
  ts LONG,
  ops_in_queue_or_device LONG,
  dev LONG
) AS
WITH io AS (
  SELECT
    slice.ts,
    slice.dur,
    extract_arg(track.dimension_arg_set_id, 'block_device') AS dev
  FROM slice
  JOIN track ON track.id = slice.track_id AND track.type = 'block_io'
)
SELECT ts, value AS ops_in_queue_or_device, group_name AS dev
FROM intervals_overlap_count_by_group!(io, ts, dur, dev);

CREATE PERFETTO FUNCTION linux_device_major_id(dev LONG)
RETURNS LONG AS
SELECT ($dev >> 8) & 4095;

CREATE PERFETTO FUNCTION linux_device_minor_id(dev LONG)
RETURNS LONG AS
SELECT ($dev & 255) | (($dev >> 20) << 8);

-- android.gpu.work_period, written for zerotrace: the tracks of the GPU
-- work periods Android's `power/gpu_work_period` ftrace event reports,
-- one per application uid and GPU, with those dimensions as columns.

-- One row per GPU work period track.
CREATE PERFETTO TABLE android_gpu_work_period_track(
  -- The track (joins `track.id`).
  id LONG,
  -- The machine.
  machine_id JOINID(machine.id),
  -- The uid of the application whose work periods the track holds.
  uid LONG,
  -- The GPU (joins `gpu.ugpu`).
  ugpu LONG,
  -- The GPU's number on its machine.
  gpu_id LONG
)
AS
SELECT
  t.id,
  t.machine_id,
  extract_arg(t.dimension_arg_set_id, 'uid') AS uid,
  extract_arg(t.dimension_arg_set_id, 'ugpu') AS ugpu,
  extract_arg(t.dimension_arg_set_id, 'gpu') AS gpu_id
FROM track AS t
WHERE t.type = 'android_gpu_work_period';

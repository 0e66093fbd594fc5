-- Written for zerotrace: the `pixel.camera` module.
-- `pixel_camera_frames`: the Pixel camera graph's execution slices,
-- named `cam<id>_<node>:<port group> (frame <n>)`, with those parts split
-- out; `pixel_camera_memory_span`: the memory of the camera's processes
-- over time (the GoogleCamera app's RSS, the camera HAL's, cameraserver's,
-- the global DMA heap's, and their sum), one span per change of any of
-- them.

INCLUDE PERFETTO MODULE counters.global_tracks;
INCLUDE PERFETTO MODULE linux.memory.process;
INCLUDE PERFETTO MODULE slices.with_context;

CREATE PERFETTO TABLE pixel_camera_frames(
  id ID(slice.id),
  ts TIMESTAMP,
  dur DURATION,
  track_id JOINID(track.id),
  utid JOINID(thread.id),
  thread_name STRING,
  node STRING,
  port_group STRING,
  frame_number LONG,
  cam_id LONG
) AS
SELECT
  id,
  ts,
  dur,
  track_id,
  utid,
  thread_name,
  -- Text between `camX_` (five characters for a one-digit id) and ':'.
  substr(str_split(name, ':', 0), 6) AS node,
  str_split(str_split(name, ':', 1), ' (', 0) AS port_group,
  cast_int!(str_split(str_split(name, '(frame', 1), ')', 0)) AS frame_number,
  cast_int!(str_split(str_split(name, 'cam', 1), '_', 0)) AS cam_id
FROM thread_slice
WHERE name GLOB 'cam*_*:* (frame *)' AND dur != -1;

-- The processes whose RSS (file + anon + shmem) the spans below follow:
-- the GoogleCamera app (of several, the one with the highest peak), the
-- camera HAL (`camera.provider`) and cameraserver (of several, the one
-- started last).
CREATE PERFETTO TABLE _pixel_camera_processes AS
WITH peaks AS (
  SELECT upid, MAX(COALESCE(file_rss, 0) + COALESCE(anon_rss, 0) + COALESCE(shmem_rss, 0)) AS peak
  FROM memory_rss_and_swap_per_process
  GROUP BY upid
)
SELECT
  (
    SELECT p.upid FROM process AS p JOIN peaks USING (upid)
    WHERE p.name GLOB '*GoogleCamera' OR p.name GLOB '*googlecamera.fishfood'
      OR p.name GLOB '*GoogleCameraEng'
    ORDER BY peaks.peak DESC LIMIT 1
  ) AS gca,
  (
    SELECT upid FROM process WHERE name GLOB '*camera.provider*'
    ORDER BY start_ts DESC LIMIT 1
  ) AS hal,
  (
    SELECT upid FROM process WHERE name GLOB '*cameraserver'
    ORDER BY start_ts DESC LIMIT 1
  ) AS cameraserver;

CREATE PERFETTO VIEW _rss_gca AS
SELECT ts, dur, COALESCE(file_rss, 0) + COALESCE(anon_rss, 0) + COALESCE(shmem_rss, 0) AS gca_rss_val
FROM memory_rss_and_swap_per_process
WHERE upid = (SELECT gca FROM _pixel_camera_processes);

CREATE PERFETTO VIEW _rss_camera_hal AS
SELECT ts, dur, COALESCE(file_rss, 0) + COALESCE(anon_rss, 0) + COALESCE(shmem_rss, 0) AS hal_rss_val
FROM memory_rss_and_swap_per_process
WHERE upid = (SELECT hal FROM _pixel_camera_processes);

CREATE PERFETTO VIEW _rss_cameraserver AS
SELECT
  ts,
  dur,
  COALESCE(file_rss, 0) + COALESCE(anon_rss, 0) + COALESCE(shmem_rss, 0) AS cameraserver_rss_val
FROM memory_rss_and_swap_per_process
WHERE upid = (SELECT cameraserver FROM _pixel_camera_processes);

-- The global DMA heap counter as spans.
CREATE PERFETTO VIEW _dma_span AS
SELECT
  c.ts,
  LEAD(c.ts, 1, trace_end()) OVER (PARTITION BY c.track_id ORDER BY c.ts) - c.ts AS dur,
  c.value AS dma_val
FROM counter AS c
JOIN counter_track AS t ON t.id = c.track_id
WHERE t.name = 'mem.dma_heap' AND _counter_track_is_only_name_dimension(t.id);

CREATE VIRTUAL TABLE _rss_gca_hal USING SPAN_OUTER_JOIN(_rss_gca, _rss_camera_hal);

CREATE VIRTUAL TABLE _rss_all_camera
USING SPAN_OUTER_JOIN(_rss_gca_hal, _rss_cameraserver);

CREATE VIRTUAL TABLE _rss_and_dma_all_camera_join
USING SPAN_OUTER_JOIN(_dma_span, _rss_all_camera);

CREATE PERFETTO TABLE pixel_camera_memory_span(
  ts TIMESTAMP,
  dur DURATION,
  gca_rss LONG,
  hal_rss LONG,
  cameraserver_rss LONG,
  dma LONG,
  rss_and_dma LONG
) AS
SELECT
  ts,
  dur,
  cast_int!(COALESCE(gca_rss_val, 0)) AS gca_rss,
  cast_int!(COALESCE(hal_rss_val, 0)) AS hal_rss,
  cast_int!(COALESCE(cameraserver_rss_val, 0)) AS cameraserver_rss,
  cast_int!(COALESCE(dma_val, 0)) AS dma,
  cast_int!(
    COALESCE(gca_rss_val, 0) + COALESCE(hal_rss_val, 0)
    + COALESCE(cameraserver_rss_val, 0) + COALESCE(dma_val, 0)
  ) AS rss_and_dma
FROM _rss_and_dma_all_camera_join;

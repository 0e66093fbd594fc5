-- Written for zerotrace: the `chrome.scroll_jank.scroll_jank_cause_utils`
-- module, which finds the threads a scroll jank cause points at.
-- `chrome_select_scroll_jank_cause_thread(event_latency_id, process_type,
-- thread_name)`: the threads named `thread_name` that ran slices during
-- the EventLatency slice, in the processes of `process_type`: `Renderer`
-- is the EventLatency's own process; `Browser` the process named
-- `Browser` or matching `*.chrome`; `GPU` the process named `Gpu` or
-- matching `*.chrome*:privileged_process*`, or SurfaceFlinger when the
-- thread is `surfaceflinger`.

INCLUDE PERFETTO MODULE slices.with_context;

-- SurfaceFlinger's process.
CREATE PERFETTO FUNCTION _get_process_id_for_surfaceflinger()
RETURNS LONG
AS
SELECT upid FROM process WHERE name GLOB '*surfaceflinger*' LIMIT 1;

-- The process kinds: their name and the GLOB of their Android names.
CREATE PERFETTO TABLE _process_type_to_name(
  process_type STRING,
  process_name STRING,
  process_glob STRING
)
AS
SELECT 'Browser' AS process_type, 'Browser' AS process_name, '*.chrome' AS process_glob
UNION ALL
SELECT 'GPU', 'Gpu', '*.chrome*:privileged_process*';

-- The name of the processes of kind `type`.
CREATE PERFETTO FUNCTION _get_process_name(type STRING)
RETURNS STRING
AS
SELECT process_name FROM _process_type_to_name WHERE process_type = $type LIMIT 1;

-- The GLOB of the Android names of the processes of kind `type`.
CREATE PERFETTO FUNCTION _get_process_glob(type STRING)
RETURNS STRING
AS
SELECT process_glob FROM _process_type_to_name WHERE process_type = $type LIMIT 1;

-- The processes of kind `type`.
CREATE PERFETTO FUNCTION _get_process_id_by_type(type STRING)
RETURNS TABLE(upid JOINID(process.id))
AS
SELECT upid
FROM process
WHERE name = _get_process_name($type) OR name GLOB _get_process_glob($type);

-- The process of process slice `id`.
CREATE PERFETTO FUNCTION _get_renderer_upid_for_event_latency(id LONG)
RETURNS LONG
AS
SELECT upid FROM process_slice WHERE id = $id;

-- The processes of kind `type` for a thread named `thread` and an
-- EventLatency slice.
CREATE PERFETTO FUNCTION _processes_by_type_for_event_latency(
  type STRING,
  thread STRING,
  event_latency_id LONG
)
RETURNS TABLE(upid JOINID(process.id))
AS
SELECT _get_renderer_upid_for_event_latency($event_latency_id) AS upid
WHERE $type = 'Renderer'
UNION ALL
SELECT _get_process_id_for_surfaceflinger()
WHERE $type = 'GPU' AND $thread = 'surfaceflinger'
UNION ALL
SELECT upid
FROM _get_process_id_by_type($type)
WHERE $type = 'Browser' OR ($type = 'GPU' AND $thread != 'surfaceflinger');

CREATE PERFETTO FUNCTION chrome_select_scroll_jank_cause_thread(
  event_latency_id LONG,
  process_type STRING,
  thread_name STRING
)
RETURNS TABLE(utid JOINID(thread.id))
AS
WITH
  latency AS (SELECT ts, ts + dur AS ts_end FROM slice WHERE id = $event_latency_id LIMIT 1),
  candidates AS (
    SELECT utid
    FROM thread
    WHERE name = $thread_name
      AND upid IN (
        SELECT upid
        FROM _processes_by_type_for_event_latency($process_type, $thread_name, $event_latency_id)
      )
  )
SELECT DISTINCT s.utid
FROM thread_slice AS s
WHERE s.utid IN (SELECT utid FROM candidates)
  AND s.ts >= (SELECT ts FROM latency)
  AND s.ts <= (SELECT ts_end FROM latency);

-- Written for zerotrace: the `android.job_scheduler` module.
-- `android_job_scheduler_events`: the jobs system_server ran, from the
-- slices on its `JobScheduler` process track whose name, shaped
-- `…<uid>package/service#job_id…`, says whose job it was: its job id, uid,
-- package and service, and its slice (a slice still open at the end runs
-- to the end of the trace). Atrace's `ss` category writes them.

CREATE PERFETTO TABLE android_job_scheduler_events(
  job_id LONG,
  uid LONG,
  package_name STRING,
  job_service_name STRING,
  track_id JOINID(track.id),
  id LONG,
  ts TIMESTAMP,
  dur DURATION
)
AS
SELECT
  cast_int!(str_split(s.name, '#', 1)) AS job_id,
  cast_int!(str_split(str_split(s.name, '<', 1), '>', 0)) AS uid,
  str_split(str_split(s.name, '>', 1), '/', 0) AS package_name,
  str_split(str_split(s.name, '/', 1), '#', 0) AS job_service_name,
  s.track_id,
  s.id,
  s.ts,
  iif(s.dur = -1, trace_end() - s.ts, s.dur) AS dur
FROM slice AS s
JOIN process_track AS t ON t.id = s.track_id
JOIN process AS p ON p.upid = t.upid
WHERE p.name = 'system_server'
  AND t.name = 'JobScheduler'
  AND s.name GLOB '*job*';

-- slices.with_context, written for zerotrace: the slices of thread and
-- process tracks, each row carrying the thread's and process's identity
-- beside the slice's own columns.
--   thread_slice             slices on thread tracks, with thread and process
--   process_slice            slices on process tracks, with the process
--   thread_or_process_slice  both, thread columns NULL for process slices

-- Each thread track with its thread's and process's identity, as a table
-- (its `id`, the track's, sorted): a slice finds its context by one
-- search, and the context's slices are one run of slice.track_id.
-- Joined as views instead, SQLite scanned the tracks once per slice (or
-- the slices once per track) when a module joined thread slices to
-- millions of rows by slice id.
CREATE PERFETTO TABLE _zt_thread_track_context AS
SELECT
  tt.id,
  tt.name AS track_name,
  th.name AS thread_name,
  th.utid,
  th.tid,
  th.is_main_thread,
  pr.name AS process_name,
  th.upid,
  pr.pid
FROM thread_track AS tt
JOIN thread AS th ON th.utid = tt.utid
LEFT JOIN process AS pr ON pr.upid = th.upid
ORDER BY tt.id;

-- Every slice on a thread track: its thread, and that thread's process
-- (NULL when the thread has none). The tracks join their slices, as
-- upstream's view is written, so that SQLite's order of the two follows
-- the estimates: on a trace of few slices they come track by track.
CREATE PERFETTO VIEW thread_slice(
  id ID(slice.id),
  ts TIMESTAMP,
  dur DURATION,
  category STRING,
  name STRING,
  track_id JOINID(track.id),
  track_name STRING,
  thread_name STRING,
  utid JOINID(thread.id),
  tid LONG,
  is_main_thread BOOL,
  process_name STRING,
  upid JOINID(process.id),
  pid LONG,
  depth LONG,
  parent_id JOINID(slice.id),
  arg_set_id ARGSETID,
  thread_ts TIMESTAMP,
  thread_dur LONG
) AS
SELECT
  s.id, s.ts, s.dur, s.category, s.name, s.track_id,
  tt.track_name, tt.thread_name, tt.utid, tt.tid, tt.is_main_thread,
  tt.process_name, tt.upid, tt.pid,
  s.depth, s.parent_id, s.arg_set_id, s.thread_ts, s.thread_dur
FROM _zt_thread_track_context AS tt
JOIN slice AS s ON s.track_id = tt.id;

-- Every slice on a process track, with its process.
CREATE PERFETTO VIEW process_slice(
  id ID(slice.id),
  ts TIMESTAMP,
  dur DURATION,
  category STRING,
  name STRING,
  track_id JOINID(track.id),
  track_name STRING,
  process_name STRING,
  upid JOINID(process.id),
  pid LONG,
  depth LONG,
  parent_id JOINID(slice.id),
  arg_set_id ARGSETID,
  thread_ts TIMESTAMP,
  thread_dur LONG
) AS
SELECT
  s.id, s.ts, s.dur, s.category, s.name, s.track_id,
  pt.name AS track_name,
  pr.name AS process_name, pr.upid, pr.pid,
  s.depth, s.parent_id, s.arg_set_id, s.thread_ts, s.thread_dur
FROM process_track AS pt
JOIN process AS pr ON pr.upid = pt.upid
JOIN slice AS s ON s.track_id = pt.id;

-- The slices of thread tracks, then those of process tracks; a process
-- slice's thread columns are NULL.
CREATE PERFETTO VIEW thread_or_process_slice(
  id JOINID(slice.id),
  ts TIMESTAMP,
  dur DURATION,
  category STRING,
  name STRING,
  track_id JOINID(track.id),
  track_name STRING,
  thread_name STRING,
  utid JOINID(thread.id),
  tid LONG,
  process_name STRING,
  upid JOINID(process.id),
  pid LONG,
  depth LONG,
  parent_id JOINID(slice.id),
  arg_set_id ARGSETID
) AS
SELECT
  id, ts, dur, category, name, track_id, track_name,
  thread_name, utid, tid, process_name, upid, pid,
  depth, parent_id, arg_set_id
FROM thread_slice
UNION ALL
SELECT
  id, ts, dur, category, name, track_id, track_name,
  NULL, NULL, NULL, process_name, upid, pid,
  depth, parent_id, arg_set_id
FROM process_slice;

-- Written for zerotrace: the `std.thread.with_context` module. It
-- provides `_thread_with_process`, every thread with its process (when
-- known) in one table, so that other modules attach thread and process
-- names with a plain join on utid.

CREATE PERFETTO TABLE _thread_with_process AS
SELECT
  thread.utid,
  thread.tid,
  thread.name AS thread_name,
  thread.is_main_thread,
  process.upid,
  process.pid,
  process.name AS process_name
FROM thread
LEFT JOIN process USING (upid);

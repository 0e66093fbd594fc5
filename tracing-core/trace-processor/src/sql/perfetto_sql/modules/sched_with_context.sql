-- Written for zerotrace: the `sched.with_context` module. It provides
-- `sched_with_thread_process`: every `sched` slice (a period a thread
-- ran on a CPU) with its thread's and process's ids and names.

INCLUDE PERFETTO MODULE std.thread.with_context;

CREATE PERFETTO VIEW sched_with_thread_process(
  id ID(sched.id),
  ts TIMESTAMP,
  dur DURATION,
  utid JOINID(thread.id),
  upid JOINID(process.id),
  thread_name STRING,
  process_name STRING,
  cpu LONG,
  end_state STRING,
  priority LONG
) AS
SELECT
  sched.id,
  sched.ts,
  sched.dur,
  sched.utid,
  tp.upid,
  tp.thread_name,
  tp.process_name,
  sched.cpu,
  sched.end_state,
  sched.priority
FROM _thread_with_process AS tp
JOIN sched USING (utid);

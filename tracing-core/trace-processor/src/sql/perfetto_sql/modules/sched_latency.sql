-- Written for zerotrace: the `sched.latency` module. It provides
-- `sched_latency_for_running_interval`: for each time a thread ran (a
-- `Running` thread state and its `sched` slice), the runnable state just
-- before it and that state's duration, the scheduling latency.

INCLUDE PERFETTO MODULE sched.runnable;

CREATE PERFETTO VIEW _sched_with_thread_state_join AS
SELECT thread_state.id AS thread_state_id, sched.id AS sched_id
FROM sched
JOIN thread_state USING (utid, ts, dur);

CREATE PERFETTO TABLE sched_latency_for_running_interval(
  thread_state_id JOINID(thread_state.id),
  sched_id JOINID(sched.id),
  utid JOINID(thread.id),
  runnable_latency_id JOINID(thread_state.id),
  latency_dur LONG
) AS
SELECT
  running.id AS thread_state_id,
  joined.sched_id,
  runnable.utid,
  running.prev_runnable_id AS runnable_latency_id,
  runnable.dur AS latency_dur
FROM sched_previous_runnable_on_thread AS running
JOIN thread_state AS runnable ON runnable.id = running.prev_runnable_id
JOIN _sched_with_thread_state_join AS joined ON joined.thread_state_id = running.id;

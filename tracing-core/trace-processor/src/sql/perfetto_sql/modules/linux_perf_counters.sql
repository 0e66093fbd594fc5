-- linux.perf.counters, written for zerotrace: the counter values each
-- perf sample carries (one row per sample and counter), and a lookup of
-- one sample's counter by the counter's name.
--   linux_perf_counter_for_sample(sample_id, counter_name) -> DOUBLE
--   linux_perf_sample_with_counters  (sample_id, ts, utid, cpu, cpu_mode,
--     callsite_id, unwind_error, perf_session_id, counter_id, track_id,
--     counter_value)

-- Every perf sample with each of its counters' values.
CREATE PERFETTO VIEW linux_perf_sample_with_counters(
  sample_id JOINID(perf_sample.id),
  ts TIMESTAMP,
  utid JOINID(thread.id),
  cpu LONG,
  cpu_mode STRING,
  callsite_id JOINID(stack_profile_callsite.id),
  unwind_error STRING,
  perf_session_id JOINID(perf_session.id),
  counter_id JOINID(counter.id),
  track_id JOINID(track.id),
  counter_value DOUBLE
) AS
SELECT
  sample.id AS sample_id,
  sample.ts,
  task.utid,
  cpu.cpu,
  coalesce(exec.cpu_mode, 'unknown') AS cpu_mode,
  sample.callsite_id,
  sample.unwind_error,
  sample.session_id AS perf_session_id,
  sets.counter_id,
  counter.track_id,
  counter.value AS counter_value
FROM __intrinsic_profiler_sample AS sample
JOIN __intrinsic_profiler_counter_set AS sets USING (counter_set_id)
JOIN counter ON counter.id = sets.counter_id
LEFT JOIN __intrinsic_profiler_task_context AS task ON task.id = sample.task_context_id
LEFT JOIN __intrinsic_profiler_execution_context AS exec
  ON exec.id = sample.execution_context_id
LEFT JOIN cpu ON cpu.id = exec.ucpu
WHERE sample.source = 'linux.perf';

-- The value of counter `counter_name` in perf sample `sample_id`, NULL
-- when the sample has no such counter.
CREATE PERFETTO FUNCTION linux_perf_counter_for_sample(
  sample_id LONG,
  counter_name STRING
)
RETURNS DOUBLE AS
SELECT s.counter_value
FROM linux_perf_sample_with_counters AS s
JOIN track AS t ON t.id = s.track_id
WHERE s.sample_id = $sample_id AND t.name = $counter_name
LIMIT 1;

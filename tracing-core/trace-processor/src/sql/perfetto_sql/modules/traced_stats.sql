-- traced.stats, written for zerotrace: how long the tracing service took
-- to finish a clone of its buffers (a snapshot of a running trace), per
-- buffer, from the service's own timestamps in `stats`: when the clone
-- started (`traced_clone_started_timestamp_ns`) or the trigger that asked
-- for it fired (`traced_clone_trigger_timestamp_ns`), and when each
-- buffer's copy was flushed (`traced_buf_clone_done_timestamp_ns`,
-- indexed by buffer). Machines and traces are kept apart.
--   traced_clone_flush_latency          clone start -> buffer done
--   traced_trigger_clone_flush_latency  trigger -> buffer done

-- `start_stat`'s time (when recorded and not zero) to each buffer's
-- clone-done time, within each machine and trace.
CREATE PERFETTO FUNCTION _traced_clone_latency(start_stat STRING)
RETURNS TABLE(
  buffer_id LONG,
  duration_ns LONG,
  machine_id JOINID(machine.id),
  trace_id LONG
)
AS
SELECT
  done.idx AS buffer_id,
  done.value - start.value AS duration_ns,
  done.machine_id,
  done.trace_id
FROM stats AS done
JOIN stats AS start
  ON start.name = $start_stat
  AND start.machine_id IS done.machine_id
  AND start.trace_id IS done.trace_id
WHERE done.name = 'traced_buf_clone_done_timestamp_ns'
  AND start.value != 0
ORDER BY done.machine_id, done.trace_id, done.idx;

-- Per buffer, from the start of the clone to the end of its flush.
CREATE PERFETTO TABLE traced_clone_flush_latency(
  buffer_id LONG,
  duration_ns LONG,
  machine_id JOINID(machine.id),
  trace_id LONG
) AS
SELECT * FROM _traced_clone_latency('traced_clone_started_timestamp_ns');

-- Per buffer, from the trigger that caused the clone to the end of its
-- flush.
CREATE PERFETTO TABLE traced_trigger_clone_flush_latency(
  buffer_id LONG,
  duration_ns LONG,
  machine_id JOINID(machine.id),
  trace_id LONG
) AS
SELECT * FROM _traced_clone_latency('traced_clone_trigger_timestamp_ns');

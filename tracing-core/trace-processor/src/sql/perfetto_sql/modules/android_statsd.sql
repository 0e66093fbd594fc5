-- Written for zerotrace: the `android.statsd` module.
-- `android_statsd_atoms`: the slices of the `Statsd Atoms` track, one
-- instant per statsd atom the trace carries, with the slice table's
-- columns. `_android_statsd_perfetto_triggers`: the `perfetto_trigger`
-- atoms among them, with their trigger's name.

CREATE PERFETTO VIEW android_statsd_atoms(
  id LONG,
  ts TIMESTAMP,
  dur DURATION,
  arg_set_id ARGSETID,
  thread_instruction_count LONG,
  thread_instruction_delta LONG,
  track_id JOINID(track.id),
  category STRING,
  name STRING,
  depth LONG,
  parent_id LONG,
  thread_ts TIMESTAMP,
  thread_dur LONG
)
AS
SELECT
  s.id,
  s.ts,
  s.dur,
  s.arg_set_id,
  s.thread_instruction_count,
  s.thread_instruction_delta,
  s.track_id,
  s.category,
  s.name,
  s.depth,
  s.parent_id,
  s.thread_ts,
  s.thread_dur
FROM slice AS s
JOIN track AS t ON t.id = s.track_id
WHERE t.name = 'Statsd Atoms';

CREATE PERFETTO TABLE _android_statsd_perfetto_triggers(
  ts TIMESTAMP,
  trigger_name STRING
)
AS
SELECT ts, extract_arg(arg_set_id, 'perfetto_trigger.trigger_name') AS trigger_name
FROM android_statsd_atoms
WHERE name = 'perfetto_trigger';

-- Written for zerotrace: the `sched.states` module. It provides
-- `sched_state_to_human_readable_string(short_name)`, the name of a
-- scheduling state as `thread_state.state` writes it (Linux's letters,
-- `R+` for a preempted runnable thread, `Running`, and the Windows ETW
-- states, which are already names); an unknown state is returned as it
-- is. And `sched_state_io_to_human_readable_string(state, io_wait)`, the
-- same name followed by ` (IO)` or ` (non-IO)` when io_wait is known.

CREATE PERFETTO FUNCTION sched_state_to_human_readable_string(short_name STRING)
RETURNS STRING AS
SELECT CASE $short_name
  WHEN 'R' THEN 'Runnable'
  WHEN 'R+' THEN 'Runnable (Preempted)'
  WHEN 'S' THEN 'Sleeping'
  WHEN 'D' THEN 'Uninterruptible Sleep'
  WHEN 'T' THEN 'Stopped'
  WHEN 't' THEN 'Traced'
  WHEN 'X' THEN 'Exit (Dead)'
  WHEN 'Z' THEN 'Exit (Zombie)'
  WHEN 'x' THEN 'Task Dead'
  WHEN 'I' THEN 'Idle'
  WHEN 'K' THEN 'Wakekill'
  WHEN 'W' THEN 'Waking'
  WHEN 'P' THEN 'Parked'
  WHEN 'N' THEN 'No Load'
  ELSE $short_name
END;

CREATE PERFETTO FUNCTION sched_state_io_to_human_readable_string(
  sched_state STRING,
  io_wait BOOL
)
RETURNS STRING AS
SELECT sched_state_to_human_readable_string($sched_state)
  || CASE $io_wait WHEN 1 THEN ' (IO)' WHEN 0 THEN ' (non-IO)' ELSE '' END;

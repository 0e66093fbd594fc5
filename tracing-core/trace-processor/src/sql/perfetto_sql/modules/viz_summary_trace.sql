-- viz.summary.trace, written for zerotrace: facts about the machines of
-- the trace that the UI's summaries need.
--   _is_linux_machine(machine_id)  1 when that machine runs Linux

-- 1 when the trace's metadata gives the machine's system name as Linux,
-- else 0.
CREATE PERFETTO FUNCTION _is_linux_machine(machine_id JOINID(machine.id))
RETURNS LONG AS
SELECT count(*) = 1
FROM metadata
WHERE name = 'system_name'
  AND str_value = 'Linux'
  AND machine_id = $machine_id;

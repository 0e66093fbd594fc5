-- Written for zerotrace: the `pkvm.hypervisor` module.
-- `pkvm_hypervisor_events`: each stretch a CPU spent in the pKVM
-- hypervisor (the `hyp` slices of category `pkvm_hyp` on the CPUs'
-- hypervisor tracks), with the reason it entered when an event said one.

CREATE PERFETTO VIEW pkvm_hypervisor_events(
  slice_id JOINID(slice.id),
  cpu JOINID(cpu.cpu),
  ts TIMESTAMP,
  dur DURATION,
  reason STRING
) AS
SELECT
  s.id AS slice_id,
  t.cpu,
  s.ts,
  s.dur,
  extract_arg(s.arg_set_id, 'hyp_enter_reason') AS reason
FROM slice AS s
JOIN cpu_track AS t ON t.id = s.track_id
WHERE s.category = 'pkvm_hyp';

-- Written for zerotrace: the `linux.irqs` module. Interrupts as slices:
-- the hard IRQs (on `cpu_irq` tracks, each with the IRQ it preempted as
-- its parent), the soft IRQs (`cpu_softirq` tracks), both together, and
-- the IRQ numbers with the names the trace listed for them.

-- Hard IRQs.
CREATE PERFETTO VIEW linux_hard_irqs(
  ts TIMESTAMP,
  dur DURATION,
  name STRING,
  id JOINID(slice.id),
  parent_id JOINID(slice.id)
) AS
SELECT s.ts, s.dur, s.name, s.id, s.parent_id
FROM slice AS s
JOIN track AS t ON t.id = s.track_id
WHERE t.type = 'cpu_irq';

-- Soft IRQs.
CREATE PERFETTO VIEW linux_soft_irqs(
  ts TIMESTAMP,
  dur DURATION,
  name STRING,
  id JOINID(slice.id)
) AS
SELECT s.ts, s.dur, s.name, s.id
FROM slice AS s
JOIN track AS t ON t.id = s.track_id
WHERE t.type = 'cpu_softirq';

-- Hard and soft IRQs (a soft IRQ has no parent here).
CREATE PERFETTO VIEW linux_irqs(
  ts TIMESTAMP,
  dur DURATION,
  name STRING,
  id JOINID(slice.id),
  parent_id JOINID(slice.id),
  is_soft_irq BOOL
) AS
SELECT ts, dur, name, id, parent_id, 0 AS is_soft_irq
FROM linux_hard_irqs
UNION ALL
SELECT ts, dur, name, id, NULL AS parent_id, 1 AS is_soft_irq
FROM linux_soft_irqs;

-- The IRQ numbers and their names.
CREATE PERFETTO VIEW linux_interrupt_mapping(
  id ID,
  irq_id LONG,
  name STRING,
  machine_id JOINID(machine.id)
) AS
SELECT id, irq_id, name, machine_id
FROM _linux_interrupt_mapping;

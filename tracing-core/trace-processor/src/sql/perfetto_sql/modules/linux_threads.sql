-- Written for zerotrace: the `linux.threads` module. It provides
-- `linux_kernel_threads`: the threads of the kernel's processes, which
-- are kthreadd (pid 2) and the processes whose parent it is, with their
-- process's and thread's ids and names.

CREATE PERFETTO TABLE linux_kernel_threads(
  upid JOINID(process.id),
  utid JOINID(thread.id),
  pid LONG,
  tid LONG,
  process_name STRING,
  thread_name STRING,
  machine_id JOINID(machine.id)
) AS
WITH
  kthreadd AS (
    SELECT upid, pid, name, machine_id FROM process WHERE pid = 2
  ),
  kernel_processes AS (
    SELECT child.upid, child.pid, child.name, child.machine_id
    FROM process AS child
    JOIN kthreadd ON child.parent_upid = kthreadd.upid
    UNION
    SELECT upid, pid, name, machine_id FROM kthreadd
  )
SELECT
  p.upid,
  t.utid,
  p.pid,
  t.tid,
  p.name AS process_name,
  t.name AS thread_name,
  p.machine_id
FROM kernel_processes AS p
JOIN thread AS t USING (upid);

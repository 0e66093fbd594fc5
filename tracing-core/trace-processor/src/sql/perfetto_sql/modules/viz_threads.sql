-- viz.threads, written for zerotrace: which threads are kernel threads,
-- for the UI (Linux machines only; on other machines none is).
--   _kernel_threads             (utid) of every kernel thread
--   _threads_with_kernel_flag   the thread table with is_kernel_thread

INCLUDE PERFETTO MODULE linux.threads;
INCLUDE PERFETTO MODULE viz.summary.trace;

-- The kernel threads of the machines the metadata says run Linux.
CREATE PERFETTO TABLE _kernel_threads AS
SELECT k.utid
FROM linux_kernel_threads AS k
WHERE _is_linux_machine(k.machine_id) = 1;

-- Every thread, and whether it is a kernel thread.
CREATE PERFETTO TABLE _threads_with_kernel_flag AS
SELECT
  t.id,
  t.utid,
  t.upid,
  t.tid,
  t.name,
  t.is_main_thread,
  t.is_idle,
  t.machine_id,
  t.utid IN (SELECT utid FROM _kernel_threads) AS is_kernel_thread
FROM thread AS t;

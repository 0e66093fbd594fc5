-- android.render_thread, written for zerotrace: each process's render
-- thread, the thread named `RenderThread`.
--   _render_thread_per_process  (upid, render_thread_utid)

-- One row per thread named `RenderThread`: its process and the thread.
CREATE PERFETTO TABLE _render_thread_per_process(
  upid JOINID(process.id),
  render_thread_utid JOINID(thread.id)
) AS
SELECT upid, utid AS render_thread_utid
FROM thread
WHERE name = 'RenderThread';

-- Written for zerotrace: the `sched.runnable` module. It provides
-- `sched_previous_runnable_on_thread`: for each `Running` thread state
-- (with a known end), the thread's latest earlier runnable state (`R` or
-- `R+`, by id) and the latest earlier runnable-or-running state that has
-- a waker and was not woken from an interrupt (NULL when none).

CREATE PERFETTO TABLE sched_previous_runnable_on_thread(
  id JOINID(thread_state.id),
  prev_runnable_id JOINID(thread_state.id),
  prev_wakeup_runnable_id JOINID(thread_state.id)
) AS
WITH
  running_or_runnable AS (
    SELECT
      id,
      state,
      max(CASE WHEN state != 'Running' THEN id END) OVER by_thread AS prev_runnable_id,
      max(
        CASE
          WHEN waker_utid IS NOT NULL AND (irq_context IS NULL OR irq_context != 1)
          THEN id
        END
      ) OVER by_thread AS prev_wakeup_runnable_id
    FROM thread_state
    WHERE state IN ('R', 'R+', 'Running') AND dur != -1
    WINDOW by_thread AS (PARTITION BY utid ORDER BY id)
  )
SELECT id, prev_runnable_id, prev_wakeup_runnable_id
FROM running_or_runnable
WHERE state = 'Running'
ORDER BY id;

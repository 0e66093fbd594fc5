-- Written for zerotrace: the `android.frame_blocking_calls.blocking_calls_aggregation`
-- module, blocking calls per frame of a jank CUJ.
-- `_extended_frame_boundary`: each distinct frame of each CUJ
-- (`android.cujs.base`), stretched from its start to whichever comes first
-- of the CUJ's next frame's start and the first doFrame on its UI thread
-- from its end up to that next start (its own end when neither exists),
-- so a blocking call running past the frame's end still counts in it.
-- `_blocking_calls_frame_cuj`: each critical blocking call
-- (`android.critical_blocking_calls`) on a frame's UI thread, or on its
-- render thread when that is another thread, that starts or ends inside the
-- stretched frame, cut to it.

INCLUDE PERFETTO MODULE android.critical_blocking_calls;
INCLUDE PERFETTO MODULE android.cujs.base;

CREATE PERFETTO TABLE _extended_frame_boundary AS
WITH
  framed AS (
    SELECT
      f.*,
      lead(f.frame_ts) OVER (PARTITION BY f.cuj_id ORDER BY f.frame_id) AS next_frame_start
    FROM _android_distinct_frames_in_cuj AS f
  ),
  stretched AS (
    SELECT
      f.frame_id,
      f.frame_ts AS ts,
      f.ui_thread_utid,
      f.render_thread_utid,
      f.cuj_id,
      f.cuj_name,
      f.layer_id,
      (
        SELECT min(d.ts)
        FROM _android_jank_cuj_do_frames AS d
        WHERE d.utid = f.ui_thread_utid AND d.ts >= f.ts_end AND d.ts <= f.next_frame_start
      ) AS next_do_frame,
      f.next_frame_start,
      f.ts_end
    FROM framed AS f
  )
SELECT
  ts,
  ui_thread_utid,
  render_thread_utid,
  frame_id,
  layer_id,
  cuj_id,
  cuj_name,
  coalesce(min(next_do_frame, next_frame_start), next_do_frame, next_frame_start, ts_end)
    AS ts_end
FROM stretched
ORDER BY frame_id;

-- A blocking call's part inside a stretched frame, from both threads.
CREATE PERFETTO MACRO _zt_blocking_call_in_frame(thread_cond Expr)
RETURNS TableOrSubquery
AS (
  SELECT
    min(bc.dur, fr.ts_end - bc.ts, bc.ts_end - fr.ts) AS dur,
    max(fr.ts, bc.ts) AS ts,
    bc.upid,
    bc.name,
    bc.process_name,
    bc.utid,
    fr.frame_id,
    fr.layer_id,
    fr.cuj_id,
    fr.cuj_name
  FROM _android_critical_blocking_calls AS bc
  JOIN _extended_frame_boundary AS fr ON $thread_cond
  WHERE (bc.ts >= fr.ts AND bc.ts <= fr.ts_end)
    OR (bc.ts_end >= fr.ts AND bc.ts_end <= fr.ts_end)
);

CREATE PERFETTO TABLE _blocking_calls_frame_cuj AS
SELECT * FROM _zt_blocking_call_in_frame!(bc.utid = fr.ui_thread_utid)
UNION ALL
SELECT *
FROM _zt_blocking_call_in_frame!(
  bc.utid = fr.render_thread_utid AND bc.utid != fr.ui_thread_utid
);

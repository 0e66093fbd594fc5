-- Written for zerotrace: the `android.wakeups` module.
-- `android_wakeups`: the device's wakeups and failed suspends, from the
-- instants SystemSuspend writes on the `wakeup_reason` track (`<ms id>
-- <kernel's wakeup string>`), joined by that id to the later
-- `wakeup_attribution` instants (`<ms id> <attribution>`), and to the
-- `suspend_backoff` instant just before (`<good|bad> <new|continue>
-- <short|failed> <count> <next backoff ms>`). A wakeup holds the device
-- awake for its backoff when the suspend was bad, else until the next
-- wakeup or suspend, at most 5 s. Its kind is `normal`, or for an aborted
-- suspend `abort_pending`, `abort_last_active` or `abort_other`; a wakeup
-- string naming several causes (':'-separated IRQs, or space-separated
-- pending sources; up to four) gives one row per cause, a normal cause
-- without its leading IRQ number.

INCLUDE PERFETTO MODULE android.suspend;

CREATE PERFETTO TABLE android_wakeups(
  ts TIMESTAMP,
  dur DURATION,
  raw_wakeup STRING,
  on_device_attribution STRING,
  type STRING,
  item STRING,
  suspend_quality STRING,
  backoff_state STRING,
  backoff_reason STRING,
  backoff_count LONG,
  backoff_millis LONG
)
AS
WITH
  marks AS (
    SELECT
      i.ts,
      t.name AS kind,
      i.name,
      substr(i.name, 0, instr(i.name, ' ')) AS stamp,
      substr(i.name, instr(i.name, ' ') + 1) AS text
    FROM track AS t
    JOIN instant AS i ON i.track_id = t.id
    WHERE t.name IN ('wakeup_reason', 'wakeup_attribution', 'suspend_backoff')
  ),
  reasons_and_backoffs AS (
    SELECT r.ts, r.text AS raw_wakeup, a.text AS on_device_attribution, NULL AS raw_backoff
    FROM marks AS r
    LEFT JOIN marks AS a ON a.kind = 'wakeup_attribution' AND a.stamp = r.stamp
    WHERE r.kind = 'wakeup_reason'
    UNION ALL
    SELECT ts, NULL, NULL, name FROM marks WHERE kind = 'suspend_backoff'
  ),
  with_backoff AS (
    SELECT ts, raw_wakeup, on_device_attribution, lag(raw_backoff) OVER (ORDER BY ts) AS backoff
    FROM reasons_and_backoffs
  ),
  wakeups_and_suspends AS (
    SELECT
      ts,
      raw_wakeup,
      on_device_attribution,
      str_split(backoff, ' ', 0) AS suspend_quality,
      str_split(backoff, ' ', 1) AS backoff_state,
      str_split(backoff, ' ', 2) AS backoff_reason,
      CAST(str_split(backoff, ' ', 3) AS INTEGER) AS backoff_count,
      CAST(str_split(backoff, ' ', 4) AS INTEGER) AS backoff_millis,
      0 AS is_suspend
    FROM with_backoff
    WHERE raw_wakeup IS NOT NULL
    UNION ALL
    SELECT ts, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 1
    FROM android_suspend_state
    WHERE power_state = 'suspended'
  ),
  timed AS (
    SELECT
      *,
      CASE suspend_quality
        WHEN 'good' THEN min(lead(ts, 1, ts + 5e9) OVER (ORDER BY ts) - ts, 5e9)
        WHEN 'bad' THEN backoff_millis * 1000000
        ELSE 0
      END AS dur
    FROM wakeups_and_suspends
  ),
  kinds AS (
    SELECT
      *,
      CASE
        WHEN raw_wakeup GLOB 'Abort: Pending Wakeup Sources: *' THEN 'abort_pending'
        WHEN raw_wakeup GLOB 'Abort: Last active Wakeup Source: *' THEN 'abort_last_active'
        WHEN raw_wakeup GLOB 'Abort: *' THEN 'abort_other'
        ELSE 'normal'
      END AS type
    FROM timed
    WHERE NOT is_suspend
  ),
  split AS (
    SELECT
      *,
      CASE type
        WHEN 'abort_pending' THEN substr(raw_wakeup, 32)
        WHEN 'abort_last_active' THEN substr(raw_wakeup, 35)
        WHEN 'abort_other' THEN substr(raw_wakeup, 8)
        ELSE raw_wakeup
      END AS causes,
      CASE type
        WHEN 'abort_pending' THEN ' '
        WHEN 'normal' THEN ':'
        ELSE 'no delimiter needed'
      END AS delimiter
    FROM kinds
  ),
  items AS (
    SELECT s.*, n.k, str_split(s.causes, s.delimiter, n.k) AS item
    FROM split AS s
    JOIN (SELECT 0 AS k UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3) AS n
    WHERE n.k = 0 OR str_split(s.causes, s.delimiter, n.k) IS NOT NULL
  )
SELECT
  ts,
  cast_int!(dur) AS dur,
  raw_wakeup,
  on_device_attribution,
  type,
  iif(type = 'normal', coalesce(str_split(item, ' ', 1), item), item) AS item,
  suspend_quality,
  backoff_state,
  coalesce(backoff_reason, 'none') AS backoff_reason,
  backoff_count,
  backoff_millis
FROM items
ORDER BY k, ts;

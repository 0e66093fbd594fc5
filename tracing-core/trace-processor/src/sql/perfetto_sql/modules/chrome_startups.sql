-- Written for zerotrace: the `chrome.startups` module.
-- `chrome_startups`: Chrome's startups on Android, one per activity id
-- and browser process seen in a `Startup.ActivityStart` thread slice or a
-- `Startup.TimeToFirstVisibleContent2` process slice (their typed
-- `startup.activity_id`): it begins where the time to first visible
-- content begins (else at the activity start) and first shows content
-- where that slice ends; its launch cause is the `Startup.LaunchCause`
-- slice's of the same activity. Numbered from 1 by start time.

INCLUDE PERFETTO MODULE slices.with_context;

-- Each startup's beginning and first visible content.
CREATE PERFETTO VIEW _startup_start_events AS
WITH
  starts AS (
    SELECT extract_arg(arg_set_id, 'startup.activity_id') AS activity_id, ts, upid AS browser_upid
    FROM thread_slice
    WHERE name = 'Startup.ActivityStart'
  ),
  visible AS (
    SELECT
      extract_arg(arg_set_id, 'startup.activity_id') AS activity_id,
      ts,
      dur,
      upid AS browser_upid
    FROM process_slice
    WHERE name = 'Startup.TimeToFirstVisibleContent2'
  ),
  activities AS (
    SELECT activity_id, browser_upid FROM starts
    UNION
    SELECT activity_id, browser_upid FROM visible
  )
SELECT
  a.activity_id,
  'Startup' AS name,
  coalesce(v.ts, s.ts) AS startup_begin_ts,
  v.ts + v.dur AS first_visible_content_ts,
  a.browser_upid
FROM activities AS a
LEFT JOIN visible AS v USING (activity_id, browser_upid)
LEFT JOIN starts AS s USING (activity_id, browser_upid);

-- Each activity's launch cause.
CREATE PERFETTO VIEW _launch_causes AS
SELECT
  extract_arg(arg_set_id, 'startup.activity_id') AS activity_id,
  extract_arg(arg_set_id, 'startup.launch_cause') AS launch_cause,
  upid AS browser_upid
FROM thread_slice
WHERE name = 'Startup.LaunchCause';

CREATE PERFETTO TABLE chrome_startups(
  id LONG,
  activity_id LONG,
  name STRING,
  startup_begin_ts TIMESTAMP,
  first_visible_content_ts TIMESTAMP,
  launch_cause STRING,
  browser_upid LONG
)
AS
SELECT
  row_number() OVER (ORDER BY e.startup_begin_ts) AS id,
  e.activity_id,
  e.name,
  e.startup_begin_ts,
  e.first_visible_content_ts,
  c.launch_cause,
  e.browser_upid
FROM _startup_start_events AS e
LEFT JOIN _launch_causes AS c USING (activity_id, browser_upid);

-- Written for zerotrace: the `chrome.page_loads` module.
-- `chrome_page_loads`: Chrome's page loads, one per
-- `PageLoadMetrics.NavigationToFirstContentfulPaint` process slice (from
-- the navigation's start to its first contentful paint), joined by
-- navigation id (the typed `page_load.navigation_id`) and browser process
-- to the other `PageLoadMetrics.*` slices: largest contentful paint (its
-- end), DOMContentLoaded and load events and the page's user timing marks
-- (their starts). Numbered from 1 by navigation start.

INCLUDE PERFETTO MODULE slices.with_context;

-- The first contentful paint slices with their navigation and URL.
CREATE PERFETTO VIEW _fcp_metrics AS
SELECT
  ts,
  dur,
  extract_arg(arg_set_id, 'page_load.navigation_id') AS navigation_id,
  extract_arg(arg_set_id, 'page_load.url') AS url,
  upid AS browser_upid
FROM process_slice
WHERE name = 'PageLoadMetrics.NavigationToFirstContentfulPaint';

-- The process slices named `event_name` with their navigation.
CREATE PERFETTO FUNCTION _page_load_metrics(event_name STRING)
RETURNS TABLE(
  ts TIMESTAMP,
  dur DURATION,
  navigation_id LONG,
  browser_upid LONG
)
AS
SELECT
  ts,
  dur,
  extract_arg(arg_set_id, 'page_load.navigation_id') AS navigation_id,
  upid AS browser_upid
FROM process_slice
WHERE name = $event_name;

CREATE PERFETTO TABLE chrome_page_loads(
  id LONG,
  navigation_id LONG,
  navigation_start_ts TIMESTAMP,
  fcp LONG,
  fcp_ts TIMESTAMP,
  lcp LONG,
  lcp_ts TIMESTAMP,
  dom_content_loaded_event_ts TIMESTAMP,
  load_event_ts TIMESTAMP,
  mark_fully_loaded_ts TIMESTAMP,
  mark_fully_visible_ts TIMESTAMP,
  mark_interactive_ts TIMESTAMP,
  url STRING,
  browser_upid LONG
)
AS
SELECT
  row_number() OVER (ORDER BY f.ts) AS id,
  f.navigation_id,
  f.ts AS navigation_start_ts,
  f.dur AS fcp,
  f.ts + f.dur AS fcp_ts,
  l.dur AS lcp,
  l.ts + l.dur AS lcp_ts,
  dcl.ts AS dom_content_loaded_event_ts,
  onload.ts AS load_event_ts,
  loaded.ts AS mark_fully_loaded_ts,
  visible.ts AS mark_fully_visible_ts,
  interactive.ts AS mark_interactive_ts,
  f.url,
  f.browser_upid
FROM _fcp_metrics AS f
LEFT JOIN _page_load_metrics('PageLoadMetrics.NavigationToLargestContentfulPaint') AS l
  USING (navigation_id, browser_upid)
LEFT JOIN _page_load_metrics('PageLoadMetrics.NavigationToDOMContentLoadedEventFired') AS dcl
  USING (navigation_id, browser_upid)
LEFT JOIN _page_load_metrics('PageLoadMetrics.NavigationToMainFrameOnLoad') AS onload
  USING (navigation_id, browser_upid)
LEFT JOIN _page_load_metrics('PageLoadMetrics.UserTimingMarkFullyLoaded') AS loaded
  USING (navigation_id, browser_upid)
LEFT JOIN _page_load_metrics('PageLoadMetrics.UserTimingMarkFullyVisible') AS visible
  USING (navigation_id, browser_upid)
LEFT JOIN _page_load_metrics('PageLoadMetrics.UserTimingMarkInteractive') AS interactive
  USING (navigation_id, browser_upid);

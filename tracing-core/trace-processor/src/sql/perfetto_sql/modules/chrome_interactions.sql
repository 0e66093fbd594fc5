-- Written for zerotrace: the `chrome.interactions` module.
-- `chrome_interactions`: Chrome's user-facing interactions in one table:
-- page loads (`PageLoad`, to the largest contentful paint, else the first),
-- startups (to the first visible content, 0 when none) and web content
-- interactions (`InteractionToFirstPaint`), each with its id in its own
-- table (`scoped_id`) and that table's name (`type`).

INCLUDE PERFETTO MODULE chrome.page_loads;
INCLUDE PERFETTO MODULE chrome.startups;
INCLUDE PERFETTO MODULE chrome.web_content_interactions;

CREATE PERFETTO TABLE chrome_interactions(
  scoped_id LONG,
  type STRING,
  name STRING,
  ts TIMESTAMP,
  dur DURATION
)
AS
SELECT
  id AS scoped_id,
  'chrome_page_loads' AS type,
  'PageLoad' AS name,
  navigation_start_ts AS ts,
  coalesce(lcp, fcp) AS dur
FROM chrome_page_loads
UNION ALL
SELECT
  id,
  'chrome_startups',
  name,
  startup_begin_ts,
  iif(first_visible_content_ts IS NULL, 0, first_visible_content_ts - startup_begin_ts)
FROM chrome_startups
UNION ALL
SELECT id, 'chrome_web_content_interactions', 'InteractionToFirstPaint', ts, dur
FROM chrome_web_content_interactions;

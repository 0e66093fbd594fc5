-- Written for zerotrace: the `chrome.histograms` module.
-- `chrome_histograms`: Chrome's UMA histogram samples, the
-- `HistogramSample` events of category
-- `disabled-by-default-histogram_samples` (their typed
-- `chrome_histogram_sample` field gives the histogram's name and the
-- sample), with the thread and process of a thread track's sample, or the
-- process alone (thread columns NULL) of a process track's.

CREATE PERFETTO TABLE chrome_histograms(
  name STRING,
  value LONG,
  ts TIMESTAMP,
  thread_name STRING,
  utid LONG,
  tid LONG,
  process_name STRING,
  upid LONG,
  pid LONG
)
AS
WITH samples AS (
  SELECT
    extract_arg(arg_set_id, 'chrome_histogram_sample.name') AS name,
    extract_arg(arg_set_id, 'chrome_histogram_sample.sample') AS value,
    ts,
    track_id
  FROM slice
  WHERE name = 'HistogramSample' AND category = 'disabled-by-default-histogram_samples'
)
SELECT
  h.name,
  h.value,
  h.ts,
  t.name AS thread_name,
  t.utid,
  t.tid,
  p.name AS process_name,
  p.upid,
  p.pid
FROM samples AS h
JOIN thread_track AS tt ON tt.id = h.track_id
JOIN thread AS t ON t.utid = tt.utid
JOIN process AS p ON p.upid = t.upid
UNION ALL
SELECT
  h.name,
  h.value,
  h.ts,
  NULL,
  NULL,
  NULL,
  p.name,
  p.upid,
  p.pid
FROM samples AS h
JOIN process_track AS pt ON pt.id = h.track_id
JOIN process AS p ON p.upid = pt.upid;

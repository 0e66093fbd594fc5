-- Written for zerotrace: the `chrome.speedometer` module, Speedometer's
-- results whichever version ran: the version is the one of 2.1 and 3 with
-- more measures in the trace (`_chrome_speedometer_version()`, '2.1' on a
-- tie), and `chrome_speedometer_measure`, `chrome_speedometer_iteration`,
-- `chrome_speedometer_score()` and `chrome_speedometer_renderer_main_utid()`
-- are that version's.

INCLUDE PERFETTO MODULE chrome.speedometer_2_1;
INCLUDE PERFETTO MODULE chrome.speedometer_3;

CREATE PERFETTO FUNCTION _chrome_speedometer_version()
RETURNS STRING
AS
SELECT version
FROM (
  SELECT '2.1' AS version, (SELECT count(*) FROM chrome_speedometer_2_1_measure) AS n, 0 AS k
  UNION ALL
  SELECT '3', (SELECT count(*) FROM chrome_speedometer_3_measure), 1
)
ORDER BY n DESC, k
LIMIT 1;

CREATE PERFETTO TABLE chrome_speedometer_measure(
  ts TIMESTAMP,
  dur DURATION,
  name STRING,
  iteration LONG,
  suite_name STRING,
  test_name STRING,
  measure_type STRING
)
AS
SELECT ts, dur, name, iteration, suite_name, test_name, measure_type
FROM chrome_speedometer_2_1_measure
WHERE _chrome_speedometer_version() = '2.1'
UNION ALL
SELECT ts, dur, name, iteration, suite_name, test_name, measure_type
FROM chrome_speedometer_3_measure
WHERE _chrome_speedometer_version() = '3';

CREATE PERFETTO TABLE chrome_speedometer_iteration(
  ts TIMESTAMP,
  dur DURATION,
  name STRING,
  iteration LONG,
  geomean DOUBLE,
  score DOUBLE
)
AS
SELECT ts, dur, name, iteration, geomean, score
FROM chrome_speedometer_2_1_iteration
WHERE _chrome_speedometer_version() = '2.1'
UNION ALL
SELECT ts, dur, name, iteration, geomean, score
FROM chrome_speedometer_3_iteration
WHERE _chrome_speedometer_version() = '3';

CREATE PERFETTO FUNCTION chrome_speedometer_score()
RETURNS DOUBLE
AS
SELECT iif(
  _chrome_speedometer_version() = '3',
  chrome_speedometer_3_score(),
  chrome_speedometer_2_1_score()
);

CREATE PERFETTO FUNCTION chrome_speedometer_renderer_main_utid()
RETURNS LONG
AS
SELECT iif(
  _chrome_speedometer_version() = '3',
  chrome_speedometer_3_renderer_main_utid(),
  chrome_speedometer_2_1_renderer_main_utid()
);

-- Written for zerotrace: the `chrome.speedometer_2_1` module, Speedometer
-- 2.1's results from the `blink.user_timing` marks it leaves in a trace.
-- Each test of each suite leaves three marks per iteration,
-- `<suite>.<test>-start`, `-sync-end` and `-async-end` (the suites and
-- tests are Speedometer 2.1's own; `_chrome_speedometer_2_1_mark_name`).
-- `chrome_speedometer_2_1_measure`: per iteration (the n-th mark of a name
-- is iteration n) and test whose three marks are all there, its sync
-- (start to sync end) and async (sync end to async end) measures.
-- `chrome_speedometer_2_1_iteration`: each iteration's span, the geometric
-- mean over suites of the suite's total measured time (ms) and its score,
-- 20000 over that mean. `chrome_speedometer_2_1_score()` is the mean score;
-- `chrome_speedometer_2_1_renderer_main_utid()` the thread the marks are on.

-- Every mark name: its suite, test and kind.
CREATE PERFETTO VIEW _chrome_speedometer_2_1_mark_name(
  name STRING,
  suite_name STRING,
  test_name STRING,
  mark_type STRING
)
AS
WITH
  suites(suite_name, tests) AS (
    VALUES
    ('Angular2-TypeScript-TodoMVC', 'Adding100Items,CompletingAllItems,DeletingItems'),
    ('AngularJS-TodoMVC', 'Adding100Items,CompletingAllItems,DeletingAllItems'),
    ('BackboneJS-TodoMVC', 'Adding100Items,CompletingAllItems,DeletingAllItems'),
    ('Elm-TodoMVC', 'Adding100Items,CompletingAllItems,DeletingItems'),
    ('EmberJS-Debug-TodoMVC', 'Adding100Items,CompletingAllItems,DeletingItems'),
    ('EmberJS-TodoMVC', 'Adding100Items,CompletingAllItems,DeletingItems'),
    ('Flight-TodoMVC', 'Adding100Items,CompletingAllItems,DeletingItems'),
    ('Inferno-TodoMVC', 'Adding100Items,CompletingAllItems,DeletingItems'),
    ('Preact-TodoMVC', 'Adding100Items,CompletingAllItems,DeletingItems'),
    ('React-Redux-TodoMVC', 'Adding100Items,CompletingAllItems,DeletingItems'),
    ('React-TodoMVC', 'Adding100Items,CompletingAllItems,DeletingAllItems'),
    ('Vanilla-ES2015-Babel-Webpack-TodoMVC', 'Adding100Items,CompletingAllItems,DeletingItems'),
    ('Vanilla-ES2015-TodoMVC', 'Adding100Items,CompletingAllItems,DeletingItems'),
    ('VanillaJS-TodoMVC', 'Adding100Items,CompletingAllItems,DeletingAllItems'),
    ('VueJS-TodoMVC', 'Adding100Items,CompletingAllItems,DeletingAllItems'),
    ('jQuery-TodoMVC', 'Adding100Items,CompletingAllItems,DeletingAllItems')
  ),
  positions(n) AS (VALUES (0), (1), (2)),
  tests AS (
    SELECT s.suite_name, str_split(s.tests, ',', k.n) AS test_name
    FROM suites AS s
    JOIN positions AS k
    WHERE str_split(s.tests, ',', k.n) IS NOT NULL
  ),
  kinds(mark_type) AS (VALUES ('start'), ('sync-end'), ('async-end'))
SELECT
  t.suite_name || '.' || t.test_name || '-' || k.mark_type AS name,
  t.suite_name,
  t.test_name,
  k.mark_type
FROM tests AS t, kinds AS k;

CREATE PERFETTO TABLE chrome_speedometer_2_1_measure(
  ts TIMESTAMP,
  dur DURATION,
  name STRING,
  iteration LONG,
  suite_name STRING,
  test_name STRING,
  measure_type STRING
)
AS
WITH
  marks AS (
    SELECT
      s.ts,
      rank() OVER (PARTITION BY s.name ORDER BY s.ts) AS iteration,
      m.suite_name,
      m.test_name
    FROM slice AS s
    JOIN _chrome_speedometer_2_1_mark_name AS m USING (name)
    WHERE s.category = 'blink.user_timing'
  ),
  ordered AS (
    SELECT
      iteration,
      suite_name,
      test_name,
      ts AS async_end_ts,
      lag(ts, 1) OVER w AS sync_end_ts,
      lag(ts, 2) OVER w AS start_ts,
      count() OVER w AS nth
    FROM marks
    WINDOW w AS (PARTITION BY iteration, suite_name, test_name ORDER BY ts)
  ),
  complete AS (SELECT * FROM ordered WHERE nth = 3),
  measures AS (
    SELECT
      sync_end_ts AS ts,
      async_end_ts - sync_end_ts AS dur,
      iteration,
      suite_name,
      test_name,
      'async' AS measure_type
    FROM complete
    UNION ALL
    SELECT start_ts, sync_end_ts - start_ts, iteration, suite_name, test_name, 'sync'
    FROM complete
  )
SELECT
  ts,
  dur,
  suite_name || '.' || test_name || '-' || measure_type AS name,
  iteration,
  suite_name,
  test_name,
  measure_type
FROM measures;

CREATE PERFETTO TABLE chrome_speedometer_2_1_iteration(
  ts TIMESTAMP,
  dur DURATION,
  name STRING,
  iteration LONG,
  geomean DOUBLE,
  score DOUBLE
)
AS
WITH
  suites AS (
    SELECT
      iteration,
      sum(dur / 1e6) AS suite_total,
      min(ts) AS first_ts,
      max(ts + dur) AS last_end
    FROM chrome_speedometer_2_1_measure
    GROUP BY suite_name, iteration
  ),
  iterations AS (
    SELECT
      iteration,
      min(first_ts) AS ts,
      max(last_end) - min(first_ts) AS dur,
      exp(avg(ln(suite_total))) AS geomean
    FROM suites
    GROUP BY iteration
  )
SELECT
  ts,
  dur,
  'iteration-' || iteration AS name,
  iteration,
  geomean,
  1000 / geomean * 60 / 3 AS score
FROM iterations;

CREATE PERFETTO FUNCTION chrome_speedometer_2_1_score()
RETURNS DOUBLE
AS
SELECT avg(score) FROM chrome_speedometer_2_1_iteration;

CREATE PERFETTO FUNCTION chrome_speedometer_2_1_renderer_main_utid()
RETURNS LONG
AS
SELECT utid
FROM thread_track
WHERE id IN (
  SELECT s.track_id
  FROM slice AS s
  JOIN _chrome_speedometer_2_1_mark_name AS m USING (name)
  WHERE s.category = 'blink.user_timing'
);

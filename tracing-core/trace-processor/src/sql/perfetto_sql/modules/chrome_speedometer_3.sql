-- Written for zerotrace: the `chrome.speedometer_3` module, Speedometer 3's
-- results from the `blink.user_timing` slices it leaves in a trace: an
-- `iteration-<n>` slice per iteration and, inside them, a
-- `<suite>.<test>-sync` and `-async` slice per test (the suites and tests
-- are Speedometer 3's own; `_chrome_speedometer_3_measure_name`).
-- `chrome_speedometer_3_measure`: those measures with the iteration they
-- start in. `chrome_speedometer_3_iteration`: each iteration with the
-- geometric mean over suites of the suite's total measured time (ms) and
-- its score, 1000 over that mean. `chrome_speedometer_3_score()` is the
-- mean score; `chrome_speedometer_3_renderer_main_utid()` the thread of the
-- `<measure>-start` marks.

-- Every measure name: its suite, test and kind.
CREATE PERFETTO VIEW _chrome_speedometer_3_measure_name(
  name STRING,
  suite_name STRING,
  test_name STRING,
  measure_type STRING
)
AS
WITH
  suites(suite_name, tests) AS (
    VALUES
    ('TodoMVC-JavaScript-ES5', 'Adding100Items,CompletingAllItems,DeletingAllItems'),
    ('TodoMVC-JavaScript-ES6-Webpack-Complex-DOM', 'Adding100Items,CompletingAllItems,DeletingAllItems'),
    ('TodoMVC-WebComponents', 'Adding100Items,CompletingAllItems,DeletingAllItems'),
    ('TodoMVC-React-Complex-DOM', 'Adding100Items,CompletingAllItems,DeletingAllItems'),
    ('TodoMVC-React-Redux', 'Adding100Items,CompletingAllItems,DeletingAllItems'),
    ('TodoMVC-Backbone', 'Adding100Items,CompletingAllItems,DeletingAllItems'),
    ('TodoMVC-Angular-Complex-DOM', 'Adding100Items,CompletingAllItems,DeletingAllItems'),
    ('TodoMVC-Vue', 'Adding100Items,CompletingAllItems,DeletingAllItems'),
    ('TodoMVC-jQuery', 'Adding100Items,CompletingAllItems,DeletingAllItems'),
    ('TodoMVC-Preact-Complex-DOM', 'Adding100Items,CompletingAllItems,DeletingAllItems'),
    ('TodoMVC-Svelte-Complex-DOM', 'Adding100Items,CompletingAllItems,DeletingAllItems'),
    ('TodoMVC-Lit-Complex-DOM', 'Adding100Items,CompletingAllItems,DeletingAllItems'),
    ('NewsSite-Next', 'NavigateToUS,NavigateToWorld,NavigateToPolitics'),
    ('NewsSite-Nuxt', 'NavigateToUS,NavigateToWorld,NavigateToPolitics'),
    ('Editor-CodeMirror', 'Long,Highlight'),
    ('Editor-TipTap', 'Long,Highlight'),
    ('Charts-observable-plot', 'Stacked by 6,Stacked by 20,Dotted'),
    ('Charts-chartjs', 'Draw scatter,Show tooltip,Draw opaque scatter'),
    ('React-Stockcharts-SVG', 'Render,PanTheChart,ZoomTheChart'),
    ('Perf-Dashboard', 'Render,SelectingPoints,SelectingRange')
  ),
  positions(n) AS (VALUES (0), (1), (2)),
  tests AS (
    SELECT s.suite_name, str_split(s.tests, ',', k.n) AS test_name
    FROM suites AS s
    JOIN positions AS k
    WHERE str_split(s.tests, ',', k.n) IS NOT NULL
  ),
  kinds(measure_type) AS (VALUES ('sync'), ('async'))
SELECT
  t.suite_name || '.' || t.test_name || '-' || k.measure_type AS name,
  t.suite_name,
  t.test_name,
  k.measure_type
FROM tests AS t, kinds AS k;

-- The iteration slices, `iteration-<n>` for a whole number n.
CREATE PERFETTO VIEW _chrome_speedometer_3_iteration_slice AS
SELECT *
FROM (
  SELECT *, cast_int!(substr(name, 11)) AS iteration, substr(name, 11) AS iteration_str
  FROM slice
  WHERE category = 'blink.user_timing' AND name GLOB 'iteration-*'
)
WHERE iteration_str = iteration;

CREATE PERFETTO TABLE chrome_speedometer_3_measure(
  ts TIMESTAMP,
  dur DURATION,
  name STRING,
  iteration LONG,
  suite_name STRING,
  test_name STRING,
  measure_type STRING
)
AS
SELECT
  s.ts,
  s.dur,
  s.name,
  i.iteration,
  m.suite_name,
  m.test_name,
  m.measure_type
FROM slice AS s
JOIN _chrome_speedometer_3_measure_name AS m USING (name)
JOIN _chrome_speedometer_3_iteration_slice AS i ON s.ts >= i.ts AND s.ts < i.ts + i.dur
WHERE s.category = 'blink.user_timing'
ORDER BY s.ts;

CREATE PERFETTO TABLE chrome_speedometer_3_iteration(
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
    SELECT iteration, sum(dur / 1e6) AS suite_total
    FROM chrome_speedometer_3_measure
    GROUP BY iteration, suite_name
  ),
  iterations AS (
    SELECT iteration, exp(avg(ln(suite_total))) AS geomean
    FROM suites
    GROUP BY iteration
  )
SELECT s.ts, s.dur, s.name, i.iteration, i.geomean, 1000.0 / i.geomean AS score
FROM iterations AS i
JOIN _chrome_speedometer_3_iteration_slice AS s USING (iteration);

CREATE PERFETTO FUNCTION chrome_speedometer_3_score()
RETURNS DOUBLE
AS
SELECT avg(score) FROM chrome_speedometer_3_iteration;

CREATE PERFETTO FUNCTION chrome_speedometer_3_renderer_main_utid()
RETURNS LONG
AS
SELECT utid
FROM thread_track
WHERE id IN (
  SELECT s.track_id
  FROM slice AS s
  JOIN _chrome_speedometer_3_measure_name AS m ON s.name = m.name || '-start'
  WHERE s.category = 'blink.user_timing'
);

-- Written for zerotrace: the v1 metric file chrome/chrome_processes.sql.
-- Which processes of a trace are Chrome's, of which type, and their
-- threads with a name that is the same in Chrome's own traces and in
-- Android system traces.

-- Every process carrying a `chrome.process_type` arg (Chrome's track
-- event producers always write one; its value may be missing, which
-- reads as the empty type).
CREATE OR REPLACE PERFETTO VIEW all_chrome_processes AS
SELECT p.upid, COALESCE(a.string_value, '') AS process_type
FROM process AS p
JOIN args AS a
  ON a.arg_set_id = p.arg_set_id AND a.key = 'chrome.process_type';

-- The threads of those processes.
CREATE OR REPLACE PERFETTO VIEW all_chrome_threads AS
SELECT t.utid, t.upid, t.name
FROM thread AS t
WHERE t.upid IN (SELECT upid FROM all_chrome_processes);

-- Android's sandboxed and privileged Chrome processes say what they are
-- only through their main thread's name, `Cr<Type>Main`: the type is that
-- name without its `Cr` prefix and `Main` suffix.
CREATE OR REPLACE PERFETTO VIEW chrome_subprocess_types AS
SELECT DISTINCT c.upid, substr(t.name, 3, length(t.name) - 6) AS sandbox_type
FROM all_chrome_processes AS c
JOIN all_chrome_threads AS t USING (upid)
WHERE c.process_type IN ('Sandboxed', 'Privileged')
  AND t.name GLOB 'Cr*Main'
ORDER BY c.upid;

-- The Chrome processes: every column of `process`, and `process_type`
-- (the sandbox type where the main thread's name gives one).
CREATE OR REPLACE PERFETTO VIEW chrome_process AS
SELECT
  process.*,
  COALESCE(
    (SELECT s.sandbox_type FROM chrome_subprocess_types AS s WHERE s.upid = c.upid),
    c.process_type
  ) AS process_type
FROM all_chrome_processes AS c
JOIN process USING (upid)
ORDER BY upid;

-- The threads of the Chrome processes: every column of `thread`, and
-- `canonical_name` (`CrProcessMain` for any `Cr*Main` thread, `Unknown`
-- for a thread without a name, else its name).
CREATE OR REPLACE PERFETTO VIEW chrome_thread AS
SELECT
  thread.*,
  IIF(
    thread.name GLOB 'Cr*Main',
    'CrProcessMain',
    COALESCE(thread.name, 'Unknown')
  ) AS canonical_name
FROM thread
WHERE thread.upid IN (SELECT upid FROM chrome_process)
ORDER BY utid;

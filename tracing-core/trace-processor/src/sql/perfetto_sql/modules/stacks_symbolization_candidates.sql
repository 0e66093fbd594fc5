-- stacks.symbolization_candidates, written for zerotrace: the (module,
-- rel_pc) pairs of the frames without symbols that the CPU profiling
-- samples and the heap profiles of each process reach, for a symbolizer;
-- and, for Chrome's libraries, the Breakpad module id of the build id.
--   _to_breakpad_module(mapping, build_id) -> STRING
--   _stacks_symbolization_candidates  (upid, module, build_id, rel_pc,
--     breakpad_module_id)

INCLUDE PERFETTO MODULE stacks.cpu_profiling;

-- The Breakpad module id of a Chrome-like library's build id (its first
-- three GUID fields byte-swapped, then the rest, then '0'); NULL for any
-- other library or a build id shorter than 20 bytes.
CREATE PERFETTO FUNCTION _to_breakpad_module(mapping STRING, build_id STRING)
RETURNS STRING AS
SELECT iif(
  length($build_id) >= 40 AND (
    $mapping GLOB '*libmonochrome_64.so'
    OR $mapping GLOB '*libmonochrome.so'
    OR $mapping GLOB '*libchrome.so'
    OR $mapping GLOB '*libwebviewchromium.so'
    OR $mapping GLOB '*libchromium_android_linker.so'
  ),
  substr($build_id, 7, 2) || substr($build_id, 5, 2) || substr($build_id, 3, 2)
    || substr($build_id, 1, 2)
    || substr($build_id, 11, 2) || substr($build_id, 9, 2)
    || substr($build_id, 15, 2) || substr($build_id, 13, 2)
    || substr($build_id, 17, 16) || '0',
  NULL
);

-- Each process's unsymbolized frames in modules with a build id.
CREATE PERFETTO TABLE _stacks_symbolization_candidates(
  upid JOINID(process.id),
  module STRING,
  build_id STRING,
  rel_pc LONG,
  breakpad_module_id STRING
) AS
WITH RECURSIVE
  sampled(upid, callsite_id) AS (
    SELECT t.upid, s.callsite_id
    FROM cpu_profiling_samples AS s
    JOIN thread AS t USING (utid)
    UNION
    SELECT upid, callsite_id FROM heap_profile_allocation
  ),
  reached(upid, callsite_id) AS (
    SELECT upid, callsite_id FROM sampled
    UNION
    SELECT r.upid, c.parent_id
    FROM reached AS r
    JOIN stack_profile_callsite AS c ON c.id = r.callsite_id
    WHERE c.parent_id IS NOT NULL
  ),
  frames AS (
    SELECT DISTINCT r.upid, f.mapping AS mapping_id, f.rel_pc
    FROM reached AS r
    JOIN stack_profile_callsite AS c ON c.id = r.callsite_id
    JOIN stack_profile_frame AS f ON f.id = c.frame_id
    WHERE f.symbol_set_id IS NULL
  )
SELECT
  f.upid,
  m.name AS module,
  m.build_id,
  f.rel_pc,
  _to_breakpad_module(m.name, m.build_id) AS breakpad_module_id
FROM frames AS f
JOIN stack_profile_mapping AS m ON m.id = f.mapping_id
WHERE m.build_id != '';

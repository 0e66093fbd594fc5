-- callstacks.stack_profile, written for zerotrace: the callsites of
-- stack_profile_callsite unfolded into a forest of functions (a frame
-- whose symbol set holds inlined functions becomes one node per function,
-- the outermost under the caller's innermost), and the macros that pick
-- the part of it some samples reach and count them.
--   _callstack_spc_forest  (id, parent_id, name, mapping_id, source_file,
--     line_number, column_number, inlined, callsite_id,
--     is_leaf_function_in_callsite_frame)
--   _callstacks_for_stack_profile_samples!(samples with callsite_id)
--   _callstacks_for_callsites!(samples with callsite_id): ... self_count
--   _callstacks_for_callsites_weighted!(samples with callsite_id, value):
--     ... self_value
--   _callstacks_self_to_cumulative!(id, parent_id, self_count):
--     (id, cumulative_count)

INCLUDE PERFETTO MODULE v8.jit;

-- Each frame's innermost symbol (the smallest id of its symbol set).
CREATE PERFETTO TABLE _callstack_frame_leaf_symbol AS
SELECT f.id AS frame_id, min(s.id) AS symbol_id
FROM stack_profile_frame AS f
LEFT JOIN stack_profile_symbol AS s USING (symbol_set_id)
GROUP BY f.id;

-- One row per (callsite, function): the symbol, and where its parent is
-- (the next symbol of the same frame, or the caller's innermost one).
CREATE PERFETTO TABLE _callstack_spc_raw_forest AS
WITH symbols AS (
  SELECT
    id,
    symbol_set_id,
    lead(id) OVER (PARTITION BY symbol_set_id ORDER BY id) AS outer_id
  FROM stack_profile_symbol
),
nodes AS (
  SELECT
    c.id AS callsite_id,
    c.parent_id AS caller_id,
    c.frame_id,
    s.id AS symbol_id,
    s.outer_id,
    leaf.symbol_id AS leaf_symbol_id
  FROM stack_profile_callsite AS c
  JOIN stack_profile_frame AS f ON f.id = c.frame_id
  JOIN _callstack_frame_leaf_symbol AS leaf ON leaf.frame_id = f.id
  LEFT JOIN symbols AS s ON s.symbol_set_id = f.symbol_set_id
)
SELECT
  row_number() OVER (ORDER BY n.callsite_id, n.symbol_id) - 1 AS node_id,
  n.callsite_id,
  n.symbol_id,
  n.frame_id,
  iif(n.outer_id IS NULL, n.caller_id, n.callsite_id) AS parent_callsite_id,
  iif(n.outer_id IS NULL, caller_leaf.symbol_id, n.outer_id) AS parent_symbol_id,
  n.symbol_id IS n.leaf_symbol_id AS is_leaf
FROM nodes AS n
LEFT JOIN stack_profile_callsite AS caller ON caller.id = n.caller_id
LEFT JOIN _callstack_frame_leaf_symbol AS caller_leaf
  ON caller_leaf.frame_id = caller.frame_id
ORDER BY node_id;

CREATE PERFETTO INDEX _callstack_spc_raw_forest_key
ON _callstack_spc_raw_forest(callsite_id, symbol_id);

-- The forest: a frame in generated code is named after that code (a
-- JavaScript function with its place and tier, a WebAssembly function, a
-- regular expression, a V8 builtin, else the JIT's own name); any other
-- function's name is its symbol's, else the frame's deobfuscated or own
-- name (demangled when mangled), else 'unknown'.
CREATE PERFETTO TABLE _callstack_spc_forest AS
SELECT
  r.node_id AS id,
  p.node_id AS parent_id,
  coalesce(
    'JS: ' || iif(jsf.name = '', '(anonymous)', jsf.name) || ':' || jsf.line
      || ':' || jsf.col || ' [' || lower(jsc.tier) || ']',
    'WASM: ' || wc.function_name || ' [' || lower(wc.tier) || ']',
    'REGEXP: ' || rc.pattern,
    'V8: ' || v8c.function_name,
    'JIT: ' || jc.function_name,
    demangle(coalesce(s.name, f.deobfuscated_name, nullif(f.name, ''))),
    coalesce(s.name, f.deobfuscated_name, nullif(f.name, ''), 'unknown')
  ) AS name,
  f.mapping AS mapping_id,
  s.source_file,
  coalesce(jsf.line, s.line_number) AS line_number,
  coalesce(jsf.col, 0) AS column_number,
  s.inlined,
  r.callsite_id,
  r.is_leaf AS is_leaf_function_in_callsite_frame
FROM _callstack_spc_raw_forest AS r
JOIN stack_profile_frame AS f ON f.id = r.frame_id
LEFT JOIN __intrinsic_jit_frame AS jf ON jf.frame_id = r.frame_id
LEFT JOIN __intrinsic_jit_code AS jc ON jc.id = jf.jit_code_id
LEFT JOIN _v8_js_code AS jsc ON jsc.jit_code_id = jf.jit_code_id
LEFT JOIN v8_js_function AS jsf ON jsf.v8_js_function_id = jsc.v8_js_function_id
LEFT JOIN _v8_internal_code AS v8c ON v8c.jit_code_id = jf.jit_code_id
LEFT JOIN _v8_wasm_code AS wc ON wc.jit_code_id = jf.jit_code_id
LEFT JOIN _v8_regexp_code AS rc ON rc.jit_code_id = jf.jit_code_id
LEFT JOIN stack_profile_symbol AS s ON s.id = r.symbol_id
LEFT JOIN _callstack_spc_raw_forest AS p
  ON p.callsite_id = r.parent_callsite_id
  AND p.symbol_id IS r.parent_symbol_id
ORDER BY r.node_id;

CREATE PERFETTO INDEX _callstack_spc_index ON _callstack_spc_forest(callsite_id);

CREATE PERFETTO INDEX _callstack_spc_parent_index ON _callstack_spc_forest(parent_id);

-- The functions of the callsites the samples name, with all their callers.
CREATE PERFETTO MACRO _callstacks_for_stack_profile_samples(
  spc_samples TableOrSubquery
)
RETURNS TableOrSubquery
AS (
  WITH RECURSIVE reached(id) AS (
    SELECT f.id
    FROM _callstack_spc_forest AS f
    WHERE f.is_leaf_function_in_callsite_frame
      AND f.callsite_id IN (SELECT callsite_id FROM $spc_samples)
    UNION
    SELECT f.parent_id
    FROM reached AS r
    JOIN _callstack_spc_forest AS f ON f.id = r.id
    WHERE f.parent_id IS NOT NULL
  )
  SELECT
    f.id,
    f.parent_id,
    f.callsite_id,
    f.name,
    m.name AS mapping_name,
    f.source_file,
    f.line_number,
    f.inlined,
    f.is_leaf_function_in_callsite_frame
  FROM reached
  JOIN _callstack_spc_forest AS f USING (id)
  JOIN stack_profile_mapping AS m ON m.id = f.mapping_id
);

-- The reached functions, each with the number of samples whose callsite
-- it is the innermost function of.
CREATE PERFETTO MACRO _callstacks_for_callsites(samples TableOrSubquery)
RETURNS TableOrSubquery
AS (
  WITH per_callsite AS MATERIALIZED (
    SELECT callsite_id, count() AS self_count
    FROM $samples
    GROUP BY callsite_id
  )
  SELECT
    c.id,
    c.parent_id,
    c.name,
    c.mapping_name,
    c.source_file,
    c.line_number,
    iif(c.is_leaf_function_in_callsite_frame, coalesce(m.self_count, 0), 0) AS self_count
  FROM _callstacks_for_stack_profile_samples!(per_callsite) AS c
  LEFT JOIN per_callsite AS m USING (callsite_id)
);

-- As _callstacks_for_callsites, summing the samples' `value`.
CREATE PERFETTO MACRO _callstacks_for_callsites_weighted(
  samples TableOrSubquery
)
RETURNS TableOrSubquery
AS (
  WITH per_callsite AS MATERIALIZED (
    SELECT callsite_id, sum(value) AS self_value
    FROM $samples
    GROUP BY callsite_id
  )
  SELECT
    c.id,
    c.parent_id,
    c.name,
    c.mapping_name,
    c.source_file,
    c.line_number,
    iif(c.is_leaf_function_in_callsite_frame, coalesce(m.self_value, 0), 0) AS self_value
  FROM _callstacks_for_stack_profile_samples!(per_callsite) AS c
  LEFT JOIN per_callsite AS m USING (callsite_id)
);

-- Each node's self count plus those of every node below it.
CREATE PERFETTO MACRO _callstacks_self_to_cumulative(callstacks TableOrSubquery)
RETURNS TableOrSubquery
AS (
  WITH RECURSIVE
    nodes AS MATERIALIZED (
      SELECT id, parent_id, self_count FROM $callstacks
    ),
    climb(id, self_count) AS (
      SELECT id, self_count FROM nodes
      UNION ALL
      SELECT n.parent_id, c.self_count
      FROM climb AS c
      JOIN nodes AS n ON n.id = c.id
      WHERE n.parent_id IS NOT NULL
    )
  SELECT id, sum(self_count) AS cumulative_count
  FROM climb
  GROUP BY id
);

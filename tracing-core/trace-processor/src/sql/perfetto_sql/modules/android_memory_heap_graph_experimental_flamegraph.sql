-- Written for zerotrace: the `android.memory.heap_graph.experimental_flamegraph`
-- module, the heap dump side of upstream's `experimental_flamegraph`
-- table function as queries (zerotrace's own operator is native,
-- sql/prelude/experimental_flamegraph.rs).
--   _experimental_flamegraph_heap_graph_frames!(upid, ts): one frame per
--     object of that dump on the shortest-path tree (a root with no
--     reference still one), id twice the object's id and parent twice its
--     parent's, named by its class and `[root kind]` for a root, in the
--     `JAVA` mapping, counting 1 and its bytes; and a `[native] ` child
--     (id one more) for an object holding native bytes, counting those.
--   _experimental_flamegraph_heap_graph_state!(upid, ts): whether the
--     dump has roots, and whether it was cut short.

INCLUDE PERFETTO MODULE android.memory.heap_graph.class_tree;

-- The frames of the dump of `upid` at `ts`: columns id, parent_id, name,
-- map_name, count, size, alloc_count, alloc_size.
CREATE PERFETTO MACRO _experimental_flamegraph_heap_graph_frames(
  upid Expr,
  ts Expr
)
RETURNS TableOrSubquery
AS (
  WITH
    dump_tree AS MATERIALIZED (
      SELECT t.id, t.parent_id
      FROM _heap_graph_object_min_depth_tree AS t
      JOIN heap_graph_object AS o USING (id)
      WHERE o.upid = $upid AND o.graph_sample_ts = $ts
      UNION ALL
      SELECT o.id, NULL AS parent_id
      FROM heap_graph_object AS o
      WHERE
        o.upid = $upid
        AND o.graph_sample_ts = $ts
        AND o.root_type IS NOT NULL
        AND o.id NOT IN (SELECT id FROM _heap_graph_object_min_depth_tree)
    ),
    named AS MATERIALIZED (
      SELECT
        d.id,
        d.parent_id,
        coalesce(c.deobfuscated_name, c.name)
          || coalesce(' [' || o.root_type || ']', '') AS name,
        o.self_size,
        o.native_size
      FROM dump_tree AS d
      JOIN heap_graph_object AS o ON o.id = d.id
      JOIN heap_graph_class AS c ON c.id = o.type_id
    )
  SELECT
    id * 2 AS id,
    parent_id * 2 AS parent_id,
    name,
    'JAVA' AS map_name,
    1 AS count,
    self_size AS size,
    0 AS alloc_count,
    0 AS alloc_size
  FROM named
  UNION ALL
  SELECT
    id * 2 + 1 AS id,
    id * 2 AS parent_id,
    '[native] ' || name AS name,
    'JAVA' AS map_name,
    1 AS count,
    native_size AS size,
    0 AS alloc_count,
    0 AS alloc_size
  FROM named
  WHERE native_size != 0
);

-- Whether the dump of `upid` at `ts` has any root (has_roots) and
-- whether it was truncated (truncated, NULL when there is no such dump).
CREATE PERFETTO MACRO _experimental_flamegraph_heap_graph_state(
  upid Expr,
  ts Expr
)
RETURNS TableOrSubquery
AS (
  SELECT
    EXISTS (
      SELECT 1
      FROM heap_graph_object AS o
      WHERE o.upid = $upid AND o.graph_sample_ts = $ts AND o.root_type IS NOT NULL
    ) AS has_roots,
    (SELECT h.truncated FROM heap_graph AS h WHERE h.upid = $upid AND h.ts = $ts) AS truncated
);

-- Written for zerotrace: the `android.memory.heap_graph.helpers` module,
-- the steps that fold a tree of heap objects into a tree of classes, for
-- any tree (rows id, parent_id of `heap_graph_object` ids; a NULL parent
-- is a root). zerotrace's own class trees run the same steps natively
-- (sql/heap_graph/class_tree.rs); these give them to other trees.
--   _heap_graph_class_name_hash  (id, name_hash): each class's shown name
--     (deobfuscated when known, '' when none) hashed.
--   _heap_graph_type_path_hash!(tab)  (id, path_hash, parent_path_hash):
--     an object keeps its parent's path when both classes have the same
--     name, else starts a new one under it keyed by its class and heap; a
--     root's path is keyed by its dump, class, root kind and heap.
--   _heap_graph_path_hash_aggregate!(tab): the objects of each path
--     counted and their bytes summed, the native bytes they hold as a
--     `[native]` child path; ordered by path hash.
--   _heap_graph_path_hashes_to_class_tree!(tab): those paths numbered in
--     the order of their hashes, each with its parent's number.

-- Each heap graph class's shown name, hashed.
CREATE PERFETTO TABLE _heap_graph_class_name_hash(
  id JOINID(heap_graph_class.id),
  name_hash LONG
) AS
SELECT id, hash(coalesce(deobfuscated_name, name, '')) AS name_hash
FROM heap_graph_class
ORDER BY id;

-- The class path key of every object of the tree `tab` (id, parent_id)
-- that a root of it reaches, and its parent path's key (0 for a root).
CREATE PERFETTO MACRO _heap_graph_type_path_hash(tab TableOrSubquery)
RETURNS TableOrSubquery
AS (
  SELECT h.id, h.path_hash, h.parent_path_hash
  FROM __intrinsic_heap_graph_tree_path_hashes((
    SELECT __intrinsic_graph_rows_agg(t.id, t.parent_id) FROM $tab AS t
  )) AS h
  ORDER BY h.id
);

-- One row per path of `tab` (id, path_hash, parent_path_hash): its dump,
-- class name, root kind and heap (its last object's), object count and bytes (an unknown size,
-- -1, counting 0); and one `[native] ` row under each path whose objects
-- hold native bytes.
CREATE PERFETTO MACRO _heap_graph_path_hash_aggregate(tab TableOrSubquery)
RETURNS TableOrSubquery
AS (
  WITH
    per_path AS (
      SELECT
        o.graph_sample_ts,
        o.upid,
        t.path_hash,
        t.parent_path_hash,
        coalesce(c.deobfuscated_name, c.name, '') AS name,
        o.root_type,
        o.heap_type,
        -- The only min() or max() here: SQLite takes the path's other
        -- columns (dump, name, root kind, heap) from this last object,
        -- as the native class trees do.
        max(o.id) AS last_object_id,
        count() AS self_count,
        sum(iif(o.self_size = -1, 0, o.self_size)) AS self_size,
        sum(o.native_size > 0) AS native_count,
        sum(o.native_size) AS native_size
      FROM $tab AS t
      JOIN heap_graph_object AS o ON o.id = t.id
      JOIN heap_graph_class AS c ON c.id = o.type_id
      GROUP BY t.path_hash
    )
  SELECT
    graph_sample_ts,
    upid,
    path_hash,
    parent_path_hash,
    name,
    root_type,
    heap_type,
    self_count,
    self_size
  FROM per_path
  UNION ALL
  SELECT
    graph_sample_ts,
    upid,
    hash(path_hash, 'native', '') AS path_hash,
    path_hash AS parent_path_hash,
    '[native] ' || name AS name,
    root_type,
    'HEAP_TYPE_NATIVE' AS heap_type,
    native_count AS self_count,
    native_size AS self_size
  FROM per_path
  WHERE native_size > 0
  ORDER BY path_hash
);

-- The paths of `tab` (as `_heap_graph_path_hash_aggregate!` gives them)
-- as a tree: each numbered by the rank of its hash, its parent by its
-- parent path's; path_hash_stable is the hash.
CREATE PERFETTO MACRO _heap_graph_path_hashes_to_class_tree(tab TableOrSubquery)
RETURNS TableOrSubquery
AS (
  WITH
    numbered AS (
      SELECT *, row_number() OVER (ORDER BY path_hash) - 1 AS node_id
      FROM $tab
    )
  SELECT
    c.graph_sample_ts,
    c.upid,
    c.node_id AS id,
    p.node_id AS parent_id,
    c.name,
    c.root_type,
    c.heap_type,
    c.self_count,
    c.self_size,
    c.path_hash AS path_hash_stable
  FROM numbered AS c
  LEFT JOIN numbered AS p ON p.path_hash = c.parent_path_hash
  ORDER BY id
);

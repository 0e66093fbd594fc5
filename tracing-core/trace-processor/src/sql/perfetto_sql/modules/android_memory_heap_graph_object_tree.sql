-- Written for zerotrace: the `android.memory.heap_graph.object_tree`
-- module, what a heap dump explorer shows of single objects.
--   _heap_graph_object_tree_aggregation  (id, cumulative_size,
--     cumulative_native_size, cumulative_count): for every object, its
--     strict descendants' bytes, native bytes and count summed over the
--     shortest-path tree from the roots, each the larger of that sum and
--     the object's own value (computed natively, sql/heap_graph/).
--   _heap_graph_object_references_agg!(path_hashes, path_hash_values),
--   _heap_graph_incoming_references_agg!(...),
--   _heap_graph_outgoing_references_agg!(...): the objects whose path
--     hash (`path_hashes`: id, path_hash) is among `path_hash_values`
--     (a path_hash column), with their class, totals and, in turn, their
--     reference count, every object referring to them or every object
--     they refer to; largest totals first.

INCLUDE PERFETTO MODULE android.memory.heap_graph.class_tree;

CREATE PERFETTO TABLE _heap_graph_object_tree_aggregation(
  id JOINID(heap_graph_object.id),
  cumulative_size LONG,
  cumulative_native_size LONG,
  cumulative_count LONG
) AS
SELECT id, cumulative_size, cumulative_native_size, cumulative_count
FROM __intrinsic_heap_graph_object_tree_totals()
ORDER BY id;

-- The selected objects that refer to at least one object: the number of
-- their references, their class and totals, then every column of the
-- object.
CREATE PERFETTO MACRO _heap_graph_object_references_agg(
  path_hashes TableOrSubquery,
  path_hash_values TableOrSubquery
)
RETURNS TableOrSubquery
AS (
  WITH
    chosen AS (
      SELECT h.*
      FROM $path_hashes AS h
      JOIN $path_hash_values AS v USING (path_hash)
    )
  SELECT
    chosen.path_hash,
    coalesce(cls.deobfuscated_name, cls.name) AS class_name,
    count(ref.owned_id) AS outgoing_reference_count,
    tot.cumulative_size + tot.cumulative_native_size AS total_cumulative_size,
    tot.cumulative_size,
    tot.cumulative_native_size,
    tot.cumulative_count,
    obj.*
  FROM chosen
  JOIN heap_graph_object AS obj ON obj.id = chosen.id
  JOIN _heap_graph_object_tree_aggregation AS tot ON tot.id = obj.id
  JOIN heap_graph_class AS cls ON cls.id = obj.type_id
  JOIN heap_graph_reference AS ref ON ref.owner_id = obj.id
  GROUP BY obj.id
  ORDER BY total_cumulative_size DESC
);

-- Every reference to a selected object: the field it is held by, the
-- selected object's totals, the referring object's class, then every
-- column of the referring object.
CREATE PERFETTO MACRO _heap_graph_incoming_references_agg(
  path_hashes TableOrSubquery,
  path_hash_values TableOrSubquery
)
RETURNS TableOrSubquery
AS (
  WITH
    chosen AS (
      SELECT h.*
      FROM $path_hashes AS h
      JOIN $path_hash_values AS v USING (path_hash)
    )
  SELECT
    chosen.path_hash,
    coalesce(cls.deobfuscated_name, cls.name) AS class_name,
    coalesce(ref.deobfuscated_field_name, ref.field_name) AS field_name,
    ref.field_type_name,
    tot.cumulative_size + tot.cumulative_native_size AS total_cumulative_size,
    tot.cumulative_size,
    tot.cumulative_native_size,
    tot.cumulative_count,
    owner.*
  FROM chosen
  JOIN heap_graph_object AS target ON target.id = chosen.id
  JOIN heap_graph_reference AS ref ON ref.owned_id = target.id
  JOIN heap_graph_object AS owner ON owner.id = ref.owner_id
  JOIN _heap_graph_object_tree_aggregation AS tot ON tot.id = target.id
  JOIN heap_graph_class AS cls ON cls.id = owner.type_id
  ORDER BY total_cumulative_size DESC
);

-- Every reference from a selected object: the field, the referred
-- object's class and totals, then every column of the referred object.
CREATE PERFETTO MACRO _heap_graph_outgoing_references_agg(
  path_hashes TableOrSubquery,
  path_hash_values TableOrSubquery
)
RETURNS TableOrSubquery
AS (
  WITH
    chosen AS (
      SELECT h.*
      FROM $path_hashes AS h
      JOIN $path_hash_values AS v USING (path_hash)
    )
  SELECT
    chosen.path_hash,
    coalesce(cls.deobfuscated_name, cls.name) AS class_name,
    coalesce(ref.deobfuscated_field_name, ref.field_name) AS field_name,
    ref.field_type_name,
    tot.cumulative_size + tot.cumulative_native_size AS total_cumulative_size,
    tot.cumulative_size,
    tot.cumulative_native_size,
    tot.cumulative_count,
    referred.*
  FROM chosen
  JOIN heap_graph_object AS owner ON owner.id = chosen.id
  JOIN heap_graph_reference AS ref ON ref.owner_id = owner.id
  JOIN heap_graph_object AS referred ON referred.id = ref.owned_id
  JOIN _heap_graph_object_tree_aggregation AS tot ON tot.id = referred.id
  JOIN heap_graph_class AS cls ON cls.id = referred.type_id
  ORDER BY total_cumulative_size DESC
);

-- Written for zerotrace: the `android.memory.heap_graph.class_relationship`
-- module. The heap graph's classes form a forest through their
-- `superclass_id`; `android_heap_graph_class_find_descendants!` walks it
-- down from the classes the caller names (a table or subquery with an
-- `id` column of `heap_graph_class` ids) and answers every class found
-- under each, the named class itself included, as rows (id,
-- ancestor_class_id, ancestor_class_name), the last two being the named
-- class's id and name. The walk is `graphs.scan`'s, computed natively.

INCLUDE PERFETTO MODULE graphs.scan;

-- Every class that descends from one of `ancestor_class_ids` (itself
-- included): columns id, ancestor_class_id and ancestor_class_name.
CREATE PERFETTO MACRO android_heap_graph_class_find_descendants(
  ancestor_class_ids TableOrSubquery
)
RETURNS TableOrSubquery
AS (
  SELECT
    d.id,
    d.ancestor_class_id,
    d.ancestor_class_name
  FROM _graph_scan!(
    (
      SELECT superclass_id AS source_node_id, id AS dest_node_id
      FROM heap_graph_class
      WHERE superclass_id IS NOT NULL
    ),
    (
      SELECT c.id, c.id AS ancestor_class_id, c.name AS ancestor_class_name
      FROM $ancestor_class_ids AS a
      JOIN heap_graph_class AS c ON c.id = a.id
    ),
    (ancestor_class_id, ancestor_class_name),
    (SELECT id, ancestor_class_id, ancestor_class_name FROM $table)
  ) AS d
);

//! `tree_structural_partition_by_group!`'s operator: a tree split into a
//! forest by a group key, keeping its shape within each group: a node's
//! new parent is its nearest ancestor of the same group (none when no
//! ancestor shares it). The tree has exactly one root (a NULL parent);
//! rows come in the preorder of a walk from the root that takes a node's
//! children last-given first. Rows whose parent is not reached from the
//! root have no row.

use std::collections::HashMap;

use super::error::GraphError;
use super::rows::{Rows, int};

/// A partitioned node: (id, new parent, group).
pub(crate) type Partitioned = (i64, Option<i64>, i64);

/// The partition of tree rows (id, parent_id, group_key).
pub(crate) fn partition(rows: &Rows) -> Result<Vec<Partitioned>, GraphError> {
    if rows.values.is_empty() {
        return Ok(Vec::new());
    }
    if rows.arity < 3 {
        return Err(GraphError::Columns {
            what: "the tree",
            needed: 3,
            given: rows.arity,
        });
    }
    let mut root = None;
    let mut children: HashMap<i64, Vec<(i64, i64)>> = HashMap::new();
    for r in rows.iter() {
        let id = int(r.first(), "id")?.unwrap_or(0);
        let group = int(r.get(2), "group_key")?.unwrap_or(0);
        match int(r.get(1), "parent_id")? {
            None if root.is_some() => return Err(GraphError::ManyRoots),
            None => root = Some((id, group)),
            Some(p) => children.entry(p).or_default().push((id, group)),
        }
    }
    let root = root.ok_or(GraphError::NoRoot)?;
    // The nearest ancestor of each group on the current path.
    let mut nearest: HashMap<i64, i64> = HashMap::new();
    let mut out = Vec::new();
    // (node, group, the group's previous nearest ancestor, children pushed).
    let mut stack: Vec<(i64, i64, Option<i64>, bool)> = vec![(root.0, root.1, None, false)];
    while let Some(top) = stack.last_mut() {
        let (id, group, _, done) = *top;
        if done {
            match top.2 {
                Some(prev) => nearest.insert(group, prev),
                None => nearest.remove(&group),
            };
            stack.pop();
            continue;
        }
        let prev = nearest.get(&group).copied();
        out.push((id, prev, group));
        *top = (id, group, prev, true);
        nearest.insert(group, id);
        if let Some(kids) = children.get(&id) {
            stack.extend(kids.iter().map(|&(k, g)| (k, g, None, false)));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::graphs::rows::{decode, encode};
    use rusqlite::types::Value;

    fn rows(t: &[(i64, Option<i64>, i64)]) -> Rows {
        let v: Vec<Value> = t
            .iter()
            .flat_map(|&(i, p, g)| {
                [
                    Value::Integer(i),
                    p.map_or(Value::Null, Value::Integer),
                    Value::Integer(g),
                ]
            })
            .collect();
        decode(&encode(3, &v)).unwrap()
    }

    #[test]
    fn each_node_hangs_from_its_nearest_ancestor_of_its_group() {
        // 1(1) - 2(1) - {3(2), 4(2)}; 4 - {5(1), 8(1)}; 5 - {6(3), 7(2)}.
        let t = rows(&[
            (1, None, 1),
            (2, Some(1), 1),
            (3, Some(2), 2),
            (4, Some(2), 2),
            (5, Some(4), 1),
            (6, Some(5), 3),
            (7, Some(5), 2),
            (8, Some(4), 1),
        ]);
        let mut got = partition(&t).unwrap();
        // Preorder, the last child first.
        assert_eq!(got.first(), Some(&(1, None, 1)));
        assert_eq!(got.get(2), Some(&(4, None, 2)));
        got.sort();
        assert_eq!(
            got,
            [
                (1, None, 1),
                (2, Some(1), 1),
                (3, None, 2),
                (4, None, 2),
                (5, Some(2), 1),
                (6, None, 3),
                (7, Some(4), 2),
                (8, Some(2), 1),
            ]
        );
    }

    #[test]
    fn a_tree_needs_exactly_one_root() {
        assert_eq!(
            partition(&rows(&[(1, None, 1), (2, None, 1)])),
            Err(GraphError::ManyRoots)
        );
        assert_eq!(
            partition(&rows(&[(1, Some(2), 1)])),
            Err(GraphError::NoRoot)
        );
        assert_eq!(partition(&Rows::default()).unwrap(), []);
    }
}

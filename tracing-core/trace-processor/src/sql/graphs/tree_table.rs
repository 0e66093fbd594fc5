//! `std.trees.table_conversion`'s operator: a table of (id, parent_id,
//! columns...) rows as a tree laid out with every parent before its
//! children, each row numbered (`_tree_id`, from 0) and pointing at its
//! parent's number (`_tree_parent_id`). Rows whose parents already come
//! first keep their order; otherwise each row in turn brings its unplaced
//! ancestors, the root-most first. An id given twice, a parent that is no
//! row's id and a cycle are errors.

use std::collections::HashMap;

use rusqlite::types::Value;

use super::error::GraphError;
use super::rows::{Rows, int};

/// The tree's rows: `_tree_id`, `_tree_parent_id`, then the row's values.
pub(crate) fn tree_rows(rows: &Rows) -> Result<Vec<Vec<Value>>, GraphError> {
    if rows.values.is_empty() {
        return Ok(Vec::new());
    }
    if rows.arity < 2 {
        return Err(GraphError::Columns {
            what: "the tree",
            needed: 2,
            given: rows.arity,
        });
    }
    let input: Vec<&[Value]> = rows.iter().collect();
    let tree_error = |message: &str| GraphError::Step {
        operator: "tree",
        message: message.to_owned(),
    };
    let mut by_id: HashMap<i64, usize> = HashMap::with_capacity(input.len());
    for (row, r) in input.iter().enumerate() {
        let id = match r.first() {
            Some(Value::Integer(id)) => *id,
            _ => return Err(tree_error("id column must be integer")),
        };
        if by_id.insert(id, row).is_some() {
            return Err(tree_error("duplicate id"));
        }
    }
    let mut parent = Vec::with_capacity(input.len());
    for r in &input {
        parent.push(match int(r.get(1), "parent_id")? {
            None => None,
            Some(p) => Some(
                *by_id
                    .get(&p)
                    .ok_or_else(|| tree_error("parent_id not found in id column"))?,
            ),
        });
    }
    let identity = parent
        .iter()
        .enumerate()
        .all(|(row, p)| p.is_none_or(|p| p < row));
    let order: Vec<usize> = if identity {
        (0..input.len()).collect()
    } else {
        // 0 unplaced, 1 on the current path, 2 placed.
        let mut state = vec![0u8; input.len()];
        let mut order = Vec::with_capacity(input.len());
        let mut path = Vec::new();
        for start in 0..input.len() {
            let mut row = Some(start);
            while let Some(r) = row.filter(|r| state[*r] == 0) {
                state[r] = 1;
                path.push(r);
                row = parent[r];
            }
            if row.is_some_and(|r| state[r] == 1) {
                return Err(tree_error("cycle detected in parent relation"));
            }
            while let Some(r) = path.pop() {
                state[r] = 2;
                order.push(r);
            }
        }
        order
    };
    let mut position = vec![0usize; input.len()];
    for (at, &row) in order.iter().enumerate() {
        position[row] = at;
    }
    let number = |x: usize| Value::Integer(i64::try_from(x).unwrap_or(i64::MAX));
    Ok(order
        .iter()
        .enumerate()
        .map(|(at, &row)| {
            let mut out = Vec::with_capacity(rows.arity + 2);
            out.push(number(at));
            out.push(parent[row].map_or(Value::Null, |p| number(position[p])));
            out.extend(input[row].iter().cloned());
            out
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::graphs::rows::{decode, encode};

    fn rows(t: &[(i64, Option<i64>)]) -> Rows {
        let v: Vec<Value> = t
            .iter()
            .flat_map(|&(i, p)| [Value::Integer(i), p.map_or(Value::Null, Value::Integer)])
            .collect();
        decode(&encode(2, &v)).unwrap()
    }

    fn layout(t: &[(i64, Option<i64>)]) -> Vec<(i64, Option<i64>, i64)> {
        tree_rows(&rows(t))
            .unwrap()
            .iter()
            .map(|r| {
                let n = |v: &Value| match v {
                    Value::Integer(x) => Some(*x),
                    _ => None,
                };
                (n(&r[0]).unwrap_or(-1), n(&r[1]), n(&r[2]).unwrap_or(-1))
            })
            .collect()
    }

    #[test]
    fn parents_come_before_children_keeping_an_order_that_already_does() {
        // (tree id, tree parent, original id).
        assert_eq!(
            layout(&[(10, None), (20, Some(10)), (30, Some(20))]),
            [(0, None, 10), (1, Some(0), 20), (2, Some(1), 30)]
        );
        // A child given first brings its ancestors, the root first.
        assert_eq!(
            layout(&[(30, Some(20)), (10, None), (20, Some(10)), (40, None)]),
            [
                (0, None, 10),
                (1, Some(0), 20),
                (2, Some(1), 30),
                (3, None, 40)
            ]
        );
    }

    #[test]
    fn duplicates_unknown_parents_and_cycles_are_errors() {
        let err = |t: &[(i64, Option<i64>)]| tree_rows(&rows(t)).unwrap_err().to_string();
        assert!(err(&[(1, None), (1, None)]).contains("duplicate id"));
        assert!(err(&[(1, Some(5))]).contains("parent_id not found"));
        assert!(err(&[(1, Some(2)), (2, Some(1))]).contains("cycle"));
        assert_eq!(
            tree_rows(&Rows::default()).unwrap(),
            Vec::<Vec<Value>>::new()
        );
    }
}

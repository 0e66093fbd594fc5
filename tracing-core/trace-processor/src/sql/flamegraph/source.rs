//! A flamegraph's source: the rows of the query given to `CREATE VIRTUAL
//! TABLE ... USING __intrinsic_flamegraph((query))` (`id`, `parent_id`,
//! `name`, `value`, then any property columns), typed column by column
//! and put in parent-before-child order, as the builder needs. Sans-IO:
//! the rows come in as values; reading them from SQLite is `vtab.rs`'s.

use std::collections::HashMap;

use super::error::FlamegraphError;

/// No row / no node.
pub(crate) const NONE: u32 = u32::MAX;

/// One value of the source query.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Cell {
    /// NULL.
    Null,
    /// An integer.
    Int(i64),
    /// A double.
    Real(f64),
    /// Text.
    Text(String),
    /// Bytes (refused).
    Blob,
}

/// A typed column: every value of one type, or NULL.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Column {
    /// No value at all (its type is unknown).
    Null,
    /// Integers.
    Int(Vec<Option<i64>>),
    /// Doubles (integers mixed with doubles become doubles).
    Real(Vec<Option<f64>>),
    /// Strings, as indexes into [`Source::strings`].
    Str(Vec<Option<u32>>),
}

impl Column {
    /// Whether the column holds numbers.
    pub(crate) fn is_numeric(&self) -> bool {
        matches!(self, Column::Int(_) | Column::Real(_))
    }

    fn gather(&self, order: &[u32]) -> Column {
        fn pick<T: Copy>(v: &[Option<T>], order: &[u32]) -> Vec<Option<T>> {
            order
                .iter()
                .map(|&r| v.get(r as usize).copied().flatten())
                .collect()
        }
        match self {
            Column::Null => Column::Null,
            Column::Int(v) => Column::Int(pick(v, order)),
            Column::Real(v) => Column::Real(pick(v, order)),
            Column::Str(v) => Column::Str(pick(v, order)),
        }
    }
}

/// The columns upstream reserves for the operator's output.
const RESERVED: [&str; 10] = [
    "in_config",
    "_tree_id",
    "_tree_parent_id",
    "depth",
    "name",
    "self_value",
    "cumulative_value",
    "parent_cumulative_value",
    "x_start",
    "x_end",
];

/// The fixed leading columns.
const FIXED: [&str; 4] = ["id", "parent_id", "name", "value"];

/// The loaded source.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Source {
    /// Column names, the four fixed ones first.
    pub names: Vec<String>,
    /// Columns, rows in parent-before-child order.
    pub columns: Vec<Column>,
    /// Each row's parent row, [`NONE`] for a root; always an earlier row.
    pub parent: Vec<u32>,
    /// The strings of [`Column::Str`] columns.
    pub strings: Vec<Box<str>>,
    /// Rows.
    pub rows: usize,
    /// The sum of `value` over every row (the super-root's value).
    pub value_sum: f64,
    /// The property columns (after the fixed four).
    pub properties: Vec<String>,
    /// The numeric property columns (each may become a value column).
    pub candidates: Vec<String>,
}

fn type_column(
    name: &str,
    cells: Vec<Cell>,
    strings: &mut Vec<Box<str>>,
    index: &mut HashMap<String, u32>,
) -> Result<Column, FlamegraphError> {
    let (mut ints, mut reals, mut texts) = (false, false, false);
    for c in &cells {
        match c {
            Cell::Null => {}
            Cell::Int(_) => ints = true,
            Cell::Real(_) => reals = true,
            Cell::Text(_) => texts = true,
            Cell::Blob => {
                return Err(FlamegraphError::Source(format!(
                    "column '{name}' holds bytes"
                )));
            }
        }
    }
    if texts && (ints || reals) {
        return Err(FlamegraphError::Source(format!(
            "column '{name}' mixes strings and numbers"
        )));
    }
    Ok(if texts {
        let mut out = Vec::with_capacity(cells.len());
        for c in cells {
            out.push(match c {
                Cell::Text(s) => Some(match index.get(&s) {
                    Some(&id) => id,
                    None => {
                        let id = u32::try_from(strings.len())
                            .map_err(|_| FlamegraphError::Source("too many strings".into()))?;
                        strings.push(s.clone().into_boxed_str());
                        index.insert(s, id);
                        id
                    }
                }),
                _ => None,
            });
        }
        Column::Str(out)
    } else if reals {
        Column::Real(
            cells
                .into_iter()
                .map(|c| match c {
                    Cell::Int(v) => Some(v as f64),
                    Cell::Real(v) => Some(v),
                    _ => None,
                })
                .collect(),
        )
    } else if ints {
        Column::Int(
            cells
                .into_iter()
                .map(|c| match c {
                    Cell::Int(v) => Some(v),
                    _ => None,
                })
                .collect(),
        )
    } else {
        Column::Null
    })
}

/// Each row's parent row, from the id and parent_id columns.
fn parents(ids: &Column, parent_ids: &Column, rows: usize) -> Result<Vec<u32>, FlamegraphError> {
    let not_int = || FlamegraphError::Tree("id column must be integer".into());
    let ids: Vec<i64> = match ids {
        Column::Int(v) => v
            .iter()
            .map(|x| x.ok_or_else(not_int))
            .collect::<Result<_, _>>()?,
        Column::Null if rows == 0 => Vec::new(),
        _ => return Err(not_int()),
    };
    let mut index = HashMap::with_capacity(rows);
    for (row, &id) in ids.iter().enumerate() {
        let row = u32::try_from(row).map_err(|_| FlamegraphError::Tree("too many rows".into()))?;
        if index.insert(id, row).is_some() {
            return Err(FlamegraphError::Tree("duplicate id".into()));
        }
    }
    match parent_ids {
        Column::Null => Ok(vec![NONE; rows]),
        Column::Int(v) => v
            .iter()
            .map(|p| match p {
                None => Ok(NONE),
                Some(p) => index.get(p).copied().ok_or_else(|| {
                    FlamegraphError::Tree("parent_id not found in id column".into())
                }),
            })
            .collect(),
        _ => Err(FlamegraphError::Tree(
            "parent_id column must be integer".into(),
        )),
    }
}

/// The rows in parent-before-child order: each row in input order after
/// its ancestors not yet placed; and the parents renumbered to it.
fn order(parent: &[u32]) -> Result<(Vec<u32>, Vec<u32>), FlamegraphError> {
    const VISITING: u8 = 1;
    const DONE: u8 = 2;
    let n = parent.len();
    let mut state = vec![0u8; n];
    let mut out_row = vec![NONE; n];
    let mut order = Vec::with_capacity(n);
    let mut new_parent = Vec::with_capacity(n);
    let mut path = Vec::new();
    for start in 0..n {
        let mut row = start as u32;
        while row != NONE && state.get(row as usize) == Some(&0) {
            if let Some(s) = state.get_mut(row as usize) {
                *s = VISITING;
            }
            path.push(row);
            row = parent.get(row as usize).copied().unwrap_or(NONE);
        }
        if row != NONE && state.get(row as usize) == Some(&VISITING) {
            return Err(FlamegraphError::Tree(
                "cycle detected in parent relation".into(),
            ));
        }
        while let Some(r) = path.pop() {
            let p = parent.get(r as usize).copied().unwrap_or(NONE);
            new_parent.push(if p == NONE {
                NONE
            } else {
                out_row.get(p as usize).copied().unwrap_or(NONE)
            });
            if let Some(o) = out_row.get_mut(r as usize) {
                *o = order.len() as u32;
            }
            if let Some(s) = state.get_mut(r as usize) {
                *s = DONE;
            }
            order.push(r);
        }
    }
    Ok((order, new_parent))
}

impl Source {
    /// Loads the source from its column names and its values, column by
    /// column (`columns[c][row]`).
    pub(crate) fn new(
        names: Vec<String>,
        columns: Vec<Vec<Cell>>,
    ) -> Result<Self, FlamegraphError> {
        if names.len() < FIXED.len() {
            return Err(FlamegraphError::Source(
                "source must contain id, parent_id, name and value".into(),
            ));
        }
        if names.iter().zip(FIXED).any(|(n, f)| n != f) {
            return Err(FlamegraphError::Source(
                "first source columns must be id, parent_id, name, value".into(),
            ));
        }
        if let Some(r) = names
            .iter()
            .skip(FIXED.len())
            .find(|n| RESERVED.contains(&n.as_str()))
        {
            return Err(FlamegraphError::Source(format!(
                "reserved property column '{r}'"
            )));
        }
        let rows = columns.first().map_or(0, Vec::len);
        let mut strings = Vec::new();
        let mut index = HashMap::new();
        let mut typed = Vec::with_capacity(columns.len());
        for (name, cells) in names.iter().zip(columns) {
            typed.push(type_column(name, cells, &mut strings, &mut index)?);
        }
        let (Some(ids), Some(pids)) = (typed.first(), typed.get(1)) else {
            return Err(FlamegraphError::Source(
                "source must contain id, parent_id, name and value".into(),
            ));
        };
        let input_parent = parents(ids, pids, rows)?;
        let (order, parent) = order(&input_parent)?;
        let identity = order.iter().enumerate().all(|(i, &r)| i as u32 == r);
        let columns: Vec<Column> = if identity {
            typed
        } else {
            typed.iter().map(|c| c.gather(&order)).collect()
        };
        let value_sum = match columns.get(3) {
            Some(Column::Int(v)) => v.iter().flatten().map(|&x| x as f64).sum(),
            Some(Column::Real(v)) => v.iter().flatten().sum(),
            _ if rows == 0 => 0.0,
            _ => {
                return Err(FlamegraphError::Source(
                    "value column must be numeric".into(),
                ));
            }
        };
        let properties: Vec<String> = names.iter().skip(FIXED.len()).cloned().collect();
        let candidates = names
            .iter()
            .zip(&columns)
            .skip(FIXED.len())
            .filter(|(_, c)| c.is_numeric())
            .map(|(n, _)| n.clone())
            .collect();
        Ok(Source {
            names,
            columns,
            parent,
            strings,
            rows,
            value_sum,
            properties,
            candidates,
        })
    }

    /// The column named `name`.
    #[cfg(test)]
    pub(crate) fn column(&self, name: &str) -> Option<&Column> {
        self.names
            .iter()
            .position(|n| n == name)
            .and_then(|i| self.columns.get(i))
    }

    /// The text of string `id`.
    pub(crate) fn string(&self, id: u32) -> &str {
        self.strings.get(id as usize).map_or("", |s| s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(extra: &[&str]) -> Vec<String> {
        FIXED.iter().chain(extra).map(|s| s.to_string()).collect()
    }

    #[test]
    fn children_before_parents_are_reordered_and_types_inferred() {
        let s = Source::new(
            names(&["g", "w"]),
            vec![
                vec![Cell::Int(3), Cell::Int(1), Cell::Int(2)],
                vec![Cell::Int(2), Cell::Null, Cell::Int(1)],
                vec![
                    Cell::Text("c".into()),
                    Cell::Text("a".into()),
                    Cell::Text("b".into()),
                ],
                vec![Cell::Int(1), Cell::Real(0.5), Cell::Int(2)],
                vec![Cell::Null, Cell::Null, Cell::Null],
                vec![Cell::Int(1), Cell::Null, Cell::Int(2)],
            ],
        )
        .expect("loads");
        // Row 0 (id 3) needs id 2, which needs id 1: a, b, c.
        assert_eq!(s.parent, vec![NONE, 0, 1]);
        let Some(Column::Str(n)) = s.column("name") else {
            panic!("name is text")
        };
        let got: Vec<&str> = n.iter().map(|i| s.string(i.unwrap_or(NONE))).collect();
        assert_eq!(got, vec!["a", "b", "c"]);
        assert_eq!(
            s.column("value"),
            Some(&Column::Real(vec![Some(0.5), Some(2.0), Some(1.0)]))
        );
        assert_eq!(s.column("g"), Some(&Column::Null));
        assert_eq!(s.candidates, vec!["w"]);
        assert_eq!(s.value_sum, 3.5);
    }

    #[test]
    fn malformed_sources_are_errors() {
        let row = |id: i64, p: Option<i64>| {
            vec![
                vec![Cell::Int(id)],
                vec![p.map_or(Cell::Null, Cell::Int)],
                vec![Cell::Text("n".into())],
                vec![Cell::Int(1)],
            ]
        };
        let err =
            |n: Vec<String>, c: Vec<Vec<Cell>>| Source::new(n, c).expect_err("refused").to_string();
        assert_eq!(
            err(names(&[]), row(1, Some(7))),
            "tree: parent_id not found in id column"
        );
        assert_eq!(
            err(names(&[]), row(1, Some(1))),
            "tree: cycle detected in parent relation"
        );
        assert_eq!(
            err(
                vec![
                    "id".into(),
                    "parent_id".into(),
                    "value".into(),
                    "name".into()
                ],
                row(1, None)
            ),
            "flamegraph: first source columns must be id, parent_id, name, value"
        );
        let mut dup = row(1, None);
        for (c, more) in dup.iter_mut().zip(row(1, None)) {
            c.extend(more);
        }
        assert_eq!(err(names(&[]), dup), "tree: duplicate id");
        let mut depth = row(1, None);
        depth.push(vec![Cell::Int(0)]);
        assert_eq!(
            err(names(&["depth"]), depth),
            "flamegraph: reserved property column 'depth'"
        );
        let mut text_value = row(1, None);
        text_value[3] = vec![Cell::Text("x".into())];
        assert_eq!(
            err(names(&[]), text_value),
            "flamegraph: value column must be numeric"
        );
    }
}

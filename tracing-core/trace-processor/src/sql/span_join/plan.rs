//! Which of a query's constraints on the joined table each side's own
//! query can apply, and that query's text. Applying a constraint to a
//! side early must not change the result: a side that yields shadows gets
//! none (its gaps depend on all of its rows); the others get their own
//! columns' constraints and the partition's, and `ts <=` (a joined span
//! never starts before either of its rows). `dur` stays with SQLite. The
//! constraints pushed are still checked by SQLite on the joined rows.
//! The plan travels from `best_index` to `filter` as SQLite's index
//! string.

use rusqlite::types::Value;
use rusqlite::vtab::IndexConstraintOp;

use super::args::{Origin, SideSpec, Spec, quote};
use super::error::SpanJoinError;
use super::side::Shadows;

/// A comparison a side's query can apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Op {
    /// `=`.
    Eq,
    /// `!=`.
    Ne,
    /// `>=`.
    Ge,
    /// `>`.
    Gt,
    /// `<=`.
    Le,
    /// `<`.
    Lt,
    /// `LIKE`.
    Like,
    /// `GLOB`.
    Glob,
    /// `IS NULL` (no value).
    IsNull,
    /// `IS NOT NULL` (no value).
    IsNotNull,
}

const OPS: [(Op, &str); 10] = [
    (Op::Eq, "="),
    (Op::Ne, "!="),
    (Op::Ge, ">="),
    (Op::Gt, ">"),
    (Op::Le, "<="),
    (Op::Lt, "<"),
    (Op::Like, "LIKE"),
    (Op::Glob, "GLOB"),
    (Op::IsNull, "IS NULL"),
    (Op::IsNotNull, "IS NOT NULL"),
];

impl Op {
    /// The operator of SQLite's constraint, when a side can apply it.
    pub(crate) fn of(op: IndexConstraintOp) -> Option<Op> {
        use IndexConstraintOp as C;
        Some(match op {
            C::SQLITE_INDEX_CONSTRAINT_EQ => Op::Eq,
            C::SQLITE_INDEX_CONSTRAINT_NE => Op::Ne,
            C::SQLITE_INDEX_CONSTRAINT_GE => Op::Ge,
            C::SQLITE_INDEX_CONSTRAINT_GT => Op::Gt,
            C::SQLITE_INDEX_CONSTRAINT_LE => Op::Le,
            C::SQLITE_INDEX_CONSTRAINT_LT => Op::Lt,
            C::SQLITE_INDEX_CONSTRAINT_LIKE => Op::Like,
            C::SQLITE_INDEX_CONSTRAINT_GLOB => Op::Glob,
            C::SQLITE_INDEX_CONSTRAINT_ISNULL => Op::IsNull,
            C::SQLITE_INDEX_CONSTRAINT_ISNOTNULL => Op::IsNotNull,
            _ => return None,
        })
    }

    /// Whether it compares with a value.
    pub(crate) fn takes_value(self) -> bool {
        !matches!(self, Op::IsNull | Op::IsNotNull)
    }

    fn code(self) -> usize {
        OPS.iter().position(|(o, _)| *o == self).unwrap_or(0)
    }

    fn sql(self) -> &'static str {
        OPS.iter()
            .find(|(o, _)| *o == self)
            .map_or("=", |(_, s)| *s)
    }
}

/// One constraint given to a side's query.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Cond {
    /// Whether it is for the left side (else the right).
    pub left: bool,
    /// The side's column.
    pub col: usize,
    /// The comparison.
    pub op: Op,
    /// Which of the filter's values it compares with (0-based).
    pub value: Option<usize>,
}

/// The constraints of one scan.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Plan {
    /// Each pushed constraint.
    pub conds: Vec<Cond>,
}

/// The sides (left first) that can apply a constraint `op` on joined
/// column `origin`, and the side's column it is on.
pub(crate) fn targets(spec: &Spec, origin: Origin, op: Op) -> Vec<(bool, usize)> {
    let quiet = |s: &SideSpec| s.shadows == Shadows::None;
    let mut out = Vec::new();
    for (left, s) in [(true, &spec.left), (false, &spec.right)] {
        if !quiet(s) {
            continue;
        }
        let col = match origin {
            Origin::Ts if op == Op::Le => Some(s.ts),
            Origin::Ts | Origin::Dur => None,
            Origin::Partition => s.part,
            Origin::Left(i) if left => Some(i),
            Origin::Right(i) if !left => Some(i),
            Origin::Left(_) | Origin::Right(_) => None,
        };
        if let Some(col) = col {
            out.push((left, col));
        }
    }
    out
}

impl Plan {
    /// The plan as SQLite's index string.
    pub(crate) fn encode(&self) -> String {
        self.conds
            .iter()
            .map(|c| {
                format!(
                    "{},{},{},{}",
                    if c.left { 'L' } else { 'R' },
                    c.col,
                    c.op.code(),
                    c.value.map_or_else(|| "-".to_owned(), |v| v.to_string())
                )
            })
            .collect::<Vec<_>>()
            .join(";")
    }

    /// Reads an index string written by [`Plan::encode`].
    pub(crate) fn decode(s: &str) -> Result<Plan, SpanJoinError> {
        let bad = || SpanJoinError::BadPlan(s.to_owned());
        let mut conds = Vec::new();
        for part in s.split(';').filter(|p| !p.is_empty()) {
            let f: Vec<&str> = part.split(',').collect();
            let [side, col, op, value] = f.as_slice() else {
                return Err(bad());
            };
            let left = match *side {
                "L" => true,
                "R" => false,
                _ => return Err(bad()),
            };
            let col = col.parse().map_err(|_| bad())?;
            let op = op
                .parse::<usize>()
                .ok()
                .and_then(|i| OPS.get(i))
                .map(|(o, _)| *o)
                .ok_or_else(bad)?;
            let value = match *value {
                "-" => None,
                v => Some(v.parse().map_err(|_| bad())?),
            };
            conds.push(Cond {
                left,
                col,
                op,
                value,
            });
        }
        Ok(Plan { conds })
    }

    /// The query of one side (`left` or the right one) with its
    /// constraints, ordered by partition and ts, and the values it binds
    /// (from `values`, the filter's).
    pub(crate) fn side_query(
        &self,
        side: &SideSpec,
        left: bool,
        values: &[Value],
    ) -> Result<(String, Vec<Value>), SpanJoinError> {
        let cols: Vec<String> = side.columns.iter().map(|c| quote(&c.name)).collect();
        let mut sql = format!("SELECT {} FROM {}", cols.join(", "), side.name);
        let mut binds = Vec::new();
        let mut wheres = Vec::new();
        for c in self.conds.iter().filter(|c| c.left == left) {
            let name = side
                .columns
                .get(c.col)
                .ok_or_else(|| SpanJoinError::BadPlan(self.encode()))?;
            let mut w = format!("{} {}", quote(&name.name), c.op.sql());
            if let Some(v) = c.value {
                let v = values
                    .get(v)
                    .ok_or_else(|| SpanJoinError::BadPlan(self.encode()))?;
                binds.push(v.clone());
                w.push_str(&format!(" ?{}", binds.len()));
            }
            wheres.push(w);
        }
        if !wheres.is_empty() {
            sql.push_str(" WHERE ");
            sql.push_str(&wheres.join(" AND "));
        }
        sql.push_str(" ORDER BY ");
        if let Some(p) = side.part {
            let p = side
                .columns
                .get(p)
                .ok_or_else(|| SpanJoinError::BadPlan(self.encode()))?;
            sql.push_str(&quote(&p.name));
            sql.push_str(", ");
        }
        sql.push_str("\"ts\"");
        Ok((sql, binds))
    }
}

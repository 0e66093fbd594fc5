//! What a scan of a columnar table costs and how many rows it gives, as
//! upstream's dataframe planner tells SQLite: SQLite orders the tables of
//! a join by these figures, so a query without `ORDER BY` gives its rows
//! in upstream's order only when the estimates follow upstream's model.
//!
//! The model walks the plan upstream would make for the constraints:
//! filters taken in upstream's preference (an id's equality first, then
//! binary searches on sorted columns, then scans), each narrowing an
//! estimated row count (an id's equality to one row, another equality to
//! the rows over the column's distinct values, anything else to half),
//! each step costing what upstream charges its instruction (a fixed
//! amount, or an amount per row, per log of the rows, or per row times
//! its log, of the rows estimated when the step runs); then the sort an
//! `ORDER BY` needs unless the column is sorted already, and the copy of
//! the rows' indices out, with the nullable columns read. Our own lookups
//! (a column's value order) are faster than upstream's scans, but the
//! estimate is upstream's: it decides only the join order.

use rusqlite::vtab::IndexConstraintOp;

use crate::column_store::table::Table;

/// How a column stores its values, as far as the model cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Storage {
    /// The row index: `id`.
    Id,
    /// Integers.
    Int,
    /// Doubles.
    Double,
    /// Pooled strings.
    Text,
}

/// How a column marks its NULLs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Nulls {
    /// It holds none.
    NonNull,
    /// A bit per row beside a value per row (strings).
    Dense,
    /// A bit per row beside the non-null values only.
    Sparse,
}

/// What the model knows of one column.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ColumnFacts {
    /// Its storage.
    pub storage: Storage,
    /// Its NULLs.
    pub nulls: Nulls,
    /// Whether its values ascend with the row (the id, a sorted column).
    pub sorted: bool,
    /// Its distinct values (0: unknown, and for the id or doubles).
    pub distinct: u64,
}

/// A constraint's operator, as upstream's planner takes them (others are
/// left to SQLite and cost nothing here).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FilterOp {
    /// `=`.
    Eq,
    /// `!=`.
    Ne,
    /// `<`, `<=`, `>`, `>=`.
    Range,
    /// `GLOB`.
    Glob,
    /// `IS NULL`.
    IsNull,
    /// `IS NOT NULL`.
    IsNotNull,
}

/// The figures told to SQLite.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Estimate {
    /// The scan's cost.
    pub cost: f64,
    /// The rows it is expected to give.
    pub rows: u64,
    /// The most rows it can give (one: a unique scan).
    pub max_rows: u64,
}

/// The running plan: rows estimated and at most, and the cost so far.
struct Plan {
    est: u64,
    max: u64,
    cost: f64,
    /// Whether the rows are still a range of row numbers (no list made).
    range: bool,
    /// The estimate before the first equality, against which each
    /// equality estimates (equalities on one scan do not compound).
    selective_base: Option<u64>,
    /// Sparse columns whose prefix counts were paid for.
    popcounts: u64,
}

/// A fixed cost.
const ALLOCATE: f64 = 30.0;
const CAST_VALUE: f64 = 5.0;
const ID_SEARCH: f64 = 20.0;
/// What a step charged per row costs when no row is expected.
const EMPTY_STEP: f64 = 5.0;

impl Plan {
    fn rows(&self) -> f64 {
        self.est as f64
    }

    fn linear(&mut self, per_row: f64) {
        self.cost += if self.est == 0 {
            EMPTY_STEP
        } else {
            per_row * self.rows()
        };
    }

    fn log(&mut self, per_log: f64) {
        self.cost += if self.est == 0 {
            EMPTY_STEP
        } else {
            per_log * self.rows().log2()
        };
    }

    fn log_linear(&mut self, per_row: f64) {
        self.cost += if self.est == 0 {
            EMPTY_STEP
        } else {
            per_row * self.rows() * self.rows().log2()
        };
    }

    /// Makes the rows a list (allocated and filled) if still a range.
    fn make_list(&mut self) {
        if self.range {
            self.cost += ALLOCATE;
            self.linear(10.0);
            self.range = false;
        }
    }

    fn prefix_popcount(&mut self, col: usize, facts: &ColumnFacts) {
        if facts.nulls == Nulls::Sparse && self.popcounts & bit(col) == 0 {
            self.popcounts |= bit(col);
            self.linear(20.0);
        }
    }

    fn non_equality(&mut self) {
        if self.est > 1 {
            self.est /= 2;
        }
    }

    fn equality(&mut self, facts: &ColumnFacts, unique: bool) {
        if unique {
            self.est = self.est.min(1);
            self.max = self.max.min(1);
            return;
        }
        if self.est > 1 {
            let base = *self.selective_base.get_or_insert(self.est);
            let per_value = if facts.distinct > 0 {
                base as f64 / facts.distinct as f64
            } else {
                let b = base as f64;
                b / (2.0 * b.log2())
            };
            // As upstream: at least one row, truncated.
            let rows = if per_value.is_finite() && per_value >= 1.0 {
                per_value as u64
            } else {
                1
            };
            self.est = self.est.min(rows);
        }
    }

    fn narrow(&mut self, op: FilterOp, facts: &ColumnFacts, unique: bool) {
        match op {
            FilterOp::Eq => self.equality(facts, unique),
            _ => self.non_equality(),
        }
    }
}

fn bit(col: usize) -> u64 {
    1u64 << col.min(63)
}

/// The order upstream applies filters in: lower first.
fn preference(op: FilterOp, f: &ColumnFacts) -> u8 {
    let non_null = f.nulls == Nulls::NonNull;
    let numeric = matches!(f.storage, Storage::Int | Storage::Double);
    match (op, f.storage) {
        (FilterOp::Eq, Storage::Id) => 0,
        (FilterOp::Range, Storage::Id) => 2,
        (FilterOp::Eq, _) if non_null && f.sorted && numeric => 3,
        (FilterOp::Range, _) if non_null && f.sorted && numeric => 4,
        (FilterOp::Eq, Storage::Text) if non_null && f.sorted => 5,
        (FilterOp::Range, Storage::Text) if non_null && f.sorted => 6,
        _ => 7,
    }
}

/// The estimate of a scan of `rows` rows with `filters` (column, operator),
/// ordered by `order` (column, descending), reading the columns `cols_used`
/// (SQLite's mask: bit 63 stands for every column past 62); `facts` tells
/// a column's facts.
pub(crate) fn estimate(
    rows: u64,
    facts: &dyn Fn(usize) -> ColumnFacts,
    filters: &[(usize, FilterOp)],
    order: &[(usize, bool)],
    cols_used: u64,
    columns: usize,
) -> Estimate {
    let mut plan = Plan {
        est: rows,
        max: rows,
        cost: 0.0,
        range: true,
        selective_base: None,
        popcounts: 0,
    };
    let mut specs: Vec<(usize, FilterOp, ColumnFacts)> =
        filters.iter().map(|&(c, op)| (c, op, facts(c))).collect();
    specs.sort_by_key(|(_, op, f)| preference(*op, f));
    let mut done = vec![false; specs.len()];
    // Binary searches on sorted non-null columns, while the rows are a
    // range.
    for (i, (_, op, f)) in specs.iter().enumerate() {
        let searchable =
            f.nulls == Nulls::NonNull && f.sorted && matches!(op, FilterOp::Eq | FilterOp::Range);
        if !searchable {
            continue;
        }
        plan.cost += CAST_VALUE;
        if f.storage == Storage::Id {
            plan.cost += ID_SEARCH;
        } else {
            plan.log(10.0);
        }
        plan.narrow(*op, f, f.storage == Storage::Id);
        if let Some(d) = done.get_mut(i) {
            *d = true;
        }
    }
    // The rest: scans.
    for (i, (col, op, f)) in specs.iter().enumerate() {
        if done.get(i).copied().unwrap_or(true) {
            continue;
        }
        scan_filter(&mut plan, *col, *op, f);
    }
    sort(&mut plan, order, facts);
    output(&mut plan, cols_used, columns, facts);
    Estimate {
        cost: plan.cost,
        rows: plan.est,
        max_rows: plan.max,
    }
}

/// A filter upstream evaluates by visiting the rows.
fn scan_filter(plan: &mut Plan, col: usize, op: FilterOp, f: &ColumnFacts) {
    if matches!(op, FilterOp::IsNull | FilterOp::IsNotNull) {
        if f.nulls == Nulls::NonNull {
            if op == FilterOp::IsNull {
                empty(plan);
            }
            return;
        }
        plan.make_list();
        plan.linear(5.0);
        plan.non_equality();
        return;
    }
    if op == FilterOp::Glob && f.storage != Storage::Text {
        empty(plan);
        return;
    }
    plan.cost += CAST_VALUE;
    if plan.range && op == FilterOp::Eq && f.nulls == Nulls::NonNull {
        // One pass over the range, writing the matches.
        plan.cost += ALLOCATE;
        plan.linear(7.0);
        plan.range = false;
        plan.narrow(op, f, false);
        return;
    }
    plan.make_list();
    if f.nulls != Nulls::NonNull {
        plan.linear(5.0);
        plan.non_equality();
    }
    if f.nulls == Nulls::Sparse {
        plan.cost += ALLOCATE;
        plan.prefix_popcount(col, f);
        plan.linear(10.0);
    }
    plan.linear(if f.storage == Storage::Text {
        15.0
    } else {
        5.0
    });
    plan.narrow(op, f, false);
}

/// A filter that can match nothing.
fn empty(plan: &mut Plan) {
    plan.cost += ALLOCATE;
    plan.est = 0;
    plan.max = 0;
    plan.range = false;
}

/// The sort an `ORDER BY` needs: none for one ascending key on a sorted
/// non-null column, a reversal when it descends, else a sort of the rows'
/// keys copied out (strings ranked first).
fn sort(plan: &mut Plan, order: &[(usize, bool)], facts: &dyn Fn(usize) -> ColumnFacts) {
    if order.is_empty() {
        return;
    }
    if let [(col, desc)] = order {
        let f = facts(*col);
        if f.nulls == Nulls::NonNull && f.sorted {
            if *desc {
                plan.make_list();
                plan.linear(2.0);
            }
            return;
        }
    }
    plan.make_list();
    let texts: Vec<(usize, ColumnFacts)> = order
        .iter()
        .map(|&(c, _)| (c, facts(c)))
        .filter(|(_, f)| f.storage == Storage::Text)
        .collect();
    if !texts.is_empty() {
        plan.cost += 10.0;
        for (col, f) in &texts {
            if f.nulls != Nulls::NonNull {
                plan.cost += ALLOCATE;
                plan.linear(15.0);
                plan.linear(5.0);
                if f.nulls == Nulls::Sparse {
                    plan.prefix_popcount(*col, f);
                    plan.linear(10.0);
                }
            }
            plan.linear(10.0);
        }
        plan.log_linear(20.0);
    }
    plan.cost += 10.0;
    for &(col, _) in order {
        plan.prefix_popcount(col, &facts(col));
        plan.linear(5.0);
    }
    plan.log_linear(10.0);
}

/// Copying the rows' indices out, with a slot per nullable column read.
fn output(plan: &mut Plan, cols_used: u64, columns: usize, facts: &dyn Fn(usize) -> ColumnFacts) {
    let nullable: Vec<(usize, ColumnFacts)> = (0..columns)
        .filter(|&c| cols_used & bit(c) != 0)
        .map(|c| (c, facts(c)))
        .filter(|(_, f)| f.nulls != Nulls::NonNull)
        .collect();
    plan.make_list();
    if nullable.is_empty() {
        return;
    }
    plan.cost += ALLOCATE;
    plan.linear(15.0);
    for (col, f) in &nullable {
        if f.nulls == Nulls::Sparse {
            plan.prefix_popcount(*col, f);
            plan.linear(10.0);
        } else {
            plan.linear(5.0);
        }
    }
}

/// What the model knows of column `col` of `table`: its storage and
/// NULLs by its kind (strings as upstream's, always nullable), sorted when
/// it is the id or the table's sorted column; `distinct` counts its
/// distinct values when an equality on it is estimated (None: not asked).
pub(crate) fn column_facts(
    table: &Table,
    col: usize,
    distinct: impl FnOnce() -> Option<usize>,
) -> ColumnFacts {
    let Some(c) = table.columns.get(col) else {
        return ColumnFacts {
            storage: Storage::Double,
            nulls: Nulls::Sparse,
            sorted: false,
            distinct: 0,
        };
    };
    if table.has_id && col == 0 {
        return ColumnFacts {
            storage: Storage::Id,
            nulls: Nulls::NonNull,
            sorted: true,
            distinct: 0,
        };
    }
    let storage = if c.is_text() {
        Storage::Text
    } else if c.is_int() {
        Storage::Int
    } else {
        Storage::Double
    };
    let nulls = match (c.nullable(), storage) {
        (false, _) => Nulls::NonNull,
        (true, Storage::Text) => Nulls::Dense,
        (true, _) => Nulls::Sparse,
    };
    // Upstream estimates no distinct count for doubles.
    let distinct = if storage == Storage::Double {
        0
    } else {
        distinct().unwrap_or(0) as u64
    };
    ColumnFacts {
        storage,
        nulls,
        sorted: table.sorted_by == Some(col),
        distinct,
    }
}

/// A constraint's operator as the model takes it (None: one it leaves to
/// SQLite, as upstream does).
pub(crate) fn filter_op(op: IndexConstraintOp) -> Option<FilterOp> {
    Some(match op {
        IndexConstraintOp::SQLITE_INDEX_CONSTRAINT_EQ => FilterOp::Eq,
        IndexConstraintOp::SQLITE_INDEX_CONSTRAINT_NE => FilterOp::Ne,
        IndexConstraintOp::SQLITE_INDEX_CONSTRAINT_LT
        | IndexConstraintOp::SQLITE_INDEX_CONSTRAINT_LE
        | IndexConstraintOp::SQLITE_INDEX_CONSTRAINT_GT
        | IndexConstraintOp::SQLITE_INDEX_CONSTRAINT_GE => FilterOp::Range,
        IndexConstraintOp::SQLITE_INDEX_CONSTRAINT_GLOB => FilterOp::Glob,
        IndexConstraintOp::SQLITE_INDEX_CONSTRAINT_ISNULL => FilterOp::IsNull,
        IndexConstraintOp::SQLITE_INDEX_CONSTRAINT_ISNOTNULL => FilterOp::IsNotNull,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(c: usize) -> ColumnFacts {
        match c {
            0 => ColumnFacts {
                storage: Storage::Id,
                nulls: Nulls::NonNull,
                sorted: true,
                distinct: 0,
            },
            1 => ColumnFacts {
                storage: Storage::Int,
                nulls: Nulls::NonNull,
                sorted: false,
                distinct: 4,
            },
            _ => ColumnFacts {
                storage: Storage::Text,
                nulls: Nulls::Dense,
                sorted: false,
                distinct: 2,
            },
        }
    }

    /// An id's equality is one row at a fixed cost, whatever the table's
    /// size; an equality on another column costs a pass over the rows and
    /// leaves the rows over its distinct values.
    #[test]
    fn an_ids_equality_is_one_row_and_another_a_pass() {
        let by_id = estimate(1000, &facts, &[(0, FilterOp::Eq)], &[], 1, 3);
        assert_eq!((by_id.rows, by_id.max_rows), (1, 1));
        let small = estimate(10, &facts, &[(0, FilterOp::Eq)], &[], 1, 3);
        assert_eq!(by_id.cost, small.cost);
        let by_key = estimate(1000, &facts, &[(1, FilterOp::Eq)], &[], 2, 3);
        assert_eq!((by_key.rows, by_key.max_rows), (250, 1000));
        assert!(by_key.cost > 7.0 * 1000.0);
        let scan = estimate(1000, &facts, &[], &[], 2, 3);
        assert_eq!(scan.rows, 1000);
    }

    /// Joining a table of few rows to one of more on the other's key: the
    /// few rows outside, probing the other by a pass each, cost less than
    /// the many rows outside probing by id, as upstream plans it; with
    /// many rows inside the probes by id win.
    #[test]
    fn the_smaller_side_goes_outside_while_passes_stay_cheap() {
        let join = |tracks: u64, samples: u64| {
            let outer_tracks = estimate(tracks, &facts, &[], &[], 1, 3);
            let probe_samples = estimate(samples, &facts, &[(1, FilterOp::Eq)], &[], 2, 3);
            let outer_samples = estimate(samples, &facts, &[], &[], 2, 3);
            let probe_tracks = estimate(tracks, &facts, &[(0, FilterOp::Eq)], &[], 1, 3);
            let tracks_first = outer_tracks.cost + outer_tracks.rows as f64 * probe_samples.cost;
            let samples_first = outer_samples.cost + outer_samples.rows as f64 * probe_tracks.cost;
            tracks_first < samples_first
        };
        assert!(join(4, 8));
        assert!(!join(100, 100_000));
    }

    /// A sorted column's range is a binary search; a string filter on a
    /// nullable column first drops the NULLs; an order by the id is free.
    #[test]
    fn sorted_ranges_search_and_orders_by_the_id_are_free() {
        let f = |c: usize| ColumnFacts {
            sorted: true,
            ..facts(c.min(1))
        };
        let searched = estimate(1 << 20, &f, &[(1, FilterOp::Range)], &[], 2, 2);
        let scanned = estimate(1 << 20, &facts, &[(1, FilterOp::Range)], &[], 2, 2);
        assert_eq!(searched.rows, scanned.rows);
        assert!(searched.cost < scanned.cost);
        let plain = estimate(1000, &facts, &[], &[], 1, 3);
        let ordered = estimate(1000, &facts, &[], &[(0, false)], 1, 3);
        assert_eq!(plain.cost, ordered.cost);
        let sorted_by_text = estimate(1000, &facts, &[], &[(2, false)], 1, 3);
        assert!(sorted_by_text.cost > plain.cost);
        let text = estimate(1000, &facts, &[(2, FilterOp::Eq)], &[], 1, 3);
        assert_eq!(text.rows, 250);
    }
}

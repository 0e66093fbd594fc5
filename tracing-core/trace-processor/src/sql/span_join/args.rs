//! What `CREATE VIRTUAL TABLE t USING SPAN_JOIN(a [PARTITIONED p], b
//! [PARTITIONED p])` asks for: each argument read as a table (or view)
//! and an optional partition column, checked against the sides' columns
//! as upstream checks them, and turned into the joined table's columns
//! (`ts`, `dur`, the partition when there is one, then every other
//! column of the left side and of the right side) and which shadows each
//! side must produce for an inner, left or outer join.

use super::error::SpanJoinError;
use super::side::Shadows;

/// Which span join a module makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JoinKind {
    /// `SPAN_JOIN`: only the time both sides cover.
    Inner,
    /// `SPAN_LEFT_JOIN`: all of the left side's time.
    Left,
    /// `SPAN_OUTER_JOIN`: the time either side covers.
    Outer,
}

/// How the two sides are partitioned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Partitioning {
    /// Neither side.
    None,
    /// Both, by the same column.
    Same,
    /// One side; the other applies to each of its partitions.
    Mixed,
}

/// One argument: a table or view and its partition column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Descriptor {
    /// The table as written (possibly a table function call `f(…)`).
    pub name: String,
    /// The column after `PARTITIONED`.
    pub partition: Option<String>,
}

/// Reads one argument: `name [PARTITIONED column]`.
pub(crate) fn parse_descriptor(raw: &str) -> Result<Descriptor, SpanJoinError> {
    let mut words = raw.split_whitespace();
    let name = words.next().ok_or(SpanJoinError::MissingTable)?.to_owned();
    let Some(keyword) = words.next() else {
        return Ok(Descriptor {
            name,
            partition: None,
        });
    };
    if !keyword.eq_ignore_ascii_case("PARTITIONED") {
        return Err(SpanJoinError::InvalidToken);
    }
    let partition = words
        .next()
        .ok_or(SpanJoinError::MissingPartition)?
        .to_owned();
    if words.next().is_some() {
        return Err(SpanJoinError::InvalidToken);
    }
    Ok(Descriptor {
        name,
        partition: Some(partition),
    })
}

impl Descriptor {
    /// The table or view whose columns `PRAGMA table_info` lists: the name
    /// before any call's arguments, unquoted.
    pub(crate) fn schema_name(&self) -> &str {
        let bare = self.name.split('(').next().unwrap_or(&self.name).trim();
        for (open, close) in [('"', '"'), ('`', '`'), ('[', ']'), ('\'', '\'')] {
            if let Some(inner) = bare.strip_prefix(open).and_then(|s| s.strip_suffix(close)) {
                return inner;
            }
        }
        bare
    }
}

/// A side's column as `PRAGMA table_info` lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Column {
    /// Its name.
    pub name: String,
    /// The type the joined table declares for it (None: no type).
    pub decl: Option<&'static str>,
}

impl Column {
    /// A column named `name` whose declared type is `raw`, mapped to the
    /// types upstream declares (integers as BIGINT, strings as TEXT);
    /// a type it does not know is left undeclared.
    pub(crate) fn new(name: &str, raw: &str) -> Column {
        let t = raw.trim().to_ascii_uppercase();
        let decl = match t.as_str() {
            "STRING" | "TEXT" => Some("TEXT"),
            "DOUBLE" => Some("DOUBLE"),
            "BIG INT" | "BIGINT" | "UNSIGNED INT" | "INT" | "BOOLEAN" | "INTEGER" => Some("BIGINT"),
            "BLOB" => Some("BLOB"),
            _ => None,
        };
        Column {
            name: name.to_owned(),
            decl,
        }
    }
}

/// One side, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SideSpec {
    /// The table as written, queried as `FROM name`.
    pub name: String,
    /// Its partition column.
    pub partition: Option<String>,
    /// Its columns, in its order.
    pub columns: Vec<Column>,
    /// Where `ts` is in `columns`.
    pub ts: usize,
    /// Where `dur` is (a side without one has spans of no duration).
    pub dur: Option<usize>,
    /// Where the partition column is.
    pub part: Option<usize>,
    /// The shadows it produces.
    pub shadows: Shadows,
}

/// Which side a column of the joined table comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Origin {
    /// The joined span's start.
    Ts,
    /// The joined span's duration.
    Dur,
    /// The partition.
    Partition,
    /// Column `i` of the left side.
    Left(usize),
    /// Column `i` of the right side.
    Right(usize),
}

/// A span join, checked: its sides and its columns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Spec {
    /// Inner, left or outer.
    pub kind: JoinKind,
    /// How the sides are partitioned.
    pub partitioning: Partitioning,
    /// The first argument.
    pub left: SideSpec,
    /// The second argument.
    pub right: SideSpec,
    /// For each column of the joined table, where it comes from.
    pub origins: Vec<Origin>,
    /// The joined table's `CREATE TABLE` for SQLite.
    pub schema: String,
}

/// Quotes a name for SQLite.
pub(crate) fn quote(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

impl Spec {
    /// Checks the two sides (`left_cols` and `right_cols` are their
    /// columns as SQLite lists them) and lays out the joined table.
    pub(crate) fn new(
        kind: JoinKind,
        left: Descriptor,
        left_cols: Vec<Column>,
        right: Descriptor,
        right_cols: Vec<Column>,
    ) -> Result<Spec, SpanJoinError> {
        let partitioning = match (&left.partition, &right.partition) {
            (None, None) => Partitioning::None,
            (Some(a), Some(b)) if a == b => Partitioning::Same,
            (Some(a), Some(b)) => {
                return Err(SpanJoinError::MismatchedPartitions(
                    a.clone(),
                    left.name.clone(),
                    b.clone(),
                    right.name.clone(),
                ));
            }
            _ => Partitioning::Mixed,
        };
        // Which shadows a side yields: none for an inner join's sides or
        // a left join's left side; the gaps between its spans for the
        // sides that must show where they have nothing, and also the
        // partitions it lacks entirely when both sides are partitioned.
        let shadows = |keeps_gaps: bool, partitioned: bool| {
            if !keeps_gaps {
                Shadows::None
            } else if partitioning == Partitioning::Same
                || (partitioning == Partitioning::Mixed && !partitioned)
            {
                Shadows::All
            } else {
                Shadows::Gaps
            }
        };
        let left_shadows = shadows(kind == JoinKind::Outer, left.partition.is_some());
        let right_shadows = shadows(kind != JoinKind::Inner, right.partition.is_some());
        let left = side(left, left_cols, left_shadows)?;
        let right = side(right, right_cols, right_shadows)?;
        if left.dur.is_none() && right.dur.is_none() {
            return Err(SpanJoinError::MissingDur(left.name, right.name));
        }
        let mut seen = std::collections::HashSet::new();
        let mut origins = vec![Origin::Ts, Origin::Dur];
        let mut decls = vec!["\"ts\" BIGINT".to_owned(), "\"dur\" BIGINT".to_owned()];
        let partition = left.partition.clone().or_else(|| right.partition.clone());
        if let Some(p) = &partition {
            origins.push(Origin::Partition);
            decls.push(format!("{} BIGINT", quote(p)));
        }
        for (s, is_left) in [(&left, true), (&right, false)] {
            for (i, c) in s.columns.iter().enumerate() {
                if c.name == "ts" || c.name == "dur" || Some(&c.name) == s.partition.as_ref() {
                    continue;
                }
                // The unpartitioned side's column named like the partition
                // would be a second column of that name.
                if Some(&c.name) == partition.as_ref() || !seen.insert(c.name.clone()) {
                    return Err(SpanJoinError::DuplicateColumn(
                        c.name.clone(),
                        left.name.clone(),
                        right.name.clone(),
                    ));
                }
                origins.push(if is_left {
                    Origin::Left(i)
                } else {
                    Origin::Right(i)
                });
                decls.push(match c.decl {
                    Some(t) => format!("{} {t}", quote(&c.name)),
                    None => quote(&c.name),
                });
            }
        }
        let schema = format!("CREATE TABLE x({})", decls.join(", "));
        Ok(Spec {
            kind,
            partitioning,
            left,
            right,
            origins,
            schema,
        })
    }
}

/// Checks one side's columns: exactly one `ts`, the partition column
/// present and neither `ts` nor `dur`.
fn side(d: Descriptor, columns: Vec<Column>, shadows: Shadows) -> Result<SideSpec, SpanJoinError> {
    if let Some(p) = &d.partition {
        if p == "ts" || p == "dur" {
            return Err(SpanJoinError::PartitionIsTime(d.name));
        }
    }
    if columns.is_empty() {
        return Err(SpanJoinError::UnknownTable(d.name));
    }
    let find = |n: &str| columns.iter().position(|c| c.name == n);
    if columns.iter().filter(|c| c.name == "ts").count() != 1 {
        return Err(SpanJoinError::MissingTs(d.name));
    }
    let ts = find("ts").ok_or_else(|| SpanJoinError::MissingTs(d.name.clone()))?;
    let dur = find("dur");
    let part = match &d.partition {
        Some(p) => Some(
            find(p)
                .ok_or_else(|| SpanJoinError::MissingPartitionColumn(p.clone(), d.name.clone()))?,
        ),
        None => None,
    };
    Ok(SideSpec {
        name: d.name,
        partition: d.partition,
        columns,
        ts,
        dur,
        part,
        shadows,
    })
}

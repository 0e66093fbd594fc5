//! Every table of the trace processor declared once: its SQL name, its
//! columns in Perfetto's order with their Rust types (which fix the SQL
//! type and nullability), the column it is sorted by and the public views
//! over it. From one declaration `table!` derives the row struct the
//! parsers fill, the table's [`TableDecl`] (what the SQL schema, the
//! Parquet schema and the docs listing are checked against), and, with the
//! `sql` feature, the freezing of the rows into a columnar `Table` whose
//! virtual table reports those columns. Before this, a table's columns
//! were spelled in four to six places that met only at run time.
//!
//! Why a declarative `macro_rules!` and not a proc-macro or the schema
//! pipeline (xtask codegen): the declaration stays Rust that the compiler
//! checks in place (a typo in a field is a compile error at the table, not
//! in generated text), it costs no extra crate or build step (a proc-macro
//! crate would add a `syn` build to every cold build of the workspace,
//! codegen a generated file to keep in sync), and the tables' needs are
//! regular enough: a column is either stored (a field of the row) or
//! derived from the row when freezing (`name: Type = |r| expr`).
//!
//! Groups of tables live one file per group, as upstream groups them in
//! its `tables/*.py`: [`core`] (slices, tracks, threads, processes,
//! counters, stats, ...), [`args`], [`sched`] and [`profiling`]; the
//! public views that project one table take their column lists from the
//! declarations in [`views`]. Every table the SQL sees is declared here;
//! the agreement test
//! (`sql/schema_agreement_tests.rs`) checks each against its SQL and Parquet
//! schemas.

pub mod android;
pub mod android_network;
pub mod args;
pub mod chrome;
pub mod core;
pub mod gpu;
pub mod heap_graph;
pub mod jit;
pub mod logs;
pub mod memory_snapshot;
pub mod opt_u32;
pub mod profiling;
pub mod proto_content;
pub mod sched;
pub mod thread_times;
pub mod trace_file;
pub mod v8;
pub mod views;
pub mod winscope;

#[cfg(feature = "sql")]
use std::sync::Arc;

use crate::column_store::strings::StrId;
#[cfg(feature = "sql")]
use crate::column_store::strings::StringPool;
#[cfg(feature = "sql")]
use crate::column_store::table::{Column, ColumnData, Nullable, NullableInts, Table};
use opt_u32::OptU32;

/// The SQL type of a column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SqlType {
    /// `BIGINT`: 64-bit signed integers (ids, counts, booleans).
    Int,
    /// `DOUBLE`.
    Real,
    /// `TEXT`, pooled strings.
    Text,
}

impl SqlType {
    /// The type the virtual table declares.
    pub const fn declared(self) -> &'static str {
        match self {
            SqlType::Int => "BIGINT",
            SqlType::Real => "DOUBLE",
            SqlType::Text => "TEXT",
        }
    }
}

/// One declared column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ColumnDecl {
    /// SQL name.
    pub name: &'static str,
    /// SQL type.
    pub ty: SqlType,
    /// Whether the column may hold NULL.
    pub nullable: bool,
    /// What the column holds (its doc comment).
    pub doc: &'static str,
}

/// One declared table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TableDecl {
    /// SQL name of the intrinsic table.
    pub name: &'static str,
    /// What the table holds (its doc comment).
    pub doc: &'static str,
    /// Columns in order; column 0 is `id`, the row index.
    pub columns: &'static [ColumnDecl],
    /// The column whose values ascend with the id, when they do (range
    /// constraints on it become a binary search).
    pub sorted_by: Option<&'static str>,
    /// The public views over the table (its place in the hierarchy:
    /// `track` and its kinds over `__intrinsic_track`, ...).
    pub views: &'static [&'static str],
}

/// Every declared table, group by group.
pub fn all() -> impl Iterator<Item = &'static TableDecl> {
    core::TABLES
        .iter()
        .chain(args::TABLES)
        .chain(sched::TABLES)
        .chain(profiling::TABLES)
        .chain(android::TABLES)
        .chain(chrome::TABLES)
        .chain(logs::TABLES)
        .chain(android_network::TABLES)
        .chain(heap_graph::TABLES)
        .chain(winscope::TABLES)
        .chain(trace_file::TABLES)
        .chain(gpu::TABLES)
        .chain(proto_content::TABLES)
        .chain(memory_snapshot::TABLES)
        .chain(v8::TABLES)
        .chain(jit::TABLES)
}

/// The docs listing of every declared table: its name, what it holds, the
/// views over it and each column with its SQL type and nullability, as
/// Markdown.
pub fn listing() -> String {
    let mut out = String::new();
    for t in all() {
        out.push_str(&format!("## `{}`\n\n{}\n\n", t.name, t.doc.trim()));
        if !t.views.is_empty() {
            let views: Vec<String> = t.views.iter().map(|v| format!("`{v}`")).collect();
            out.push_str(&format!("Views: {}.\n\n", views.join(", ")));
        }
        out.push_str("| column | type | null | |\n|---|---|---|---|\n");
        for c in t.columns {
            let null = if c.nullable { "yes" } else { "no" };
            out.push_str(&format!(
                "| `{}` | {} | {null} | {} |\n",
                c.name,
                c.ty.declared(),
                c.doc.trim()
            ));
        }
        out.push('\n');
    }
    out
}

/// The `id` column every table starts with.
pub const ID: ColumnDecl = ColumnDecl {
    name: "id",
    ty: SqlType::Int,
    nullable: false,
    doc: "The row's id, its index.",
};

/// A Rust type a column can be declared with: what SQL sees of it and how
/// a column of it is stored (as compactly as its values allow,
/// `column_store/table.rs`).
pub trait ColumnValue: Sized {
    /// SQL type.
    const TYPE: SqlType;
    /// Whether the type can be NULL.
    const NULLABLE: bool;
    /// The column of the values `values` gives, read straight from the
    /// rows (walked more than once, never collected into a vector of this
    /// type: the rows and the finished columns are all a table's freezing
    /// holds at once).
    #[cfg(feature = "sql")]
    fn column(name: &'static str, values: impl ExactSizeIterator<Item = Self> + Clone) -> Column;
}

/// A column of non-null integers stored as [`Column::int`] would store
/// them ([`ColumnData::ints`]: the row index, a narrower encoding, 32 bits
/// or 64), without the 64-bit vector first.
#[cfg(feature = "sql")]
fn int_column(name: &'static str, values: impl ExactSizeIterator<Item = i64> + Clone) -> Column {
    Column {
        name,
        sql_type: SqlType::Int.declared(),
        data: ColumnData::ints(values),
    }
}

macro_rules! int_value {
    ($($t:ty),*) => {$(
        impl ColumnValue for $t {
            const TYPE: SqlType = SqlType::Int;
            const NULLABLE: bool = false;
            #[cfg(feature = "sql")]
            fn column(
                name: &'static str,
                values: impl ExactSizeIterator<Item = Self> + Clone,
            ) -> Column {
                int_column(name, values.map(i64::from))
            }
        }
        impl ColumnValue for Option<$t> {
            const TYPE: SqlType = SqlType::Int;
            const NULLABLE: bool = true;
            #[cfg(feature = "sql")]
            fn column(
                name: &'static str,
                values: impl ExactSizeIterator<Item = Self> + Clone,
            ) -> Column {
                Column {
                    name,
                    sql_type: SqlType::Int.declared(),
                    data: ColumnData::OptInt(NullableInts::pack_iter(
                        values.map(|v| v.map(i64::from)),
                    )),
                }
            }
        }
    )*};
}
int_value!(i64, i32, u32, bool);

impl ColumnValue for OptU32 {
    const TYPE: SqlType = SqlType::Int;
    const NULLABLE: bool = true;
    #[cfg(feature = "sql")]
    fn column(name: &'static str, values: impl ExactSizeIterator<Item = Self> + Clone) -> Column {
        <Option<u32>>::column(name, values.map(OptU32::get))
    }
}

impl ColumnValue for f64 {
    const TYPE: SqlType = SqlType::Real;
    const NULLABLE: bool = false;
    #[cfg(feature = "sql")]
    fn column(name: &'static str, values: impl ExactSizeIterator<Item = Self> + Clone) -> Column {
        Column::real(name, values.collect())
    }
}

impl ColumnValue for Option<f64> {
    const TYPE: SqlType = SqlType::Real;
    const NULLABLE: bool = true;
    #[cfg(feature = "sql")]
    fn column(name: &'static str, values: impl ExactSizeIterator<Item = Self> + Clone) -> Column {
        Column {
            name,
            sql_type: SqlType::Real.declared(),
            data: ColumnData::OptReal(Nullable::pack_iter(values, |x| x)),
        }
    }
}

impl ColumnValue for StrId {
    const TYPE: SqlType = SqlType::Text;
    const NULLABLE: bool = true;
    #[cfg(feature = "sql")]
    fn column(name: &'static str, values: impl ExactSizeIterator<Item = Self> + Clone) -> Column {
        Column {
            name,
            sql_type: SqlType::Text.declared(),
            data: ColumnData::strs_iter(values),
        }
    }
}

/// Freezes declared columns into a `Table` (`column_store/table.rs`): the `id` column, then
/// `columns`, sorted by `decl.sorted_by` when its values ascend.
#[cfg(feature = "sql")]
pub fn freeze(
    decl: &TableDecl,
    len: usize,
    columns: Vec<Column>,
    strings: &Arc<StringPool>,
) -> Table {
    let mut all = Vec::with_capacity(columns.len() + 1);
    all.push(Column {
        name: ID.name,
        sql_type: ID.ty.declared(),
        data: ColumnData::RowIndex(len),
    });
    all.extend(columns);
    let sorted_by = decl.sorted_by.and_then(|s| {
        all.iter()
            .position(|c| c.name == s)
            .filter(|&i| all.get(i).is_some_and(Column::ascends))
    });
    Table {
        name: decl.name,
        columns: all,
        len,
        has_id: true,
        sorted_by,
        strings: strings.clone(),
        orders: Default::default(),
    }
}

/// Declares one table: its row struct and its [`TableDecl`] as
/// `Row::TABLE`, and (with `sql`) `Row::freeze(&rows, &strings)`.
///
/// ```text
/// table! {
///     /// A row of `counter`.
///     pub struct CounterRow in "__intrinsic_counter" sorted by ts, views ["counter"] {
///         /// Time.
///         ts: i64,
///         /// Value.
///         value: f64,
///         /// Not stored: computed from the row when the table freezes.
///         machine_id: Option<u32> = |_| None,
///     }
/// }
/// ```
///
/// A `#[derive(...)]` after the doc adds derives to the row's (`Debug,
/// Clone, Default`). Every column ends with a comma; `field as "type": StrId,` names a
/// column whose SQL name is no Rust field name. A column's SQL type and nullability
/// follow from its Rust type ([`ColumnValue`]); `id` is implicit. A derived
/// column written `|r, strings| expr` also reads the string pool (for text
/// interned before the tables freeze), and `field name: Type,` is a field
/// of the row that is no column (the columns derived from it are).
macro_rules! table {
    (
        $(#[doc = $doc:literal])*
        $(#[derive($($extra:ident),* $(,)?)])?
        pub struct $row:ident in $sql:literal
            $(sorted by $sorted:ident)? $(, views [$($view:literal),* $(,)?])? {
            $($cols:tt)*
        }
    ) => {
        $crate::tables::table!(@munch
            [[$($doc)*] [$($($extra)*)?] $row $sql [$($sorted)?] [$($($view)*)?]]
            [] []
            $($cols)*
        );
    };
    // A field of the row that is no column (derived columns read it).
    (@munch $h:tt [$($f:tt)*] [$($c:tt)*]
        $(#[doc = $cdoc:literal])* field $name:ident : $ty:ty , $($rest:tt)*
    ) => {
        $crate::tables::table!(@munch $h
            [$($f)* $(#[doc = $cdoc])* pub $name: $ty,]
            [$($c)*]
            $($rest)*);
    };
    // A derived column that reads the string pool (strings interned
    // before the tables freeze).
    (@munch $h:tt [$($f:tt)*] [$($c:tt)*]
        $(#[doc = $cdoc:literal])* $name:ident $(as $sqln:literal)? : $ty:ty =
            |$r:pat_param, $s:pat_param| $body:expr ,
        $($rest:tt)*
    ) => {
        $crate::tables::table!(@munch $h [$($f)*]
            [$($c)* [[$($cdoc)*] $name [$($sqln)?] [$ty] [pool |$r, $s| $body]]]
            $($rest)*);
    };
    // A derived column: not stored, computed from the row when freezing.
    (@munch $h:tt [$($f:tt)*] [$($c:tt)*]
        $(#[doc = $cdoc:literal])* $name:ident $(as $sqln:literal)? : $ty:ty = $derive:expr ,
        $($rest:tt)*
    ) => {
        $crate::tables::table!(@munch $h [$($f)*]
            [$($c)* [[$($cdoc)*] $name [$($sqln)?] [$ty] [row $derive]]]
            $($rest)*);
    };
    // A stored column: a field of the row.
    (@munch $h:tt [$($f:tt)*] [$($c:tt)*]
        $(#[doc = $cdoc:literal])* $name:ident $(as $sqln:literal)? : $ty:ty , $($rest:tt)*
    ) => {
        $crate::tables::table!(@munch $h
            [$($f)* $(#[doc = $cdoc])* pub $name: $ty,]
            [$($c)* [[$($cdoc)*] $name [$($sqln)?] [$ty] []]]
            $($rest)*);
    };
    (@munch [[$($doc:literal)*] [$($extra:ident)*] $row:ident $sql:literal [$($sorted:ident)?] [$($view:literal)*]]
        [$($f:tt)*]
        [$([[$($cdoc:literal)*] $name:ident [$($sqln:literal)?] [$ty:ty] [$($how:ident $derive:expr)?]])*]
    ) => {
        $(#[doc = $doc])*
        #[derive(Debug, Clone, Default $(, $extra)*)]
        pub struct $row {
            $($f)*
        }

        impl $row {
            /// The table's declaration.
            pub const TABLE: $crate::tables::TableDecl = $crate::tables::TableDecl {
                name: $sql,
                doc: concat!($($doc),*),
                columns: &[
                    $crate::tables::ID,
                    $($crate::tables::ColumnDecl {
                        name: $crate::tables::table!(@name $name $($sqln)?),
                        ty: <$ty as $crate::tables::ColumnValue>::TYPE,
                        nullable: <$ty as $crate::tables::ColumnValue>::NULLABLE,
                        doc: concat!($($cdoc),*),
                    },)*
                ],
                sorted_by: $crate::tables::table!(@sorted $($sorted)?),
                views: &[$($view),*],
            };

            /// The frozen table of `rows`.
            #[cfg(feature = "sql")]
            pub fn freeze(
                rows: &[Self],
                strings: &std::sync::Arc<$crate::column_store::strings::StringPool>,
            ) -> $crate::column_store::table::Table {
                Self::freeze_iter(rows.iter(), strings)
            }

            /// The frozen table of the rows `rows` gives (walked once per
            /// column or more): for a table whose storage keeps its rows
            /// in another form and makes them as they are walked.
            #[cfg(feature = "sql")]
            pub fn freeze_iter<B: std::borrow::Borrow<Self>>(
                rows: impl ExactSizeIterator<Item = B> + Clone,
                strings: &std::sync::Arc<$crate::column_store::strings::StringPool>,
            ) -> $crate::column_store::table::Table {
                let len = rows.len();
                let columns = vec![$(
                    <$ty as $crate::tables::ColumnValue>::column(
                        $crate::tables::table!(@name $name $($sqln)?),
                        rows.clone()
                            .map(|b| {
                                let r: &Self = b.borrow();
                                $crate::tables::table!(
                                    @get $row r strings $name [$ty] [$($how $derive)?]
                                )
                            }),
                    ),
                )*];
                $crate::tables::freeze(&Self::TABLE, len, columns, strings)
            }
        }
    };
    (@name $name:ident) => { stringify!($name) };
    (@name $name:ident $sqln:literal) => { $sqln };
    (@sorted) => { None };
    (@sorted $s:ident) => { Some(stringify!($s)) };
    (@get $row:ident $r:ident $s:ident $name:ident [$ty:ty] []) => { $r.$name };
    (@get $row:ident $r:ident $s:ident $name:ident [$ty:ty] [row $derive:expr]) => {{
        let derive: fn(&$row) -> $ty = $derive;
        derive($r)
    }};
    (@get $row:ident $r:ident $s:ident $name:ident [$ty:ty] [pool $derive:expr]) => {{
        let derive: fn(&$row, &$crate::column_store::strings::StringPool) -> $ty = $derive;
        derive($r, $s)
    }};
}
pub(crate) use table;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_listing_names_every_table_and_column_once_per_table() {
        let listing = listing();
        let mut names = std::collections::HashSet::new();
        for t in all() {
            assert!(names.insert(t.name), "{} declared twice", t.name);
            assert!(listing.contains(&format!("## `{}`", t.name)));
            let mut cols = std::collections::HashSet::new();
            for c in t.columns {
                assert!(cols.insert(c.name), "{}.{} declared twice", t.name, c.name);
            }
        }
        assert!(listing.contains("| `thread_ts` | BIGINT | yes |"));
        assert!(listing.contains("| `ts` | BIGINT | no |"));
    }
}

//! The check that each table is one thing: for every table the engine
//! holds, its declaration (`tables/`, where every table is declared), the
//! SQL schema its virtual table declares (`pragma_table_info`: names,
//! order, types, `NOT NULL`) and the schema of its Parquet file (names,
//! order, types, nullability) agree.

use crate::TraceProcessor;
use crate::tables::{self, SqlType};

/// One column as each side sees it: name, declared SQL type, nullable.
type Shape = Vec<(String, &'static str, bool)>;

fn declared_type(t: &str) -> &'static str {
    [SqlType::Int, SqlType::Real, SqlType::Text]
        .into_iter()
        .map(SqlType::declared)
        .find(|d| d.eq_ignore_ascii_case(t))
        .unwrap_or("?")
}

/// Each engine table's declared shape: every table the engine holds is
/// declared in `tables/` (`args` and `stats` too).
fn declared(tp: &TraceProcessor) -> Vec<(&'static str, Shape)> {
    let mut out = Vec::new();
    for stored in &tp.engine.storage {
        let d = tables::all()
            .find(|d| d.name == stored.name)
            .unwrap_or_else(|| panic!("{} is not declared in tables/", stored.name));
        let shape = d
            .columns
            .iter()
            .map(|c| (c.name.to_owned(), c.ty.declared(), c.nullable))
            .collect();
        out.push((stored.name, shape));
    }
    out
}

/// What SQL sees of table `name`.
fn sql_shape(tp: &TraceProcessor, name: &str) -> Shape {
    tp.columns(name)
        .unwrap()
        .unwrap_or_default()
        .into_iter()
        .map(|c| (c.name, declared_type(&c.sql_type), !c.not_null))
        .collect()
}

#[cfg(feature = "parquet")]
fn parquet_shapes(tp: &TraceProcessor) -> Vec<(String, Shape)> {
    use arrow_schema::DataType;
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    let dir = std::env::temp_dir().join(format!("zt-schema-agree-{}", std::process::id()));
    let options = crate::parquet_export::ExportOptions {
        internal: true,
        ..Default::default()
    };
    tp.export_parquet(&dir, "t", &options).unwrap();
    let mut out = Vec::new();
    for stored in &tp.engine.storage {
        let path =
            crate::parquet_export::partition_dir(&dir, stored.name, "t").join("part-0.parquet");
        let file = std::fs::File::open(&path).unwrap();
        let schema = ParquetRecordBatchReaderBuilder::try_new(file)
            .unwrap()
            .schema()
            .clone();
        let shape = schema
            .fields()
            .iter()
            .map(|f| {
                let ty = match f.data_type() {
                    DataType::Int64 => SqlType::Int.declared(),
                    DataType::Float64 => SqlType::Real.declared(),
                    DataType::Utf8 => SqlType::Text.declared(),
                    _ => "?",
                };
                (f.name().clone(), ty, f.is_nullable())
            })
            .collect();
        out.push((stored.name.to_owned(), shape));
    }
    std::fs::remove_dir_all(&dir).unwrap();
    out
}

#[test]
fn every_tables_declaration_sql_schema_and_parquet_schema_agree() {
    let tp = TraceProcessor::from_bytes(&[]).unwrap();
    let declared = declared(&tp);
    for (name, shape) in &declared {
        assert!(!shape.is_empty(), "{name} has no columns");
        assert_eq!(
            &sql_shape(&tp, name),
            shape,
            "{name}: the SQL schema is not the declaration"
        );
    }
    #[cfg(feature = "parquet")]
    {
        let parquet = parquet_shapes(&tp);
        assert_eq!(parquet.len(), declared.len());
        for ((name, shape), (pname, pshape)) in declared.iter().zip(&parquet) {
            assert_eq!(name, pname);
            assert_eq!(
                pshape, shape,
                "{name}: the Parquet schema is not the declaration"
            );
        }
    }
    // Every declared table is in the engine, and the views over it exist.
    for d in tables::all() {
        assert!(
            declared.iter().any(|(n, _)| *n == d.name),
            "{} is declared but not built",
            d.name
        );
        for v in d.views {
            assert!(tp.columns(v).unwrap().is_some(), "{}: no view {v}", d.name);
        }
    }
    // args and stats, once built by hand, are declared like the others.
    for name in ["__intrinsic_args", "__intrinsic_stats"] {
        assert!(declared.iter().any(|(n, _)| *n == name), "no table {name}");
    }
}

/// Every view that projects one table (`tables/views.rs`) shows in SQL
/// exactly the columns its declaration gives it: its own items, and every
/// declared column of its table it does not leave out.
#[test]
fn every_projected_views_columns_follow_its_tables_declaration() {
    let tp = TraceProcessor::from_bytes(&[]).unwrap();
    for p in tables::views::PROJECTIONS {
        let sql: Vec<String> = sql_shape(&tp, p.name).into_iter().map(|c| c.0).collect();
        let items: Vec<&str> = p
            .items()
            .into_iter()
            .map(|i| i.rsplit(" AS ").next().unwrap_or(i))
            .collect();
        assert_eq!(sql, items, "{}: its columns", p.name);
        for c in p.table.columns {
            assert!(
                p.leave_out.contains(&c.name) || sql.iter().any(|s| s == c.name),
                "{}: {}.{} is missing",
                p.name,
                p.table.name,
                c.name
            );
        }
    }
}

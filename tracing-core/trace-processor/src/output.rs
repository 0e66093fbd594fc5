//! Printing a result as `trace_processor_shell` prints it for `-q`/`-Q`:
//! a header of quoted column names, then one line per row, integers as
//! `%lld`, doubles as C's `%f`, strings quoted without escaping, NULL as
//! `"[NULL]"` and bytes as `"<raw bytes>"`, fields joined by commas.

use crate::sql::{QueryResult, Value};

/// A double as C's `%f` prints it.
pub fn c_double(v: f64) -> String {
    if v.is_nan() {
        if v.is_sign_negative() {
            "-nan".into()
        } else {
            "nan".into()
        }
    } else if v.is_infinite() {
        if v < 0.0 { "-inf".into() } else { "inf".into() }
    } else {
        format!("{v:.6}")
    }
}

/// One cell as the shell prints it.
pub fn shell_cell(v: &Value) -> String {
    match v {
        Value::Null => "\"[NULL]\"".into(),
        Value::Int(i) => i.to_string(),
        Value::Real(r) => c_double(*r),
        Value::Text(s) => format!("\"{s}\""),
        Value::Blob(_) => "\"<raw bytes>\"".into(),
    }
}

/// The whole result in the shell's CSV form, one line per row, each
/// ending in a newline.
pub fn shell_csv(r: &QueryResult) -> String {
    let mut out = String::new();
    let header: Vec<String> = r.columns.iter().map(|c| format!("\"{c}\"")).collect();
    out.push_str(&header.join(","));
    out.push('\n');
    for row in &r.rows {
        let cells: Vec<String> = row.iter().map(shell_cell).collect();
        out.push_str(&cells.join(","));
        out.push('\n');
    }
    out
}

/// Several results as the shell prints a query of several statements:
/// each in [`shell_csv`]'s form, one blank line between two.
pub fn shell_csv_all(results: &[QueryResult]) -> String {
    results.iter().map(shell_csv).collect::<Vec<_>>().join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_like_the_shell() {
        let r = QueryResult {
            columns: vec!["a".into(), "b".into()],
            rows: vec![
                vec![Value::Int(-3), Value::Real(0.5)],
                vec![Value::Null, Value::Text("x".into())],
            ],
        };
        assert_eq!(
            shell_csv(&r),
            "\"a\",\"b\"\n-3,0.500000\n\"[NULL]\",\"x\"\n"
        );
        assert_eq!(c_double(f64::INFINITY), "inf");
        assert_eq!(c_double(1e20), "100000000000000000000.000000");
    }

    #[test]
    #[cfg(feature = "sql")]
    fn every_statement_with_output_is_printed_as_the_shell_prints_it() {
        let tp = crate::TraceProcessor::from_storage(crate::storage::Storage::default())
            .expect("engine");
        let r = tp
            .query_outputs(
                "CREATE PERFETTO TABLE foo AS SELECT 42 AS x;\n\
                 SELECT x FROM foo;\n\
                 CREATE TABLE plain(y);\n\
                 SELECT 1 AS suppress_query_output;\n\
                 SELECT CREATE_FUNCTION('f(x INT)', 'INT', 'SELECT $x');\n\
                 SELECT f(7) AS y WHERE 0;\n\
                 SELECT f(43) AS y;",
            )
            .expect("query");
        assert_eq!(shell_csv_all(&r), "\"x\"\n42\n\n\"y\"\n\n\"y\"\n43\n");
    }
}

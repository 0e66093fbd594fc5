//! How `zerotrace sql` prints a result: `csv`, byte for byte what
//! Perfetto's `trace_processor_shell` prints for `-q`/`-Q`; `table`,
//! aligned columns for a person; `json`, one object per row with typed
//! values, for programs.
//!
//! The JSON shape (stable): an array holding one object per row, its keys
//! the column names in the result's order and its values typed: an
//! integer is a JSON integer (all 64 bits, unrounded), a double a JSON
//! number (non-finite ones as the strings `"NaN"`, `"Infinity"`,
//! `"-Infinity"`), text a string, NULL `null`, and bytes an object
//! `{"base64": "..."}` (standard alphabet, padded). One row per line, the
//! array's brackets on their own lines; no rows is `[]`. Two columns of the
//! same name are both written, in order, as SQLite names them (as the
//! `sqlite3` shell's `.mode json` does).

use base64::Engine as _;
use zerotrace_trace_processor::{QueryResult, Value, c_double, shell_csv};

/// A way of printing results.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Aligned columns, a header and a rule.
    Table,
    /// trace_processor_shell's CSV: quoted names and strings, `%f` doubles.
    Csv,
    /// An array of objects, one per row, with typed values.
    Json,
}

impl Format {
    /// The format named `name` (as `--format` and `.format` spell it).
    pub fn parse(name: &str) -> Option<Format> {
        match name {
            "table" => Some(Format::Table),
            "csv" => Some(Format::Csv),
            "json" => Some(Format::Json),
            _ => None,
        }
    }

    /// Its name.
    pub fn name(self) -> &'static str {
        match self {
            Format::Table => "table",
            Format::Csv => "csv",
            Format::Json => "json",
        }
    }
}

/// `r` printed in `format`, each line ending in a newline. A result with
/// no columns (a statement that returns no rows, such as `CREATE VIEW`)
/// prints nothing in `table` form.
pub fn render(r: &QueryResult, format: Format) -> String {
    match format {
        Format::Csv => shell_csv(r),
        Format::Table => table(r),
        Format::Json => json(r),
    }
}

/// `s` with its control characters escaped (`\n`, `\t`, `\u{1b}`), so
/// that a row stays one line and a terminal reads no escape sequence.
fn escape_controls(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// One cell as the table shows it.
fn table_cell(v: &Value) -> String {
    match v {
        Value::Null => "[NULL]".into(),
        Value::Int(i) => i.to_string(),
        Value::Real(r) => c_double(*r),
        Value::Text(s) => escape_controls(s),
        Value::Blob(b) => format!("<{} bytes>", b.len()),
    }
}

fn table(r: &QueryResult) -> String {
    if r.columns.is_empty() {
        return String::new();
    }
    let header: Vec<String> = r.columns.iter().map(|c| escape_controls(c)).collect();
    let cells: Vec<Vec<String>> = r
        .rows
        .iter()
        .map(|row| row.iter().map(table_cell).collect())
        .collect();
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in &cells {
        for (w, c) in widths.iter_mut().zip(row) {
            *w = (*w).max(c.chars().count());
        }
    }
    // A column of numbers (and NULLs) is aligned right, header included.
    let right: Vec<bool> = (0..r.columns.len())
        .map(|i| {
            let mut values = r.rows.iter().filter_map(|row| row.get(i));
            let mut any = false;
            let numeric = values.all(|v| {
                any |= !matches!(v, Value::Null);
                matches!(v, Value::Int(_) | Value::Real(_) | Value::Null)
            });
            numeric && any
        })
        .collect();
    let mut out = String::new();
    let line = |out: &mut String, items: &[String], align: bool| {
        let mut l = String::new();
        for (i, (text, w)) in items.iter().zip(&widths).enumerate() {
            if i > 0 {
                l.push_str("  ");
            }
            let pad = w.saturating_sub(text.chars().count());
            if align && right[i] {
                l.extend(std::iter::repeat_n(' ', pad));
                l.push_str(text);
            } else {
                l.push_str(text);
                l.extend(std::iter::repeat_n(' ', pad));
            }
        }
        out.push_str(l.trim_end());
        out.push('\n');
    };
    line(&mut out, &header, true);
    let rule: Vec<String> = widths.iter().map(|&w| "-".repeat(w)).collect();
    line(&mut out, &rule, false);
    for row in &cells {
        line(&mut out, row, true);
    }
    out
}

/// A JSON string literal.
fn json_string(s: &str) -> String {
    serde_json::Value::String(s.to_owned()).to_string()
}

fn json_value(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Int(i) => i.to_string(),
        Value::Real(r) => match serde_json::Number::from_f64(*r) {
            Some(n) => n.to_string(),
            None if r.is_nan() => "\"NaN\"".into(),
            None if *r > 0.0 => "\"Infinity\"".into(),
            None => "\"-Infinity\"".into(),
        },
        Value::Text(s) => json_string(s),
        Value::Blob(b) => format!(
            "{{\"base64\":{}}}",
            json_string(&base64::engine::general_purpose::STANDARD.encode(b))
        ),
    }
}

fn json(r: &QueryResult) -> String {
    if r.rows.is_empty() {
        return "[]\n".into();
    }
    let keys: Vec<String> = r.columns.iter().map(|c| json_string(c)).collect();
    let mut out = String::from("[\n");
    for (i, row) in r.rows.iter().enumerate() {
        out.push('{');
        for (j, (k, v)) in keys.iter().zip(row).enumerate() {
            if j > 0 {
                out.push(',');
            }
            out.push_str(k);
            out.push(':');
            out.push_str(&json_value(v));
        }
        out.push('}');
        if i + 1 < r.rows.len() {
            out.push(',');
        }
        out.push('\n');
    }
    out.push_str("]\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result() -> QueryResult {
        QueryResult {
            columns: vec!["name".into(), "n".into(), "x".into()],
            rows: vec![
                vec![
                    Value::Text("a\"b\n".into()),
                    Value::Int(i64::MIN),
                    Value::Real(0.5),
                ],
                vec![Value::Null, Value::Int(7), Value::Blob(vec![0, 0xff, 1])],
                vec![
                    Value::Text("é".into()),
                    Value::Real(f64::NAN),
                    Value::Real(-f64::INFINITY),
                ],
            ],
        }
    }

    #[test]
    fn csv_is_the_shells() {
        assert_eq!(render(&result(), Format::Csv), shell_csv(&result()));
    }

    #[test]
    fn table_aligns_columns_and_numbers_right() {
        let t = render(&result(), Format::Table);
        assert_eq!(
            t,
            "name                       n  x\n\
             ------  --------------------  ---------\n\
             a\"b\\n   -9223372036854775808  0.500000\n\
             [NULL]                     7  <3 bytes>\n\
             é                        nan  -inf\n"
        );
        assert_eq!(render(&QueryResult::default(), Format::Table), "");
    }

    #[test]
    fn json_values_are_typed() {
        let j = render(&result(), Format::Json);
        assert_eq!(
            j,
            "[\n\
             {\"name\":\"a\\\"b\\n\",\"n\":-9223372036854775808,\"x\":0.5},\n\
             {\"name\":null,\"n\":7,\"x\":{\"base64\":\"AP8B\"}},\n\
             {\"name\":\"é\",\"n\":\"NaN\",\"x\":\"-Infinity\"}\n\
             ]\n"
        );
        let parsed: serde_json::Value = serde_json::from_str(&j).unwrap();
        assert_eq!(parsed[0]["n"].as_i64(), Some(i64::MIN));
        assert_eq!(render(&QueryResult::default(), Format::Json), "[]\n");
    }
}

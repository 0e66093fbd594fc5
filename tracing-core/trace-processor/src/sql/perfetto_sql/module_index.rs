//! The module index: what each module `INCLUDE` can name (ours and the
//! users' packages) would create, read from its text with the statement
//! parser (`CREATE PERFETTO TABLE|VIEW|FUNCTION|MACRO` names, their
//! columns and arguments, and the `--` comment above each as its
//! description), queryable as the table `__intrinsic_stdlib_objects`
//! under upstream's name and columns: one `MODULE` row per module, then
//! one row per object. `zerotrace sql`'s `.modules` reads it.

use std::ffi::c_int;
use std::sync::{Arc, OnceLock};

use rusqlite::Connection;
use rusqlite::vtab::{
    Context, Filters, IndexInfo, VTab, VTabConfig, VTabConnection, VTabCursor,
    eponymous_only_module,
};

use super::modules::Module;
use super::packages::{UserPackages, snapshot};
use super::statement::{self, Parsed, Returns};
use super::tokens;

/// The table's name.
pub(crate) const TABLE: &str = "__intrinsic_stdlib_objects";

/// The table's columns (upstream's), all text but `exposed`.
const COLUMNS: [&str; 13] = [
    "package",
    "module",
    "name",
    "qualified_name",
    "object_type",
    "exposed",
    "short_description",
    "summary",
    "description",
    "return_type",
    "return_description",
    "args",
    "cols",
];

/// The index of column `exposed`, the one integer column.
const EXPOSED: usize = 5;

/// One row: the values of [`COLUMNS`] (`exposed` as "0"/"1").
type Row = [String; 13];

/// One object a module creates.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Object {
    /// `TABLE`, `VIEW`, `FUNCTION`, `TABLE_FUNCTION` or `MACRO`.
    kind: &'static str,
    name: String,
    description: String,
    return_type: String,
    /// (name, type) of each argument.
    args: Vec<(String, String)>,
    /// (name, type) of each column.
    cols: Vec<(String, String)>,
}

/// The objects module text `sql` creates, in order; a statement that
/// does not parse is left out (including the module reports it).
fn objects(sql: &str) -> Vec<Object> {
    let Ok(toks) = tokens::tokenize(sql) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut prev_end = 0;
    for stmt in tokens::statements(sql, &toks) {
        let description = comment_before(sql.get(prev_end..stmt.start).unwrap_or_default());
        prev_end = stmt.end;
        let pairs = |ps: &[statement::Param]| -> Vec<(String, String)> {
            ps.iter().map(|p| (p.name.clone(), p.ty.clone())).collect()
        };
        let object = match statement::parse(sql, &stmt) {
            Ok(Parsed::CreateRelation {
                table,
                name,
                schema,
                ..
            }) => Object {
                kind: if table { "TABLE" } else { "VIEW" },
                name,
                description,
                return_type: String::new(),
                args: Vec::new(),
                cols: schema.as_deref().map(pairs).unwrap_or_default(),
            },
            Ok(Parsed::CreateFunction {
                name,
                args,
                returns,
                return_name,
                ..
            }) => {
                let args = args
                    .iter()
                    .map(|(p, _)| (p.name.clone(), p.ty.clone()))
                    .collect();
                match returns {
                    Returns::Scalar(_) => Object {
                        kind: "FUNCTION",
                        name,
                        description,
                        return_type: return_name,
                        args,
                        cols: Vec::new(),
                    },
                    Returns::Table(cols) => Object {
                        kind: "TABLE_FUNCTION",
                        name,
                        description,
                        return_type: "TABLE".to_owned(),
                        args,
                        cols: pairs(&cols),
                    },
                }
            }
            Ok(Parsed::CreateMacro {
                name,
                params,
                param_types,
                returns,
                ..
            }) => Object {
                kind: "MACRO",
                name,
                description,
                return_type: returns,
                args: params.into_iter().zip(param_types).collect(),
                cols: Vec::new(),
            },
            _ => continue,
        };
        out.push(object);
    }
    // Upstream lists a module's tables and views, then its functions,
    // then its macros, each in the text's order.
    out.sort_by_key(|o| match o.kind {
        "TABLE" | "VIEW" => 0,
        "MACRO" => 2,
        _ => 1,
    });
    out
}

/// The block of `--` comment lines that ends `gap` (the text between two
/// statements), each line without its `--` and trimmed, the non-empty
/// ones joined with spaces, as upstream's index reads a description.
fn comment_before(gap: &str) -> String {
    let mut lines: Vec<&str> = Vec::new();
    let mut seen = false;
    for line in gap.lines().rev() {
        let line = line.trim();
        if line.is_empty() && !seen {
            continue;
        }
        match line.strip_prefix("--") {
            Some(c) => {
                seen = true;
                let c = c.trim();
                if !c.is_empty() {
                    lines.push(c);
                }
            }
            None => break,
        }
    }
    lines.reverse();
    lines.join(" ")
}

/// The first 160 bytes of `description` (cut on a character boundary), as
/// upstream's short description.
fn short_description(description: &str) -> &str {
    let mut end = description.len().min(160);
    while !description.is_char_boundary(end) {
        end -= 1;
    }
    description.get(..end).unwrap_or_default()
}

/// The words a search for the object finds it by: package, module and
/// name with dots and underscores as spaces (the name left out when it is
/// the module's).
fn search_aliases(package: &str, module: &str, name: &str) -> String {
    let mut s = format!("{package} {module}");
    if !name.is_empty() && name != module {
        s.push(' ');
        s.push_str(name);
    }
    s.replace(['.', '_'], " ")
}

/// One object's summary, as upstream's index writes it: a line per
/// fact, then its arguments, return type and columns.
fn summary(package: &str, key: &str, kind: &str, exposed: bool, o: Option<&Object>) -> String {
    let name = o.map_or(key, |o| o.name.as_str());
    let qualified = if kind == "MODULE" {
        key.to_owned()
    } else {
        format!("{key}.{name}")
    };
    let mut s = format!("Package: {package}\nModule: {key}");
    if kind != "MODULE" {
        s.push_str(&format!("\nName: {name}"));
    }
    s.push_str(&format!(
        "\nQualified name: {qualified}\nSearch aliases: {}\nKind: {} {kind}",
        search_aliases(package, key, name),
        if exposed { "public" } else { "internal" }
    ));
    let Some(o) = o else {
        return s;
    };
    if !o.description.is_empty() {
        s.push_str(&format!("\nDescription: {}", o.description));
    }
    let list = |s: &mut String, heading: &str, entries: &[(String, String)]| {
        if entries.is_empty() {
            return;
        }
        s.push_str(&format!("\n{heading}:"));
        for (n, t) in entries {
            s.push_str(&format!("\n- {n} ({t})"));
        }
    };
    list(&mut s, "Arguments", &o.args);
    if !o.return_type.is_empty() {
        s.push_str(&format!("\nReturns: {}", o.return_type));
    }
    list(&mut s, "Columns", &o.cols);
    s
}

/// `[{"name": …, "type": …, "description": ""}, …]`.
fn entries(pairs: &[(String, String)]) -> String {
    let list: Vec<serde_json::Value> = pairs
        .iter()
        .map(|(n, t)| serde_json::json!({"name": n, "type": t, "description": ""}))
        .collect();
    serde_json::Value::Array(list).to_string()
}

/// The rows of module `key` of package `package`, text `sql`.
fn module_rows(package: &str, key: &str, sql: &str, out: &mut Vec<Row>) {
    let row = |name: &str, kind: &str, exposed: bool, o: Option<&Object>| -> Row {
        let description = o.map(|o| o.description.as_str()).unwrap_or_default();
        let short = short_description(description).to_owned();
        let qualified = if kind == "MODULE" {
            key.to_owned()
        } else {
            format!("{key}.{name}")
        };
        let summary = summary(package, key, kind, exposed, o);
        [
            package.to_owned(),
            key.to_owned(),
            name.to_owned(),
            qualified,
            kind.to_owned(),
            if exposed { "1" } else { "0" }.to_owned(),
            short.clone(),
            summary,
            description.to_owned(),
            o.map(|o| o.return_type.clone()).unwrap_or_default(),
            String::new(),
            entries(o.map(|o| o.args.as_slice()).unwrap_or_default()),
            entries(o.map(|o| o.cols.as_slice()).unwrap_or_default()),
        ]
    };
    out.push(row(key, "MODULE", true, None));
    for o in objects(sql) {
        out.push(row(&o.name, o.kind, !o.name.starts_with('_'), Some(&o)));
    }
}

/// The table's source: the built-in modules (their rows computed once)
/// and the users' packages (read at each scan, as they may grow).
#[derive(Debug)]
pub(crate) struct Index {
    builtin: &'static [Module],
    builtin_rows: OnceLock<Arc<Vec<Row>>>,
    user: UserPackages,
}

impl Index {
    /// Every row: ours, then the users' packages'.
    fn rows(&self) -> Vec<Arc<Vec<Row>>> {
        let ours = self
            .builtin_rows
            .get_or_init(|| {
                let mut rows = Vec::new();
                for m in self.builtin {
                    let package = m.key.split('.').next().unwrap_or(m.key);
                    module_rows(package, m.key, m.sql, &mut rows);
                }
                Arc::new(rows)
            })
            .clone();
        let mut theirs = Vec::new();
        for p in snapshot(&self.user) {
            for m in p.modules() {
                module_rows(p.name(), &m.key, &m.sql, &mut theirs);
            }
        }
        vec![ours, Arc::new(theirs)]
    }
}

/// Registers the table on `conn`.
pub(crate) fn register(
    conn: &Connection,
    builtin: &'static [Module],
    user: UserPackages,
) -> rusqlite::Result<()> {
    conn.create_module(
        TABLE,
        eponymous_only_module::<IndexTab>(),
        Some(Arc::new(Index {
            builtin,
            builtin_rows: OnceLock::new(),
            user,
        })),
    )
}

/// The virtual table.
#[repr(C)]
pub(crate) struct IndexTab {
    /// SQLite's part; must be first.
    base: rusqlite::ffi::sqlite3_vtab,
    index: Arc<Index>,
}

// SAFETY: `IndexTab` is `#[repr(C)]` with `sqlite3_vtab` first, as
// rusqlite's `VTab` contract requires.
unsafe impl<'vtab> VTab<'vtab> for IndexTab {
    type Aux = Arc<Index>;
    type Cursor = IndexCursor;

    fn connect(
        db: &mut VTabConnection,
        aux: Option<&Arc<Index>>,
        _args: &[&[u8]],
    ) -> rusqlite::Result<(String, Self)> {
        let index = aux
            .cloned()
            .ok_or_else(|| rusqlite::Error::ModuleError("module index missing".into()))?;
        db.config(VTabConfig::Innocuous)?;
        let cols: Vec<String> = COLUMNS
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let ty = if i == EXPOSED { "BIGINT" } else { "TEXT" };
                format!("\"{c}\" {ty}")
            })
            .collect();
        Ok((
            format!("CREATE TABLE x({})", cols.join(", ")),
            IndexTab {
                base: rusqlite::ffi::sqlite3_vtab::default(),
                index,
            },
        ))
    }

    fn best_index(&self, info: &mut IndexInfo) -> rusqlite::Result<()> {
        info.set_estimated_cost(1e4);
        Ok(())
    }

    fn open(&'vtab mut self) -> rusqlite::Result<IndexCursor> {
        Ok(IndexCursor {
            base: rusqlite::ffi::sqlite3_vtab_cursor::default(),
            index: self.index.clone(),
            rows: Vec::new(),
            part: 0,
            pos: 0,
        })
    }
}

/// A scan.
#[repr(C)]
pub(crate) struct IndexCursor {
    /// SQLite's part; must be first.
    base: rusqlite::ffi::sqlite3_vtab_cursor,
    index: Arc<Index>,
    rows: Vec<Arc<Vec<Row>>>,
    part: usize,
    pos: usize,
}

impl IndexCursor {
    /// Moves past empty parts.
    fn settle(&mut self) {
        while self
            .rows
            .get(self.part)
            .is_some_and(|p| self.pos >= p.len())
        {
            self.part += 1;
            self.pos = 0;
        }
    }

    fn row(&self) -> Option<&Row> {
        self.rows.get(self.part).and_then(|p| p.get(self.pos))
    }
}

// SAFETY: `IndexCursor` is `#[repr(C)]` with `sqlite3_vtab_cursor`
// first, as rusqlite's `VTabCursor` contract requires.
unsafe impl VTabCursor for IndexCursor {
    fn filter(
        &mut self,
        _idx_num: c_int,
        _idx_str: Option<&str>,
        _args: &Filters<'_>,
    ) -> rusqlite::Result<()> {
        self.rows = self.index.rows();
        self.part = 0;
        self.pos = 0;
        self.settle();
        Ok(())
    }

    fn next(&mut self) -> rusqlite::Result<()> {
        self.pos += 1;
        self.settle();
        Ok(())
    }

    fn eof(&self) -> bool {
        self.row().is_none()
    }

    fn column(&self, ctx: &mut Context, i: c_int) -> rusqlite::Result<()> {
        let col = usize::try_from(i).unwrap_or(usize::MAX);
        match self.row().and_then(|r| r.get(col)) {
            Some(v) if col == EXPOSED => ctx.set_result(&i64::from(v == "1")),
            Some(v) => ctx.set_result(v),
            None => ctx.set_result(&rusqlite::types::Null),
        }
    }

    fn rowid(&self) -> rusqlite::Result<i64> {
        let before: usize = self.rows.iter().take(self.part).map(|p| p.len()).sum();
        Ok(i64::try_from(before + self.pos).unwrap_or(i64::MAX))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_modules_objects_are_read_from_its_text() {
        let sql = "-- A table.\n-- Second line.\nCREATE PERFETTO TABLE t(a LONG, b STRING) AS SELECT 1 AS a, 'x' AS b;\n\
                   CREATE PERFETTO VIEW _v AS SELECT 1;\n\
                   -- Adds one.\nCREATE PERFETTO FUNCTION f(x LONG) RETURNS LONG AS SELECT $x + 1;\n\
                   CREATE PERFETTO FUNCTION g() RETURNS TABLE(c DOUBLE) AS SELECT 1.0 AS c;\n\
                   CREATE PERFETTO MACRO m(e Expr) RETURNS Expr AS $e;\n\
                   CREATE TABLE plain(x);\nSELECT 1;";
        let got: Vec<(&str, String)> = objects(sql)
            .iter()
            .map(|o| (o.kind, o.name.clone()))
            .collect();
        assert_eq!(
            got,
            [
                ("TABLE", "t".to_owned()),
                ("VIEW", "_v".to_owned()),
                ("FUNCTION", "f".to_owned()),
                ("TABLE_FUNCTION", "g".to_owned()),
                ("MACRO", "m".to_owned()),
            ]
        );
        let o = objects(sql);
        assert_eq!(o[0].description, "A table. Second line.");
        assert_eq!(
            o[0].cols,
            [("a".into(), "LONG".into()), ("b".into(), "STRING".into())]
        );
        assert_eq!(o[1].description, "");
        assert_eq!(o[2].description, "Adds one.");
        assert_eq!(o[2].return_type, "LONG");
        assert_eq!(o[2].args, [("x".into(), "LONG".into())]);
        assert_eq!(o[4].return_type, "Expr");
        assert_eq!(o[4].args, [("e".into(), "Expr".into())]);
        let mut rows = Vec::new();
        module_rows("p", "p.m", sql, &mut rows);
        assert_eq!(rows.len(), 6);
        assert_eq!(rows[0][4], "MODULE");
        assert_eq!(rows[2][3], "p.m._v");
        assert_eq!(rows[2][EXPOSED], "0");
        assert_eq!(
            rows[1][12],
            r#"[{"description":"","name":"a","type":"LONG"},{"description":"","name":"b","type":"STRING"}]"#
        );
    }

    #[test]
    fn objects_come_grouped_with_types_as_written_and_upstreams_summary() {
        let sql = "CREATE PERFETTO MACRO _m(x ColumnName, y ColumnName) RETURNS _ProjectionFragment AS $x;\n\
                   -- Unrelated.\n\n\
                   -- Nanoseconds\n--\n-- as a time.\n\
                   CREATE PERFETTO FUNCTION time_from_ns(nanos LONG) RETURNS TIMESTAMP AS SELECT $nanos;\n\
                   CREATE PERFETTO VIEW v AS SELECT 1 AS a;";
        let o = objects(sql);
        let kinds: Vec<&str> = o.iter().map(|o| o.kind).collect();
        assert_eq!(kinds, ["VIEW", "FUNCTION", "MACRO"]);
        assert_eq!(o[1].return_type, "TIMESTAMP");
        assert_eq!(o[1].description, "Nanoseconds as a time.");
        assert_eq!(o[2].return_type, "_ProjectionFragment");
        assert_eq!(
            o[2].args,
            [
                ("x".into(), "ColumnName".into()),
                ("y".into(), "ColumnName".into())
            ]
        );
        let mut rows = Vec::new();
        module_rows("time", "time.conversion", sql, &mut rows);
        assert_eq!(
            rows[2][7],
            "Package: time\nModule: time.conversion\nName: time_from_ns\n\
             Qualified name: time.conversion.time_from_ns\n\
             Search aliases: time time conversion time from ns\nKind: public FUNCTION\n\
             Description: Nanoseconds as a time.\nArguments:\n- nanos (LONG)\nReturns: TIMESTAMP"
        );
        assert_eq!(rows[2][6], "Nanoseconds as a time.");
        assert_eq!(short_description(&"é".repeat(100)).len(), 160);
    }
}

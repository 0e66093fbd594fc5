//! `SELECT RUN_METRIC('dir/file.sql', 'key', value, …)`: the v1 metrics'
//! way of running one of the trace processor's own metric files (the
//! registry in `mod.rs`) with its `{{key}}` placeholders replaced by the
//! values given, as upstream's trace processor does: the file must be
//! known, keys must be text, every key needs a value that reads as text
//! (text, an integer, or a real printed with six decimals), and every
//! placeholder of the file must be given. The call itself returns nothing.
//!
//! `SELECT IMPORT('a.b.c')`, the older spelling of `INCLUDE PERFETTO
//! MODULE a.b.c` that upstream still accepts, goes the same way: it
//! queues that include.
//!
//! SQLite calls the function in the middle of a statement, where running
//! other statements (which may create or drop tables) is not safe; the
//! call checks its arguments, substitutes, and queues the text, and the
//! PerfettoSQL driver runs it as soon as the calling statement has ended,
//! so that the caller's next statement sees what the file created.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex};

use regex::Regex;
use rusqlite::Connection;
use rusqlite::functions::{Context, FunctionFlags};
use rusqlite::types::{Null, ValueRef};

use super::MetricFile;
use crate::sql::perfetto_sql::void_calls::mark_void;

/// A metric file's text after substitution, waiting for its caller's
/// statement to end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Request {
    /// The call, for its errors: `RUN_METRIC('path')` (the file's path as
    /// the call named it) or `IMPORT('key')`.
    pub caller: String,
    /// Its text with every placeholder replaced.
    pub sql: String,
}

/// The metric files `RUN_METRIC` knows and the runs it queued.
#[derive(Debug)]
pub(crate) struct RunMetric {
    files: &'static [MetricFile],
    pending: Arc<Mutex<Vec<Request>>>,
}

impl Default for RunMetric {
    fn default() -> Self {
        RunMetric::with_files(super::METRIC_FILES)
    }
}

/// A placeholder: `{{`, optional blanks, a name of word characters,
/// optional blanks, `}}` (upstream's pattern, ASCII classes as POSIX's).
static PLACEHOLDER: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"\{\{[[:space:]]*([[:word:]]*)[[:space:]]*\}\}").ok());

/// `text` with each placeholder replaced by its value in `values`; `None`
/// when a placeholder names no value.
pub(crate) fn substitute(text: &str, values: &HashMap<String, String>) -> Option<String> {
    let re = PLACEHOLDER.as_ref()?;
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for caps in re.captures_iter(text) {
        let whole = caps.get(0)?;
        let name = caps.get(1).map_or("", |m| m.as_str());
        out.push_str(text.get(last..whole.start())?);
        out.push_str(values.get(name)?);
        last = whole.end();
    }
    out.push_str(text.get(last..)?);
    Some(out)
}

/// A real printed as C's `%f` prints it (six decimals; `inf`, `nan`).
fn c_fixed(v: f64) -> String {
    if v.is_nan() {
        "nan".to_owned()
    } else if v.is_infinite() {
        if v > 0.0 { "inf" } else { "-inf" }.to_owned()
    } else {
        format!("{v:.6}")
    }
}

/// The error a call fails with.
fn fail(message: String) -> rusqlite::Error {
    rusqlite::Error::UserFunctionError(message.into())
}

/// Checks a call's arguments and substitutes: the request to queue.
fn request(files: &[MetricFile], ctx: &Context<'_>) -> rusqlite::Result<Request> {
    let path = match ctx.len() {
        0 => None,
        _ => match ctx.get_raw(0) {
            ValueRef::Text(t) => Some(String::from_utf8_lossy(t).into_owned()),
            _ => None,
        },
    }
    .ok_or_else(|| fail("RUN_METRIC: Invalid arguments".into()))?;
    let file = files
        .iter()
        .find(|f| f.path == path)
        .ok_or_else(|| fail(format!("RUN_METRIC: Unknown filename provided {path}")))?;
    let mut values = HashMap::new();
    let mut i = 1;
    while i < ctx.len() {
        let key = match ctx.get_raw(i) {
            ValueRef::Text(t) => String::from_utf8_lossy(t).into_owned(),
            _ => return Err(fail("RUN_METRIC: all keys must be strings".into())),
        };
        if i + 1 >= ctx.len() {
            return Err(fail("RUN_METRIC: missing value for key".into()));
        }
        let value = match ctx.get_raw(i + 1) {
            ValueRef::Text(t) => String::from_utf8_lossy(t).into_owned(),
            ValueRef::Integer(v) => v.to_string(),
            ValueRef::Real(v) => c_fixed(v),
            ValueRef::Null | ValueRef::Blob(_) => {
                return Err(fail(
                    "RUN_METRIC: all values must be convertible to strings".into(),
                ));
            }
        };
        values.insert(key, value);
        i += 2;
    }
    let sql = substitute(file.sql, &values).ok_or_else(|| {
        fail(format!(
            "RUN_METRIC: Error when performing substitutions: {}",
            file.sql
        ))
    })?;
    Ok(Request {
        caller: format!("RUN_METRIC('{path}')"),
        sql,
    })
}

/// Whether `key` can be a module name as `INCLUDE` takes it: dotted words,
/// possibly ending in a `*` wildcard (nothing that could end the
/// statement the include is written into).
fn is_module_key(key: &str) -> bool {
    !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '*')
}

/// Checks an `IMPORT` call's argument: the include to queue.
fn import_request(ctx: &Context<'_>) -> rusqlite::Result<Request> {
    let key = match ctx.get_raw(0) {
        ValueRef::Text(t) => String::from_utf8_lossy(t).into_owned(),
        _ => return Err(fail("IMPORT: argument must be string".into())),
    };
    if !is_module_key(&key) {
        return Err(fail(format!("IMPORT: '{key}' is not a module name")));
    }
    Ok(Request {
        caller: format!("IMPORT('{key}')"),
        sql: format!("INCLUDE PERFETTO MODULE {key};"),
    })
}

impl RunMetric {
    /// `RUN_METRIC` over `files`.
    pub(crate) fn with_files(files: &'static [MetricFile]) -> Self {
        RunMetric {
            files,
            pending: Arc::default(),
        }
    }

    /// Registers `RUN_METRIC` and `IMPORT` on `conn`.
    pub(crate) fn register(&self, conn: &Connection) -> rusqlite::Result<()> {
        let pending = self.pending.clone();
        conn.create_scalar_function(
            "import",
            1,
            FunctionFlags::SQLITE_UTF8,
            move |ctx: &Context<'_>| -> rusqlite::Result<Null> {
                let r = import_request(ctx)?;
                pending
                    .lock()
                    .map_err(|_| fail("IMPORT: queue poisoned".into()))?
                    .push(r);
                mark_void();
                Ok(Null)
            },
        )?;
        let files = self.files;
        let pending = self.pending.clone();
        conn.create_scalar_function(
            "run_metric",
            -1,
            FunctionFlags::SQLITE_UTF8,
            move |ctx: &Context<'_>| -> rusqlite::Result<Null> {
                let r = request(files, ctx)?;
                pending
                    .lock()
                    .map_err(|_| fail("RUN_METRIC: queue poisoned".into()))?
                    .push(r);
                mark_void();
                Ok(Null)
            },
        )
    }

    /// Forgets runs queued by a statement that failed before they ran.
    pub(crate) fn discard(&self) {
        if let Ok(mut q) = self.pending.lock() {
            q.clear();
        }
    }

    /// Takes the runs queued so far, in call order, for the engine to
    /// run once the calling statement has ended.
    pub(crate) fn take_queued(&self) -> Vec<Request> {
        match self.pending.lock() {
            Ok(mut q) => std::mem::take(&mut *q),
            Err(_) => Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn placeholders_are_replaced_with_blanks_allowed_inside_the_braces() {
        assert_eq!(
            substitute("no placeholder", &values(&[])).as_deref(),
            Some("no placeholder")
        );
        assert_eq!(
            substitute("{{a}}", &values(&[("a", "x")])).as_deref(),
            Some("x")
        );
        assert_eq!(
            substitute("{{ a }} and {{b}}!", &values(&[("a", "1"), ("b", "2")])).as_deref(),
            Some("1 and 2!")
        );
        // A value holding a placeholder is not substituted again.
        assert_eq!(
            substitute("{{a}}", &values(&[("a", "{{a}}")])).as_deref(),
            Some("{{a}}")
        );
        // Unused values are fine.
        assert_eq!(
            substitute("t", &values(&[("unused", "1")])).as_deref(),
            Some("t")
        );
    }

    #[test]
    fn a_placeholder_without_a_value_fails() {
        assert_eq!(substitute("{{missing}}", &values(&[])), None);
        assert_eq!(substitute("{{}}", &values(&[("a", "1")])), None);
        // Not a placeholder: a non-word character inside.
        assert_eq!(
            substitute("{{a-b}}", &values(&[])).as_deref(),
            Some("{{a-b}}")
        );
    }

    #[test]
    fn import_takes_dotted_module_names_and_wildcards_only() {
        assert!(is_module_key("time.conversion"));
        assert!(is_module_key("android.*"));
        assert!(is_module_key("*"));
        assert!(!is_module_key(""));
        assert!(!is_module_key("a.b; DROP TABLE slice"));
        assert!(!is_module_key("a b"));
    }

    #[test]
    fn reals_print_as_c_prints_them_with_six_decimals() {
        assert_eq!(c_fixed(1.5), "1.500000");
        assert_eq!(c_fixed(-0.25), "-0.250000");
        assert_eq!(c_fixed(1e20), "100000000000000000000.000000");
        assert_eq!(c_fixed(f64::INFINITY), "inf");
    }
}

//! PerfettoSQL over our SQLite engine: a query's text is split into
//! statements on SQLite's own tokens; PerfettoSQL's statements (`INCLUDE
//! PERFETTO MODULE`, `CREATE [OR REPLACE] PERFETTO TABLE|VIEW|FUNCTION|
//! MACRO|INDEX`, `DROP PERFETTO INDEX`) are carried out here, every other
//! statement goes to SQLite after its `name!(…)` macro calls are expanded;
//! all run in order, and an error carries the byte offset in the user's
//! text it points at (for an included module's error, the `INCLUDE`'s,
//! with the module and the offset in its text in the message).
//!
//! The tokens come from the `syntaqlite` crate (SQLite's tokenizer, by the
//! author of Perfetto's own PerfettoSQL tooling) rather than `sqlparser`:
//! syntaqlite cuts text exactly as SQLite does (blobs `x'..'`, `[names]`,
//! `$a::b` parameters, nested comments' ends, every number form), which is
//! what matters when the pieces are handed back to SQLite, and it knows the
//! `!` of a macro call; sqlparser's SQLite dialect is a generic SQL lexer
//! whose positions are lines and columns of characters, not bytes.
//!
//! Files: `tokens.rs` (tokens, statement splitting), `statement.rs` (what
//! a statement is), `types.rs`, `macros.rs` (with `intrinsic_macros.rs`,
//! the built-in `__intrinsic_stringify!`/`__intrinsic_token_apply!` family),
//! `functions.rs` (scalar),
//! `table_functions.rs`, `nested.rs` (bodies run inside a call),
//! `legacy.rs` (`CREATE_FUNCTION`, `EXPERIMENTAL_MEMOIZE`),
//! `tables.rs` (tables, views, indexes; `columnar.rs` stores a table as
//! columns), `modules.rs` (the module registry,
//! with `modules/*.sql`), `packages.rs` (users' packages beside it),
//! `module_index.rs` (the `__intrinsic_stdlib_objects` table), `error.rs`.

mod columnar;
mod error;
mod functions;
mod intrinsic_macros;
mod lazy_table;
mod legacy;
mod macros;
mod module_index;
mod modules;
pub(crate) mod native;
pub(crate) mod nested;
mod packages;
mod statement;
mod table_functions;
mod tables;
pub(crate) mod tokens;
mod types;
pub(crate) mod void_calls;

use std::cell::{Cell, RefCell};
use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;

use rusqlite::Connection;
use rusqlite::fallible_iterator::FallibleIterator;

use crate::error::Error;
use error::PerfettoSqlError;
use statement::{Body, Parsed, Returns};

/// One statement handed to the caller.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Piece<'a> {
    /// Its text, macros expanded.
    pub text: &'a str,
    /// Whether it was PerfettoSQL, carried out already (it has no rows).
    pub done: bool,
    /// Whether it is the text's last statement.
    pub last: bool,
}

/// What the engine knows of PerfettoSQL: macros, created functions,
/// included modules.
#[derive(Debug)]
pub(crate) struct PerfettoSql {
    /// The modules `INCLUDE` can name.
    modules: &'static [modules::Module],
    /// The users' packages (`--add-sql-package`), searched beside `modules`.
    user: packages::UserPackages,
    macros: RefCell<macros::Macros>,
    /// Created functions' names (lower case).
    functions: RefCell<HashSet<String>>,
    /// Created scalar functions as SQLite knows them: name, arguments (-1
    /// for any number).
    scalars: RefCell<Vec<(String, i32)>>,
    /// Modules included (run to their end).
    included: RefCell<HashSet<String>>,
    /// The indexes made on tables stored as columns (`columnar.rs`).
    indexes: columnar::Indexes,
    /// Modules being included, outermost first.
    including: RefCell<Vec<String>>,
    /// Created functions' calls in progress.
    depth: Arc<AtomicUsize>,
    /// `CREATE_FUNCTION` and `EXPERIMENTAL_MEMOIZE` (`legacy.rs`).
    legacy: legacy::Legacy,
    /// Whether `legacy`'s functions (and the module index table) are
    /// registered on the connection.
    legacy_registered: Cell<bool>,
    /// `RUN_METRIC` and the metric files it queued (`sql/metrics`).
    metrics: crate::sql::metrics::run_metric::RunMetric,
    /// The sources a PERFETTO TABLE takes native columns from (`native.rs`).
    natives: native::NativeTables,
}

impl Default for PerfettoSql {
    fn default() -> Self {
        PerfettoSql::with_modules(modules::MODULES)
    }
}

/// The message of the engine's error `e`, without its place.
pub(crate) fn error_message(e: &Error) -> String {
    error::parts(e).0
}

/// What a plain statement's runner is given.
pub(crate) type Exec<'e> = dyn FnMut(Piece<'_>) -> Result<(), Error> + 'e;

impl PerfettoSql {
    /// A PerfettoSQL state whose `INCLUDE` reads `modules`.
    fn with_modules(modules: &'static [modules::Module]) -> Self {
        PerfettoSql {
            modules,
            user: packages::UserPackages::default(),
            macros: RefCell::default(),
            functions: RefCell::default(),
            scalars: RefCell::default(),
            included: RefCell::default(),
            indexes: columnar::Indexes::default(),
            including: RefCell::default(),
            depth: Arc::default(),
            legacy: legacy::Legacy::default(),
            legacy_registered: Cell::new(false),
            metrics: Default::default(),
            natives: native::NativeTables::default(),
        }
    }

    /// The native sources a PERFETTO TABLE may take its columns from, to
    /// register more on.
    pub(crate) fn natives_mut(&mut self) -> &mut native::NativeTables {
        &mut self.natives
    }

    /// Registers a user's package beside the built-in modules, unless its
    /// name clashes with a built-in or earlier package.
    pub(crate) fn add_package(
        &self,
        package: crate::sql_package::SqlPackage,
    ) -> Result<(), crate::sql_package::SqlPackageError> {
        packages::register(self.modules, &self.user, package)
    }

    /// Runs every statement of `sql` on `conn` in order: PerfettoSQL's
    /// here, then `exec` is told of it (`done`); the others by `exec`.
    pub(crate) fn run(
        &self,
        conn: &Connection,
        sql: &str,
        exec: &mut Exec<'_>,
    ) -> Result<(), Error> {
        if !self.legacy_registered.get() {
            self.legacy.register(conn)?;
            self.metrics.register(conn)?;
            module_index::register(conn, self.modules, self.user.clone())?;
            self.legacy_registered.set(true);
        }
        let toks = tokens::tokenize(sql).map_err(|e| {
            let at = match e {
                PerfettoSqlError::Unreadable { offset } => Some(offset),
                _ => None,
            };
            e.at(at)
        })?;
        let stmts = tokens::statements(sql, &toks);
        let n = stmts.len();
        for (i, stmt) in stmts.iter().enumerate() {
            let last = i + 1 == n;
            let text = sql.get(stmt.start..stmt.end).unwrap_or_default();
            let parsed = statement::parse(sql, stmt).map_err(|(e, at)| e.at(Some(at)))?;
            if parsed == Parsed::Sql {
                // Runs queued by an earlier statement that failed.
                self.metrics.discard();
                let expanded = self
                    .macros
                    .borrow()
                    .expand(text)
                    .map_err(|(e, at)| e.at(Some(stmt.start + at)))?;
                match expanded {
                    None => exec(Piece {
                        text,
                        done: false,
                        last,
                    })
                    .map_err(|e| shift(e, stmt.start, true))?,
                    Some(x) => exec(Piece {
                        text: &x,
                        done: false,
                        last,
                    })
                    .map_err(|e| shift(e, stmt.start, false))?,
                }
                self.create_queued(conn, stmt.start)?;
                self.run_queued_metrics(conn, stmt.start)?;
                continue;
            }
            self.perfetto(conn, sql, stmt.start, parsed)?;
            exec(Piece {
                text,
                done: true,
                last,
            })?;
        }
        Ok(())
    }

    /// Carries out PerfettoSQL statement `parsed` of `sql`, which starts
    /// at byte `start`.
    fn perfetto(
        &self,
        conn: &Connection,
        sql: &str,
        start: usize,
        parsed: Parsed,
    ) -> Result<(), Error> {
        match parsed {
            Parsed::Sql => Ok(()),
            Parsed::Include { key } => self.include(conn, &key, start),
            Parsed::CreateMacro {
                replace,
                name,
                params,
                body,
                ..
            } => {
                let body = sql.get(body.0..body.1).unwrap_or_default().to_owned();
                self.macros
                    .borrow_mut()
                    .define(&name, macros::Macro { params, body }, replace)
                    .map_err(|e| e.at(Some(start)))
            }
            Parsed::CreateRelation {
                table,
                replace,
                name,
                schema,
                body,
            } => {
                let statement = if table {
                    "CREATE PERFETTO TABLE"
                } else {
                    "CREATE PERFETTO VIEW"
                };
                let (select, exact) = self.expand_body(sql, body)?;
                let names = tables::columns(conn, statement, &select, true, schema.as_deref())
                    .map_err(|e| create_error(e, body.0, exact, statement))?;
                let native = if table {
                    self.natives
                        .table_for(&name, &select, &names)
                        .map_err(|e| {
                            PerfettoSqlError::Sqlite {
                                statement,
                                message: e.to_string(),
                            }
                            .at(Some(start))
                        })?
                } else {
                    None
                };
                tables::create(
                    conn,
                    &self.indexes,
                    table,
                    replace,
                    &name,
                    &select,
                    &names,
                    native,
                )
                .map_err(|e| e.at(Some(start)))
            }
            Parsed::CreateIndex {
                replace,
                name,
                table,
                columns,
            } => tables::create_index(conn, &self.indexes, replace, &name, &table, &columns)
                .map_err(|e| e.at(Some(start))),
            Parsed::DropIndex { name } => {
                tables::drop_index(conn, &self.indexes, &name).map_err(|e| e.at(Some(start)))
            }
            Parsed::CreateFunction {
                replace,
                name,
                args,
                returns,
                body,
                ..
            } => {
                let statement = "CREATE PERFETTO FUNCTION";
                let key = name.to_ascii_lowercase();
                if !replace && self.functions.borrow().contains(&key) {
                    return Err(PerfettoSqlError::FunctionExists { name }.at(Some(start)));
                }
                let variadic = args.last().is_some_and(|a| a.0.variadic);
                let args: Vec<(String, types::ArgType)> =
                    args.into_iter().map(|(p, t)| (p.name, t)).collect();
                let sqlite = |e: rusqlite::Error| {
                    PerfettoSqlError::Sqlite {
                        statement,
                        message: e.to_string(),
                    }
                    .at(Some(start))
                };
                let n_arg = if variadic {
                    -1
                } else {
                    i32::try_from(args.len()).unwrap_or(i32::MAX)
                };
                let scalar = matches!(returns, Returns::Scalar(_));
                let sqlite_name = name.clone();
                match (returns, body) {
                    (Returns::Scalar(_), Body::Delegate(target)) => functions::register(
                        conn,
                        functions::ScalarFunction {
                            memo: self.legacy.memo_for(&name, false),
                            name,
                            args,
                            variadic,
                            compute: functions::Compute::Delegate(target),
                        },
                        self.depth.clone(),
                    )
                    .map_err(sqlite)?,
                    (Returns::Scalar(_), Body::Sql(span)) => {
                        let (select, exact) = self.expand_body(sql, span)?;
                        let memoizable = !variadic
                            && args.len() == 1
                            && args.first().is_some_and(|a| a.1 == types::ArgType::Long);
                        let memo = self.legacy.memo_for(&name, memoizable);
                        let replaced = self.functions.borrow().contains(&key);
                        // Registered before its body is checked, so that
                        // the body may call the function itself.
                        functions::register(
                            conn,
                            functions::ScalarFunction {
                                name: name.clone(),
                                args,
                                variadic,
                                compute: functions::Compute::Body(select.clone()),
                                memo,
                            },
                            self.depth.clone(),
                        )
                        .map_err(sqlite)?;
                        // Checked now, so that an error points at the text.
                        if let Err(e) = tables::columns(conn, statement, &select, false, None) {
                            if !replaced {
                                let _ = conn.remove_function(name.as_str(), n_arg);
                            }
                            return Err(create_error(e, span.0, exact, statement));
                        }
                    }
                    (Returns::Table(cols), Body::Sql(span)) => {
                        let (select, exact) = self.expand_body(sql, span)?;
                        tables::columns(conn, statement, &select, true, Some(&cols))
                            .map_err(|e| create_error(e, span.0, exact, statement))?;
                        table_functions::register(
                            conn,
                            table_functions::TableFunction {
                                name,
                                args,
                                columns: cols.into_iter().map(|c| c.name).collect(),
                                sql: select,
                            },
                            self.depth.clone(),
                        )
                        .map_err(sqlite)?
                    }
                    (Returns::Table(_), Body::Delegate(_)) => {
                        return Err(PerfettoSqlError::Syntax {
                            statement,
                            expected: "AS (only a scalar function delegates)",
                        }
                        .at(Some(start)));
                    }
                }
                self.functions.borrow_mut().insert(key);
                if scalar {
                    self.scalars.borrow_mut().push((sqlite_name, n_arg));
                }
                Ok(())
            }
        }
    }

    /// Forgets what PerfettoSQL statements defined, as a new engine would
    /// start (the RPC's `restore_initial_tables`, which drops the tables
    /// and views they made): macros, included modules (so that an
    /// `INCLUDE` runs the module again), created scalar functions (removed
    /// from `conn`) and their memos. A table-valued function's module
    /// stays registered (SQLite cannot unregister one) and is replaced
    /// when created again.
    pub(crate) fn reset(&self, conn: &Connection) {
        *self.macros.borrow_mut() = macros::Macros::default();
        self.included.borrow_mut().clear();
        self.indexes.clear();
        self.functions.borrow_mut().clear();
        for (name, n_arg) in self.scalars.borrow_mut().drain(..) {
            let _ = conn.remove_function(name.as_str(), n_arg);
        }
        self.legacy.forget_memos();
    }

    /// Runs the metric files and includes `RUN_METRIC` and `IMPORT` queued
    /// by the statement at byte `start` of the caller's text, in call
    /// order, through this engine (so that a file may include modules,
    /// create PerfettoSQL objects and run other metric files); their
    /// statements' rows are stepped through and dropped.
    fn run_queued_metrics(&self, conn: &Connection, start: usize) -> Result<(), Error> {
        for r in self.metrics.take_queued() {
            self.run(conn, &r.sql, &mut |p: Piece<'_>| {
                if p.done {
                    return Ok(());
                }
                run_dropping_rows(conn, p.text)
            })
            .map_err(|e| Error::Sql {
                message: format!("{}: {}", r.caller, error_message(&e)),
                offset: Some(start),
            })?;
        }
        Ok(())
    }

    /// Creates the functions `CREATE_FUNCTION` and `CREATE_VIEW_FUNCTION`
    /// calls queued while the statement at byte `start` ran (`legacy.rs`).
    fn create_queued(&self, conn: &Connection, start: usize) -> Result<(), Error> {
        for r in self.legacy.take() {
            let text = format!(
                "CREATE OR REPLACE PERFETTO FUNCTION {} RETURNS {} AS {}",
                r.prototype, r.returns, r.body
            );
            let mut extra = false;
            let result = self.run(conn, &text, &mut |p: Piece<'_>| {
                extra |= !p.done;
                Ok(())
            });
            let result = match result {
                Ok(()) if extra => Err("the body must be a single statement".to_owned()),
                Ok(()) => Ok(()),
                Err(e) => Err(error::parts(&e).0),
            };
            result.map_err(|message| Error::Sql {
                message: format!("{}('{}'): {message}", r.caller, r.prototype),
                offset: Some(start),
            })?;
        }
        Ok(())
    }

    /// The text of `span` of `sql` with its macros expanded, and whether
    /// it is the text as written (so that offsets in it are the user's).
    fn expand_body(&self, sql: &str, span: statement::Span) -> Result<(String, bool), Error> {
        let text = sql.get(span.0..span.1).unwrap_or_default();
        match self.macros.borrow().expand(text) {
            Ok(None) => Ok((text.to_owned(), true)),
            Ok(Some(x)) => Ok((x, false)),
            Err((e, at)) => Err(e.at(Some(span.0 + at))),
        }
    }

    /// `INCLUDE PERFETTO MODULE key`, the statement at byte `start`.
    fn include(&self, conn: &Connection, key: &str, start: usize) -> Result<(), Error> {
        let user = packages::snapshot(&self.user);
        let found = packages::resolve(self.modules, &user, key).map_err(|e| e.at(Some(start)))?;
        for m in found {
            if self.included.borrow().contains(&m.key) {
                continue;
            }
            if self.including.borrow().contains(&m.key) {
                let mut cycle = self.including.borrow().join(" -> ");
                cycle.push_str(" -> ");
                cycle.push_str(&m.key);
                return Err(PerfettoSqlError::IncludeCycle { key: m.key, cycle }.at(Some(start)));
            }
            self.including.borrow_mut().push(m.key.clone());
            let text = m.sql.as_str();
            let result = self.run(conn, text, &mut |p: Piece<'_>| {
                if p.done {
                    return Ok(());
                }
                // An error with no place points at its statement.
                run_silently(conn, p.text, &m.key).map_err(|e| match e {
                    Error::Sql {
                        message,
                        offset: None,
                    } => Error::Sql {
                        message,
                        offset: Some(0),
                    },
                    e => e,
                })
            });
            self.including.borrow_mut().pop();
            if let Err(e) = result {
                let (message, offset) = error::parts(&e);
                let offset = offset.unwrap_or(0);
                let err = match m.file {
                    // A user's module: the file and the line.
                    Some(file) => {
                        let (line, column) = packages::line_and_column(text, offset);
                        PerfettoSqlError::InUserModule {
                            key: m.key,
                            file: file.display().to_string(),
                            line,
                            column,
                            message,
                        }
                    }
                    None => PerfettoSqlError::InModule {
                        key: m.key,
                        offset,
                        message,
                    },
                };
                return Err(err.at(Some(start)));
            }
            self.included.borrow_mut().insert(m.key);
        }
        // An include frees much of what it used (the selects' sorts and
        // intermediate rows, the builders of its tables), which glibc's
        // allocator would keep resident: given back once the outermost
        // include is done, as a load's is.
        if self.including.borrow().is_empty() {
            crate::free_memory::release();
        }
        Ok(())
    }
}

/// Runs a module's plain statement `text`, which must return no rows.
fn run_silently(conn: &Connection, text: &str, key: &str) -> Result<(), Error> {
    let mut batch = rusqlite::Batch::new(conn, text);
    while let Some(mut stmt) = batch.next().map_err(|e| Error::sql_in(e, text))? {
        let mut rows = stmt.raw_query();
        if rows.next()?.is_some() {
            return Err(PerfettoSqlError::ModuleReturnsRows {
                key: key.to_owned(),
            }
            .at(None));
        }
    }
    Ok(())
}

/// Error `e` of a statement starting at byte `start` of the text: its
/// offset counted from the text's start when the statement was run as
/// written (`exact`), else the statement's start.
fn shift(e: Error, start: usize, exact: bool) -> Error {
    match e {
        Error::Sql {
            message,
            offset: Some(o),
        } => Error::Sql {
            message,
            offset: Some(if exact { start + o } else { start }),
        },
        other => other,
    }
}

/// A table's, view's or function's creation error, its select at byte
/// `body` of the text (`exact`: as written).
fn create_error(
    e: tables::CreateError,
    body: usize,
    exact: bool,
    statement: &'static str,
) -> Error {
    match e {
        tables::CreateError::Check(e) => e.at(Some(body)),
        tables::CreateError::Select { message, offset } => Error::Sql {
            message: format!("{statement}: {message}"),
            offset: Some(match offset {
                Some(o) if exact => body + o,
                _ => body,
            }),
        },
    }
}

/// Runs the plain statements of `text` to their end, dropping their rows.
fn run_dropping_rows(conn: &Connection, text: &str) -> Result<(), Error> {
    let mut batch = rusqlite::Batch::new(conn, text);
    while let Some(mut stmt) = batch.next().map_err(|e| Error::sql_in(e, text))? {
        let mut rows = stmt.raw_query();
        while rows.next()?.is_some() {}
    }
    Ok(())
}

#[cfg(test)]
mod blocking_calls_tests;
#[cfg(test)]
mod tests;

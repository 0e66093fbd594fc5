//! What one statement is: one of PerfettoSQL's own (`INCLUDE PERFETTO
//! MODULE`, `CREATE [OR REPLACE] PERFETTO TABLE|VIEW|FUNCTION|MACRO|INDEX`,
//! `DROP PERFETTO INDEX`) read from its tokens into its parts, or plain
//! SQLite SQL, left to SQLite. A statement that opens with a PerfettoSQL
//! keyword run but breaks its grammar is an error pointing at the token
//! where it broke.

use super::error::PerfettoSqlError;
use super::tokens::{Kind, Statement, Tok};
use super::types::ArgType;

/// A byte range of the text.
pub(crate) type Span = (usize, usize);

/// One `name TYPE` of a list (arguments, columns, macro parameters).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Param {
    /// The name.
    pub name: String,
    /// The type as written (`LONG`, `JOINID(slice.id)`, `Expr`).
    pub ty: String,
    /// `ANY...`: the function takes any number of arguments from here on.
    pub variadic: bool,
}

/// What a `CREATE PERFETTO FUNCTION` returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Returns {
    /// One value of this type.
    Scalar(ArgType),
    /// Rows of these columns.
    Table(Vec<Param>),
}

/// How a function computes its result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Body {
    /// `AS <select>`: the select's span.
    Sql(Span),
    /// `DELEGATES TO name`: this function.
    Delegate(String),
}

/// A statement, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Parsed {
    /// SQLite's SQL.
    Sql,
    /// `INCLUDE PERFETTO MODULE key`.
    Include {
        /// The module's name, possibly ending in `*`.
        key: String,
    },
    /// `CREATE [OR REPLACE] PERFETTO TABLE|VIEW name [(schema)] AS select`.
    CreateRelation {
        /// `TABLE` (true) or `VIEW`.
        table: bool,
        /// `OR REPLACE`.
        replace: bool,
        /// The name.
        name: String,
        /// The declared columns, when given.
        schema: Option<Vec<Param>>,
        /// The select.
        body: Span,
    },
    /// `CREATE [OR REPLACE] PERFETTO FUNCTION name(args) RETURNS … AS …`.
    CreateFunction {
        /// `OR REPLACE`.
        replace: bool,
        /// The name.
        name: String,
        /// The arguments.
        args: Vec<(Param, ArgType)>,
        /// What it returns.
        returns: Returns,
        /// The return type as written (`TIMESTAMP`, `TABLE`), for the
        /// module index.
        return_name: String,
        /// How it computes it.
        body: Body,
    },
    /// `CREATE [OR REPLACE] PERFETTO MACRO name(params) RETURNS type AS body`.
    CreateMacro {
        /// `OR REPLACE`.
        replace: bool,
        /// The name.
        name: String,
        /// The parameters' names.
        params: Vec<String>,
        /// The parameters' types as written (`ColumnName`, `Expr`, ...).
        param_types: Vec<String>,
        /// The type after `RETURNS` as written.
        returns: String,
        /// The body, up to the statement's end.
        body: Span,
    },
    /// `CREATE [OR REPLACE] PERFETTO INDEX name ON table(cols)`.
    CreateIndex {
        /// `OR REPLACE`.
        replace: bool,
        /// The index's name.
        name: String,
        /// The table's.
        table: String,
        /// The columns, in order.
        columns: Vec<String>,
    },
    /// `DROP PERFETTO INDEX name ON table`.
    DropIndex {
        /// The index's name.
        name: String,
    },
}

/// A parse error and the byte it points at.
pub(crate) type ParseError = (PerfettoSqlError, usize);

/// Reads statement `stmt` of `sql`.
pub(crate) fn parse(sql: &str, stmt: &Statement) -> Result<Parsed, ParseError> {
    let words = stmt.words();
    let mut c = Cursor {
        sql,
        words: &words,
        at: 0,
        end: stmt.end,
        statement: "",
    };
    if c.peek_word("include") && c.peek_word_at(1, "perfetto") {
        c.statement = "INCLUDE PERFETTO MODULE";
        c.at = 2;
        c.word("module", "MODULE")?;
        return c.include();
    }
    if c.peek_word("drop") && c.peek_word_at(1, "perfetto") {
        c.statement = "DROP PERFETTO INDEX";
        c.at = 2;
        c.word("index", "INDEX")?;
        let name = c.name()?;
        c.word("on", "ON")?;
        c.name()?;
        c.finish()?;
        return Ok(Parsed::DropIndex { name });
    }
    if !c.peek_word("create") {
        return Ok(Parsed::Sql);
    }
    let mut i = 1;
    let replace = c.peek_word_at(1, "or") && c.peek_word_at(2, "replace");
    if replace {
        i = 3;
    }
    if !c.peek_word_at(i, "perfetto") {
        return Ok(Parsed::Sql);
    }
    c.at = i + 1;
    let kinds: [(&str, &'static str); 5] = [
        ("table", "CREATE PERFETTO TABLE"),
        ("view", "CREATE PERFETTO VIEW"),
        ("function", "CREATE PERFETTO FUNCTION"),
        ("macro", "CREATE PERFETTO MACRO"),
        ("index", "CREATE PERFETTO INDEX"),
    ];
    let Some(&(kind, statement)) = kinds.iter().find(|(k, _)| c.peek_word(k)) else {
        c.statement = "CREATE PERFETTO";
        return Err(c.expected("TABLE, VIEW, FUNCTION, MACRO or INDEX"));
    };
    c.statement = statement;
    c.at += 1;
    match kind {
        "table" | "view" => {
            let name = c.name()?;
            let schema = if c.peek(Kind::Lp) {
                Some(c.params(false)?)
            } else {
                None
            };
            c.word("as", "AS")?;
            let body = c.rest()?;
            Ok(Parsed::CreateRelation {
                table: kind == "table",
                replace,
                name,
                schema,
                body,
            })
        }
        "function" => c.function(replace),
        "macro" => {
            let name = c.name()?;
            let (params, param_types) =
                c.params(false)?.into_iter().map(|p| (p.name, p.ty)).unzip();
            c.word("returns", "RETURNS")?;
            let returns = c.name()?;
            c.word("as", "AS")?;
            let body = c.rest()?;
            Ok(Parsed::CreateMacro {
                replace,
                name,
                params,
                param_types,
                returns,
                body,
            })
        }
        _ => {
            let name = c.name()?;
            c.word("on", "ON")?;
            let table = c.name()?;
            c.punct(Kind::Lp, "'('")?;
            let mut columns = vec![c.name()?];
            while c.peek(Kind::Comma) {
                c.at += 1;
                columns.push(c.name()?);
            }
            c.punct(Kind::Rp, "')'")?;
            c.finish()?;
            Ok(Parsed::CreateIndex {
                replace,
                name,
                table,
                columns,
            })
        }
    }
}

/// A position in a statement's words.
struct Cursor<'a> {
    sql: &'a str,
    words: &'a [Tok],
    at: usize,
    /// The statement's end.
    end: usize,
    statement: &'static str,
}

impl Cursor<'_> {
    fn tok(&self) -> Option<Tok> {
        self.words.get(self.at).copied()
    }

    fn peek(&self, kind: Kind) -> bool {
        self.tok().is_some_and(|t| t.kind == kind)
    }

    fn peek_word(&self, w: &str) -> bool {
        self.peek_word_at(self.at, w)
    }

    fn peek_word_at(&self, i: usize, w: &str) -> bool {
        self.words.get(i).is_some_and(|t| t.is_word(self.sql, w))
    }

    /// Where the cursor points (the statement's end past its last word).
    fn here(&self) -> usize {
        self.tok().map_or(self.end, |t| t.start)
    }

    fn expected(&self, expected: &'static str) -> ParseError {
        (
            PerfettoSqlError::Syntax {
                statement: self.statement,
                expected,
            },
            self.here(),
        )
    }

    fn word(&mut self, w: &str, shown: &'static str) -> Result<(), ParseError> {
        if self.peek_word(w) {
            self.at += 1;
            Ok(())
        } else {
            Err(self.expected(shown))
        }
    }

    fn punct(&mut self, kind: Kind, shown: &'static str) -> Result<(), ParseError> {
        if self.peek(kind) {
            self.at += 1;
            Ok(())
        } else {
            Err(self.expected(shown))
        }
    }

    fn name(&mut self) -> Result<String, ParseError> {
        match self.tok() {
            Some(t) if t.kind == Kind::Word => {
                self.at += 1;
                Ok(t.text(self.sql).to_owned())
            }
            _ => Err(self.expected("a name")),
        }
    }

    fn finish(&self) -> Result<(), ParseError> {
        if self.tok().is_some() {
            Err(self.expected("the end of the statement"))
        } else {
            Ok(())
        }
    }

    /// The span from the cursor to the statement's end (not empty).
    fn rest(&self) -> Result<Span, ParseError> {
        match self.tok() {
            Some(t) => Ok((t.start, self.end)),
            None => Err(self.expected("a body")),
        }
    }

    /// `INCLUDE PERFETTO MODULE`'s key: names joined by `.`, possibly
    /// ending in `*`, or `*` alone, written without blanks.
    fn include(&mut self) -> Result<Parsed, ParseError> {
        let Some(first) = self.tok() else {
            return Err(self.expected("a module name"));
        };
        let mut key = String::new();
        let mut prev: Option<Tok> = None;
        while let Some(t) = self.tok() {
            if prev.is_some_and(|p| p.end != t.start) {
                return Err(self.expected("the end of the statement"));
            }
            let want_name = prev.is_none_or(|p| p.kind == Kind::Dot);
            let ok = match t.kind {
                Kind::Word => want_name,
                Kind::Star => want_name,
                Kind::Dot => !want_name && prev.is_some_and(|p| p.kind == Kind::Word),
                _ => false,
            };
            if !ok || prev.is_some_and(|p| p.kind == Kind::Star) {
                return Err(self.expected("a module name (names joined by '.', or '*')"));
            }
            key.push_str(t.text(self.sql));
            prev = Some(t);
            self.at += 1;
        }
        if prev.is_some_and(|p| p.kind == Kind::Dot) {
            return Err((
                PerfettoSqlError::Syntax {
                    statement: self.statement,
                    expected: "a module name (names joined by '.', or '*')",
                },
                first.start,
            ));
        }
        Ok(Parsed::Include { key })
    }

    /// `(name TYPE, …)`, possibly empty. A type is a name, possibly with a
    /// parenthesised `(table.column)`, possibly followed by `...` when
    /// `variadic` may be.
    fn params(&mut self, variadic_ok: bool) -> Result<Vec<Param>, ParseError> {
        self.punct(Kind::Lp, "'('")?;
        let mut out: Vec<Param> = Vec::new();
        if self.peek(Kind::Rp) {
            self.at += 1;
            return Ok(out);
        }
        loop {
            let name = self.name()?;
            let ty_start = self.here();
            self.name().map_err(|_| self.expected("a type"))?;
            let mut ty_end = self
                .words
                .get(self.at.saturating_sub(1))
                .map_or(ty_start, |t| t.end);
            if self.peek(Kind::Lp) {
                // `JOINID(table.column)`.
                while let Some(t) = self.tok() {
                    self.at += 1;
                    ty_end = t.end;
                    if t.kind == Kind::Rp {
                        break;
                    }
                }
            }
            let mut variadic = false;
            if self.peek(Kind::Dot) {
                for _ in 0..3 {
                    self.punct(Kind::Dot, "'...'")?;
                }
                if !variadic_ok {
                    return Err(self.expected("',' or ')'"));
                }
                variadic = true;
            }
            let ty = self
                .sql
                .get(ty_start..ty_end)
                .unwrap_or_default()
                .to_owned();
            if out.iter().any(|p| p.name == name) {
                return Err((
                    PerfettoSqlError::Duplicate {
                        statement: self.statement,
                        names: name,
                    },
                    ty_start,
                ));
            }
            out.push(Param { name, ty, variadic });
            if self.peek(Kind::Comma) && !variadic {
                self.at += 1;
                continue;
            }
            self.punct(Kind::Rp, "',' or ')'")?;
            return Ok(out);
        }
    }

    /// The rest of `CREATE PERFETTO FUNCTION`, after the keywords.
    fn function(&mut self, replace: bool) -> Result<Parsed, ParseError> {
        let name = self.name()?;
        let at_args = self.here();
        let params = self.params(true)?;
        let mut args = Vec::with_capacity(params.len());
        for p in params {
            let base = p.ty.split('(').next().unwrap_or_default().trim().to_owned();
            let Some(ty) = ArgType::parse(&base) else {
                return Err((
                    PerfettoSqlError::UnknownType {
                        statement: self.statement,
                        name: p.ty,
                    },
                    at_args,
                ));
            };
            args.push((p, ty));
        }
        self.word("returns", "RETURNS")?;
        let mut return_name = "TABLE".to_owned();
        let returns = if self.peek_word("table") {
            self.at += 1;
            Returns::Table(self.params(false)?)
        } else {
            let at = self.here();
            let ty = self.name()?;
            return_name.clone_from(&ty);
            let ty = ArgType::parse(&ty).ok_or((
                PerfettoSqlError::UnknownType {
                    statement: self.statement,
                    name: ty,
                },
                at,
            ))?;
            Returns::Scalar(ty)
        };
        let body = if self.peek_word("delegates") {
            self.at += 1;
            self.word("to", "TO")?;
            let target = self.name()?;
            self.finish()?;
            if matches!(returns, Returns::Table(_)) {
                return Err(self.expected("AS (only a scalar function delegates)"));
            }
            Body::Delegate(target)
        } else {
            self.word("as", "AS or DELEGATES TO")?;
            Body::Sql(self.rest()?)
        };
        Ok(Parsed::CreateFunction {
            replace,
            name,
            args,
            returns,
            return_name,
            body,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::tokens::{statements, tokenize};
    use super::*;

    fn one(sql: &str) -> Result<Parsed, ParseError> {
        let toks = tokenize(sql).unwrap();
        let stmts = statements(sql, &toks);
        parse(sql, &stmts[0])
    }

    #[test]
    fn each_statement_kind_is_read_into_its_parts() {
        assert_eq!(one("select 1").unwrap(), Parsed::Sql);
        assert_eq!(one("CREATE TABLE perfetto(x)").unwrap(), Parsed::Sql);
        assert_eq!(
            one("include perfetto module a.b_2.*").unwrap(),
            Parsed::Include {
                key: "a.b_2.*".into()
            }
        );
        let sql =
            "CREATE OR REPLACE PERFETTO TABLE t(a LONG, b JOINID(slice.id)) AS SELECT 1 a, 2 b";
        match one(sql).unwrap() {
            Parsed::CreateRelation {
                table: true,
                replace: true,
                name,
                schema: Some(schema),
                body,
            } => {
                assert_eq!(name, "t");
                assert_eq!(schema[1].ty, "JOINID(slice.id)");
                assert_eq!(&sql[body.0..body.1], "SELECT 1 a, 2 b");
            }
            other => panic!("{other:?}"),
        }
        match one("create perfetto function f(x INT, s STRING) returns table(y LONG) as select $x")
            .unwrap()
        {
            Parsed::CreateFunction {
                args,
                returns: Returns::Table(cols),
                ..
            } => {
                assert_eq!(args.len(), 2);
                assert_eq!(args[1].1, ArgType::String);
                assert_eq!(cols[0].name, "y");
            }
            other => panic!("{other:?}"),
        }
        match one("CREATE PERFETTO FUNCTION h(args ANY...) RETURNS INT DELEGATES TO hash").unwrap()
        {
            Parsed::CreateFunction {
                args,
                body: Body::Delegate(t),
                ..
            } => {
                assert!(args[0].0.variadic);
                assert_eq!(t, "hash");
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            one("CREATE PERFETTO INDEX i ON t(a, b)").unwrap(),
            Parsed::CreateIndex {
                replace: false,
                name: "i".into(),
                table: "t".into(),
                columns: vec!["a".into(), "b".into()]
            }
        );
        assert_eq!(
            one("DROP PERFETTO INDEX i ON t").unwrap(),
            Parsed::DropIndex { name: "i".into() }
        );
        match one("CREATE PERFETTO MACRO m(a Expr, b TableOrSubquery) RETURNS Expr AS $a + 1")
            .unwrap()
        {
            Parsed::CreateMacro { params, body, .. } => {
                assert_eq!(params, ["a", "b"]);
                assert_eq!(body.1 - body.0, "$a + 1".len());
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn grammar_errors_point_at_the_token_that_broke_it() {
        let (e, at) = one("CREATE PERFETTO TABLE t SELECT 1").unwrap_err();
        assert_eq!(e.to_string(), "CREATE PERFETTO TABLE: expected AS");
        assert_eq!(at, "CREATE PERFETTO TABLE t ".len());
        let (e, at) =
            one("CREATE PERFETTO FUNCTION f(x WIDGET) RETURNS INT AS SELECT 1").unwrap_err();
        assert_eq!(
            e.to_string(),
            "CREATE PERFETTO FUNCTION: unknown type 'WIDGET'"
        );
        assert_eq!(at, "CREATE PERFETTO FUNCTION f".len());
        let (e, at) = one("  CREATE PERFETTO THING x").unwrap_err();
        assert!(
            e.to_string()
                .contains("TABLE, VIEW, FUNCTION, MACRO or INDEX"),
            "{e}"
        );
        assert_eq!(at, "  CREATE PERFETTO ".len());
        let (_, at) = one("INCLUDE PERFETTO MODULE a. b").unwrap_err();
        assert_eq!(at, "INCLUDE PERFETTO MODULE a. ".len());
        let (e, _) = one("CREATE PERFETTO MACRO m(a Expr, a Expr) RETURNS Expr AS 1").unwrap_err();
        assert!(
            e.to_string().contains("multiple columns are named: a"),
            "{e}"
        );
    }
}

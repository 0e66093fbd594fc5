//! The PerfettoSQL driver end to end on an SQLite connection: each
//! statement kind carried out, in order with plain SQL, and its errors
//! with their offsets in the user's (or a module's) text.

use rusqlite::Connection;
use rusqlite::fallible_iterator::FallibleIterator;
use rusqlite::types::Value;

use super::modules::Module;
use super::*;

/// The last statement's rows of `sql`, run through `p` on `conn`.
fn run(p: &PerfettoSql, conn: &Connection, sql: &str) -> Result<Vec<Vec<Value>>, Error> {
    let mut last = Vec::new();
    p.run(conn, sql, &mut |piece| {
        last.clear();
        if piece.done {
            return Ok(());
        }
        let mut batch = rusqlite::Batch::new(conn, piece.text);
        while let Some(mut stmt) = batch.next().map_err(|e| Error::sql_in(e, piece.text))? {
            let n = stmt.column_count();
            let mut rows = stmt.raw_query();
            last.clear();
            while let Some(r) = rows.next()? {
                last.push(
                    (0..n)
                        .map(|i| r.get::<_, Value>(i))
                        .collect::<Result<_, _>>()?,
                );
            }
        }
        Ok(())
    })?;
    Ok(last)
}

fn fresh() -> (PerfettoSql, Connection) {
    (
        PerfettoSql::default(),
        Connection::open_in_memory().unwrap(),
    )
}

fn ints(rows: &[Vec<Value>]) -> Vec<Vec<i64>> {
    rows.iter()
        .map(|r| {
            r.iter()
                .map(|v| match v {
                    Value::Integer(i) => *i,
                    other => panic!("{other:?}"),
                })
                .collect()
        })
        .collect()
}

/// The message and offset of a failing `sql`.
fn error(p: &PerfettoSql, conn: &Connection, sql: &str) -> (String, Option<usize>) {
    match run(p, conn, sql) {
        Err(Error::Sql { message, offset }) => (message, offset),
        other => panic!("{sql}: {other:?}"),
    }
}

#[test]
fn perfetto_tables_are_materialised_and_checked_against_their_schema() {
    let (p, c) = fresh();
    let rows = run(
        &p,
        &c,
        "CREATE PERFETTO TABLE t(b STRING, a LONG) AS SELECT 1 AS a, 'x' AS b, 2.0 AS c_dropped_below;",
    );
    let (m, o) = match rows {
        Err(Error::Sql { message, offset }) => (message, offset),
        other => panic!("{other:?}"),
    };
    assert_eq!(
        m,
        "CREATE PERFETTO TABLE: the following columns are missing from the schema: c_dropped_below"
    );
    assert_eq!(
        o,
        Some("CREATE PERFETTO TABLE t(b STRING, a LONG) AS ".len())
    );
    let rows = run(
        &p,
        &c,
        "CREATE PERFETTO TABLE t(b STRING, a LONG) AS SELECT 1 AS a, 'x' AS b, 2.0 AS c;",
    );
    assert!(rows.is_err());
    run(
        &p,
        &c,
        "CREATE PERFETTO TABLE t AS SELECT 1 AS a, 2.0 AS r UNION ALL SELECT 3, 4",
    )
    .unwrap();
    // A real table: the values keep the types the select gave them.
    let rows = run(&p, &c, "SELECT a, typeof(r) FROM t ORDER BY a").unwrap();
    assert_eq!(
        rows,
        [
            vec![Value::Integer(1), Value::Text("real".into())],
            vec![Value::Integer(3), Value::Text("integer".into())]
        ]
    );
    assert_eq!(
        ints(
            &run(
                &p,
                &c,
                "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 't'"
            )
            .unwrap()
        ),
        [[1]]
    );
    // Again without OR REPLACE is SQLite's error; with it, the new rows.
    let (m, o) = error(
        &p,
        &c,
        "SELECT 1;\nCREATE PERFETTO TABLE t AS SELECT 5 AS a",
    );
    assert!(m.contains("already exists"), "{m}");
    assert_eq!(o, Some(10));
    run(
        &p,
        &c,
        "CREATE OR REPLACE PERFETTO TABLE t AS SELECT 5 AS a",
    )
    .unwrap();
    assert_eq!(ints(&run(&p, &c, "SELECT * FROM t").unwrap()), [[5]]);
    // Duplicate and unnamed columns are refused.
    let (m, _) = error(&p, &c, "CREATE PERFETTO TABLE d AS SELECT 1 AS x, 2 AS x");
    assert_eq!(m, "CREATE PERFETTO TABLE: multiple columns are named: x");
    let (m, _) = error(&p, &c, "CREATE PERFETTO TABLE d AS SELECT 1 + 1");
    assert!(m.contains("name '1 + 1'"), "{m}");
    // An error in the select points into it.
    let sql = "CREATE PERFETTO TABLE e AS SELECT nope FROM t";
    let (m, o) = error(&p, &c, sql);
    assert!(m.contains("no such column: nope"), "{m}");
    assert_eq!(o, Some(sql.find("nope").unwrap()));
}

#[test]
fn perfetto_views_and_indexes() {
    let (p, c) = fresh();
    run(&p, &c, "CREATE PERFETTO TABLE t AS SELECT 1 AS a, 2 AS b").unwrap();
    run(&p, &c, "CREATE PERFETTO VIEW v(a LONG) AS SELECT a FROM t").unwrap();
    run(
        &p,
        &c,
        "CREATE OR REPLACE PERFETTO VIEW v(a LONG) AS SELECT a + 1 AS a FROM t",
    )
    .unwrap();
    assert_eq!(ints(&run(&p, &c, "SELECT * FROM v").unwrap()), [[2]]);
    let (m, _) = error(&p, &c, "CREATE PERFETTO VIEW w(z LONG) AS SELECT a FROM t");
    assert_eq!(
        m,
        "CREATE PERFETTO VIEW: the following columns are declared in the schema, but do not \
         exist: z; and the following columns exist, but are not declared: a"
    );
    // A table stored as SQLite's rows (a column of integers and doubles:
    // `columnar.rs`) takes SQLite's index.
    run(
        &p,
        &c,
        "CREATE PERFETTO TABLE u AS SELECT 1 AS a, 2 AS b UNION ALL SELECT 1, 2.5",
    )
    .unwrap();
    run(&p, &c, "CREATE PERFETTO INDEX ti ON u(a, b)").unwrap();
    run(&p, &c, "CREATE OR REPLACE PERFETTO INDEX ti ON u(b)").unwrap();
    let indexes = "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = 'ti'";
    assert_eq!(ints(&run(&p, &c, indexes).unwrap()), [[1]]);
    run(&p, &c, "DROP PERFETTO INDEX ti ON u").unwrap();
    assert_eq!(ints(&run(&p, &c, indexes).unwrap()), [[0]]);
    let (m, o) = error(&p, &c, "SELECT 1; CREATE PERFETTO INDEX x ON nowhere(a)");
    assert!(
        m.starts_with("CREATE PERFETTO INDEX: ") && m.contains("nowhere"),
        "{m}"
    );
    assert_eq!(o, Some(10));
}

#[test]
fn scalar_functions_bind_arguments_by_name_and_check_their_types() {
    let (p, c) = fresh();
    run(
        &p,
        &c,
        "CREATE PERFETTO FUNCTION plus(x LONG, y LONG) RETURNS LONG AS SELECT $x + $y;
         CREATE PERFETTO FUNCTION none() RETURNS LONG AS SELECT 1 WHERE 0;
         CREATE PERFETTO FUNCTION many() RETURNS LONG AS SELECT 1 UNION ALL SELECT 2;",
    )
    .unwrap();
    assert_eq!(
        ints(&run(&p, &c, "SELECT plus(2, plus(3, 4))").unwrap()),
        [[9]]
    );
    assert_eq!(run(&p, &c, "SELECT none()").unwrap(), [[Value::Null]]);
    let (m, _) = error(&p, &c, "SELECT many()");
    assert!(m.contains("many: multiple values were returned"), "{m}");
    let (m, _) = error(&p, &c, "SELECT plus('a', 1)");
    assert!(
        m.contains("plus: argument 0 does not have expected type: expected LONG, actual STRING"),
        "{m}"
    );
    // Redefinition needs OR REPLACE.
    let (m, o) = error(
        &p,
        &c,
        "SELECT 1;  CREATE PERFETTO FUNCTION plus(x LONG) RETURNS LONG AS SELECT 0",
    );
    assert_eq!(
        m,
        "CREATE PERFETTO FUNCTION: function 'plus' already exists"
    );
    assert_eq!(o, Some(11));
    run(
        &p,
        &c,
        "CREATE OR REPLACE PERFETTO FUNCTION plus(x LONG, y LONG) RETURNS LONG AS SELECT $x * $y",
    )
    .unwrap();
    assert_eq!(ints(&run(&p, &c, "SELECT plus(2, 5)").unwrap()), [[10]]);
    // A body SQLite refuses is an error at its place in the text.
    let sql = "CREATE PERFETTO FUNCTION bad() RETURNS LONG AS SELECT nope()";
    let (m, o) = error(&p, &c, sql);
    assert!(m.contains("no such function: nope"), "{m}");
    assert_eq!(o, Some(sql.find("nope").unwrap()));
    // Delegation, with any number of arguments.
    run(
        &p,
        &c,
        "CREATE PERFETTO FUNCTION biggest(v ANY...) RETURNS LONG DELEGATES TO max",
    )
    .unwrap();
    assert_eq!(
        ints(&run(&p, &c, "SELECT biggest(3, 9, 4), biggest(1, 2)").unwrap()),
        [[9, 2]]
    );
}

#[test]
fn a_function_calling_itself_forever_is_an_error_not_a_crash() {
    let (p, c) = fresh();
    run(
        &p,
        &c,
        "CREATE PERFETTO FUNCTION f(x LONG) RETURNS LONG AS SELECT f($x + 1)",
    )
    .unwrap();
    let (m, _) = error(&p, &c, "SELECT f(0)");
    assert!(m.contains("nested"), "{m}");
    // A bounded recursion still works, and the depth is back to 0 after.
    run(
        &p,
        &c,
        "CREATE PERFETTO FUNCTION fact(n LONG) RETURNS LONG AS \
         SELECT CASE WHEN $n <= 1 THEN 1 ELSE $n * fact($n - 1) END",
    )
    .unwrap();
    assert_eq!(ints(&run(&p, &c, "SELECT fact(10)").unwrap()), [[3628800]]);
}

/// `down(n)` nests `n` calls of a created function, on a thread with a
/// stack of `stack` bytes: its answer, or the error's message.
fn nest_on_thread(stack: usize, n: usize) -> Result<i64, String> {
    std::thread::Builder::new()
        .stack_size(stack)
        .spawn(move || {
            let (p, c) = fresh();
            run(
                &p,
                &c,
                "CREATE PERFETTO FUNCTION down(n LONG) RETURNS LONG AS \
                 SELECT CASE WHEN $n = 0 THEN 0 ELSE 1 + down($n - 1) END",
            )
            .unwrap();
            match run(&p, &c, &format!("SELECT down({n})")) {
                Ok(rows) => Ok(ints(&rows)[0][0]),
                Err(Error::Sql { message, .. }) => Err(message),
                Err(other) => panic!("{other:?}"),
            }
        })
        .unwrap()
        .join()
        .unwrap()
}

/// The nesting limit holds on a thread with room for it, and a thread with
/// less room refuses a deep call with an error before its stack runs out
/// (with the count alone, 256 levels once aborted a 2 MiB test thread).
#[test]
fn nested_calls_stop_at_the_limit_or_the_stack_with_an_error() {
    let limit = functions::MAX_CALL_DEPTH;
    // Room for every level (64 MiB): the deepest allowed runs, one more is refused.
    assert_eq!(nest_on_thread(64 << 20, limit - 1), Ok(limit as i64 - 1));
    let m = nest_on_thread(64 << 20, limit).unwrap_err();
    assert!(m.contains(&format!("nested more than {limit} deep")), "{m}");
    // A small thread: as deep as the limit allows is more than its stack
    // holds (a level takes kilobytes), so the stack's guard refuses it,
    // with an error, not an overflow.
    let m = nest_on_thread(512 << 10, limit - 1).unwrap_err();
    assert!(m.contains("of this thread's stack"), "{m}");
    // Threads of the usual sizes: the answer, or that error; never an abort
    // (a level's size depends on the build).
    for stack in [1 << 20, 2 << 20] {
        match nest_on_thread(stack, limit - 1) {
            Ok(n) => assert_eq!(n, limit as i64 - 1),
            Err(m) => assert!(m.contains("of this thread's stack"), "{stack}: {m}"),
        }
    }
    // A shallow nesting still runs on a small thread.
    assert_eq!(nest_on_thread(1 << 20, 8), Ok(8));
}

#[test]
fn table_functions_are_called_in_from_with_constant_or_joined_arguments() {
    let (p, c) = fresh();
    run(
        &p,
        &c,
        "CREATE PERFETTO FUNCTION upto(n LONG) RETURNS TABLE(i LONG, sq LONG) AS
           WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < $n)
           SELECT i * i AS sq, i FROM r",
    )
    .unwrap();
    assert_eq!(
        ints(&run(&p, &c, "SELECT i, sq FROM upto(3)").unwrap()),
        [[1, 1], [2, 4], [3, 9]]
    );
    // Arguments from a table to the left.
    let rows = run(
        &p,
        &c,
        "SELECT t.n, count(*) FROM (SELECT 2 AS n UNION ALL SELECT 4) t JOIN upto(t.n) GROUP BY t.n",
    )
    .unwrap();
    assert_eq!(ints(&rows), [[2, 2], [4, 4]]);
    run(&p, &c, "CREATE OR REPLACE PERFETTO FUNCTION upto(n LONG) RETURNS TABLE(i LONG) AS SELECT $n + 1 AS i").unwrap();
    assert_eq!(ints(&run(&p, &c, "SELECT * FROM upto(5)").unwrap()), [[6]]);
    assert_eq!(
        run(&p, &c, "SELECT * FROM upto(NULL)").unwrap(),
        [[Value::Null]]
    );
    let (m, _) = error(&p, &c, "SELECT * FROM upto('x')");
    assert!(m.contains("argument 0 does not have expected type"), "{m}");
    // The body's columns must be the declared ones.
    let sql = "CREATE PERFETTO FUNCTION g() RETURNS TABLE(a LONG) AS SELECT 1 AS b";
    let (m, o) = error(&p, &c, sql);
    assert!(
        m.contains("declared in the schema, but do not exist: a"),
        "{m}"
    );
    assert_eq!(o, Some(sql.find("SELECT 1").unwrap()));
}

#[test]
fn macros_expand_in_statements_and_bodies_with_errors_at_the_call() {
    let (p, c) = fresh();
    run(
        &p,
        &c,
        "CREATE PERFETTO MACRO sub(a Expr, b Expr) RETURNS TableOrSubquery AS SELECT $a - $b;
         CREATE PERFETTO MACRO one() RETURNS Expr AS 1;
         CREATE OR REPLACE PERFETTO MACRO one() RETURNS Expr AS 2;",
    )
    .unwrap();
    assert_eq!(
        ints(&run(&p, &c, "SELECT (sub!(123, 100)) AS r, one!()").unwrap()),
        [[23, 2]]
    );
    run(&p, &c, "CREATE PERFETTO TABLE t AS SELECT one!() AS x").unwrap();
    assert_eq!(ints(&run(&p, &c, "SELECT x FROM t").unwrap()), [[2]]);
    let (m, o) = error(&p, &c, "SELECT 1;\nSELECT nothing!(1)");
    assert_eq!(m, "macro 'nothing' does not exist");
    assert_eq!(o, Some(17));
    let (m, _) = error(&p, &c, "CREATE PERFETTO MACRO one() RETURNS Expr AS 3");
    assert_eq!(m, "CREATE PERFETTO MACRO: macro 'one' already exists");
    // SQLite's errors in an expanded statement point at the statement.
    let (m, o) = error(&p, &c, "SELECT 1; SELECT one!() one!() one!()");
    assert!(m.contains("syntax error"), "{m}");
    assert_eq!(o, Some(10));
}

#[test]
fn statements_run_in_order_with_sqlite_errors_at_their_place() {
    let (p, c) = fresh();
    let rows = run(
        &p,
        &c,
        "CREATE TABLE x(a); INSERT INTO x VALUES (1), (2); CREATE PERFETTO TABLE y AS SELECT a FROM x; \
         SELECT sum(a) FROM y; -- trailing",
    )
    .unwrap();
    assert_eq!(ints(&rows), [[3]]);
    // A PerfettoSQL statement last answers no rows.
    assert!(
        run(&p, &c, "SELECT 1; CREATE PERFETTO VIEW z AS SELECT 1 AS q")
            .unwrap()
            .is_empty()
    );
    let sql = "SELECT 1; CREATE PERFETTO TABLE q AS SELECT 2 AS b; SELEC 3";
    let (m, o) = error(&p, &c, sql);
    assert!(m.contains("syntax error"), "{m}");
    assert_eq!(o, Some(sql.find("SELEC 3").unwrap()));
    let (m, o) = error(&p, &c, "SELECT 1;\n  CREATE PERFETTO TABLE t SELECT 1");
    assert_eq!(m, "CREATE PERFETTO TABLE: expected AS");
    assert_eq!(o, Some(36));
}

#[test]
fn included_modules_run_once_transitively_and_by_wildcard() {
    const FIXTURE: &[Module] = &[
        Module {
            key: "base.math",
            sql: "CREATE PERFETTO FUNCTION twice(x LONG) RETURNS LONG AS SELECT 2 * $x;",
        },
        Module {
            key: "base.more",
            sql: "-- uses base.math\nINCLUDE PERFETTO MODULE base.math;\n\
                  CREATE PERFETTO TABLE four AS SELECT twice(2) AS v;",
        },
        Module {
            key: "broken.mod",
            sql: "CREATE PERFETTO TABLE b AS SELECT 1 AS a;\nSELECT nope FROM nowhere;",
        },
        Module {
            key: "cyc.a",
            sql: "INCLUDE PERFETTO MODULE cyc.b;",
        },
        Module {
            key: "cyc.b",
            sql: "INCLUDE PERFETTO MODULE cyc.a;",
        },
        Module {
            key: "loud.rows",
            sql: "SELECT 1;",
        },
    ];
    let p = PerfettoSql::with_modules(FIXTURE);
    let c = Connection::open_in_memory().unwrap();
    run(&p, &c, "INCLUDE PERFETTO MODULE base.more").unwrap();
    assert_eq!(
        ints(&run(&p, &c, "SELECT v, twice(5) FROM four").unwrap()),
        [[4, 10]]
    );
    // Idempotent: the table and function are not made again (which would fail).
    run(
        &p,
        &c,
        "INCLUDE PERFETTO MODULE base.*; INCLUDE PERFETTO MODULE base.math",
    )
    .unwrap();
    let (m, o) = error(&p, &c, "SELECT 1;\nINCLUDE PERFETTO MODULE base.nothing");
    assert_eq!(m, "INCLUDE: unknown module 'base.nothing'");
    assert_eq!(o, Some(10));
    let (m, _) = error(&p, &c, "INCLUDE PERFETTO MODULE android.startup");
    assert_eq!(m, "INCLUDE: Package 'android.startup' not found");
    // An error inside a module names it and its place in the module.
    let (m, o) = error(&p, &c, "SELECT 1; INCLUDE PERFETTO MODULE broken.mod");
    assert!(
        m.starts_with("in module 'broken.mod' at byte 42: ") && m.contains("no such"),
        "{m}"
    );
    assert_eq!(o, Some(10));
    let (m, _) = error(&p, &c, "INCLUDE PERFETTO MODULE cyc.a");
    assert!(m.contains("cyc.a -> cyc.b -> cyc.a"), "{m}");
    let (m, _) = error(&p, &c, "INCLUDE PERFETTO MODULE loud.rows");
    assert!(m.contains("has a statement returning rows"), "{m}");
}

#[test]
fn the_shipped_time_conversion_module_converts_both_ways() {
    let (p, c) = fresh();
    let rows = run(
        &p,
        &c,
        "INCLUDE PERFETTO MODULE time.conversion;
         SELECT time_to_ns(1), time_from_ms(3), time_to_us(2500), time_to_s(time_from_min(2)),
                time_from_days(1) = time_from_hours(24)",
    )
    .unwrap();
    assert_eq!(ints(&rows), [[1, 3_000_000, 2, 120, 1]]);
    // A wildcard includes what it names; `*` (every module, most of which
    // read trace tables this bare connection lacks) is included on real
    // engines in tests/all/stdlib_modules.rs.
    run(&p, &c, "INCLUDE PERFETTO MODULE time.*").unwrap();
}

#[test]
fn the_legacy_create_function_defines_a_function_for_the_next_statements() {
    let (p, c) = fresh();
    let rows = run(
        &p,
        &c,
        "SELECT create_function('f(x LONG)', 'STRING', 'SELECT ''v_'' || $x');
         SELECT f(5)",
    )
    .unwrap();
    assert_eq!(rows, [[Value::Text("v_5".into())]]);
    // Memoized, a doubly recursive function runs once per argument.
    run(
        &p,
        &c,
        "SELECT create_function('g(n LONG)', 'LONG',
           'SELECT CASE WHEN $n = 0 THEN 1 ELSE g($n - 1) + g($n - 1) END');
         SELECT experimental_memoize('g');",
    )
    .unwrap();
    assert_eq!(ints(&run(&p, &c, "SELECT g(40)").unwrap()), [[1 << 40]]);
    let (m, _) = error(&p, &c, "SELECT experimental_memoize('nothing')");
    assert!(m.contains("'nothing'(INT) does not exist"), "{m}");
    let (m, o) = error(
        &p,
        &c,
        "SELECT 1; SELECT create_function('h(x WIDGET)', 'LONG', 'SELECT 1')",
    );
    assert!(m.contains("unknown type 'WIDGET'"), "{m}");
    assert_eq!(o, Some(10));
}

#[test]
fn the_legacy_create_view_function_defines_a_table_function() {
    let (p, c) = fresh();
    let rows = run(
        &p,
        &c,
        "SELECT create_view_function('f(x INT)', 'result INT, twice INT',
           'SELECT $x + 1 AS result, $x * 2 AS twice');
         SELECT * FROM f(5)",
    )
    .unwrap();
    assert_eq!(ints(&rows), [[6, 10]]);
    let (m, _) = error(
        &p,
        &c,
        "SELECT create_view_function('g(x INT)', 'result INT', 'SELEC 1 AS result')",
    );
    assert!(m.starts_with("CREATE_VIEW_FUNCTION('g(x INT)')"), "{m}");
}

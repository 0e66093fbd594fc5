//! SQL never touches the filesystem unless asked (issue 61): by default
//! `ATTACH` of a file, `VACUUM INTO` a file, `load_extension()` and the
//! pragmas naming SQLite's directories are refused with a reason, and no
//! file appears; in-memory databases still attach; with file access on
//! the same statements work. The RPC session's SQL (the HTTP server's)
//! follows its load options.

use std::path::PathBuf;

use zerotrace_protos::protos::QueryArgs;
use zerotrace_trace_processor::rpc::RpcSession;
use zerotrace_trace_processor::rpc::decode::decode_query_result;
use zerotrace_trace_processor::{LoadOptions, TraceProcessor, Value};

/// A fresh directory of this test's own.
fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!(
        "zerotrace-tp-file-access-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn quoted(p: &std::path::Path) -> String {
    format!("'{}'", p.display().to_string().replace('\'', "''"))
}

fn refused(tp: &TraceProcessor, sql: &str) -> String {
    match tp.query(sql) {
        Ok(r) => panic!("{sql}: answered {r:?}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn attach_of_a_file_is_refused_by_default_and_creates_nothing() {
    let d = dir("attach");
    let db = d.join("x.db");
    let tp = TraceProcessor::from_bytes(&[]).unwrap();
    assert!(!tp.sql_file_access());
    let sql = format!(
        "ATTACH DATABASE {} AS x; CREATE TABLE x.t(a); INSERT INTO x.t VALUES (1)",
        quoted(&db)
    );
    let e = refused(&tp, &sql);
    assert!(
        e.contains("ATTACH of a file") && e.contains("--allow-sql-file-access"),
        "{e}"
    );
    // A name made by an expression is not looked at: refused too.
    let e = refused(&tp, &format!("ATTACH {} || '' AS y", quoted(&db)));
    assert!(e.contains("not a literal string"), "{e}");
    // A plain name read as a file, and URIs that are not in memory.
    for name in [
        format!("'file:{}'", db.display()),
        format!("'file:{}?mode=memory&vfs=unix'", db.display()),
        format!("'file:{}?mode=memory&mode=rwc'", db.display()),
    ] {
        let e = refused(&tp, &format!("ATTACH {name} AS z"));
        assert!(e.contains("ATTACH of a file"), "{name}: {e}");
    }
    assert!(!db.exists());
    assert_eq!(std::fs::read_dir(&d).unwrap().count(), 0);
}

#[test]
fn vacuum_into_a_file_is_refused_by_default() {
    let d = dir("vacuum");
    let out = d.join("copy.db");
    let tp = TraceProcessor::from_bytes(&[]).unwrap();
    let e = refused(&tp, &format!("VACUUM INTO {}", quoted(&out)));
    assert!(e.contains("--allow-sql-file-access"), "{e}");
    assert!(!out.exists());
    // An attached in-memory database cannot be the way out either.
    let e = refused(
        &tp,
        &format!("ATTACH ':memory:' AS m; VACUUM m INTO {}", quoted(&out)),
    );
    assert!(e.contains("--allow-sql-file-access"), "{e}");
    assert!(!out.exists());
    // Into memory is fine.
    tp.query("VACUUM INTO 'file:v?mode=memory'").unwrap();
}

#[test]
fn in_memory_databases_attach() {
    let tp = TraceProcessor::from_bytes(&[]).unwrap();
    let r = tp
        .query(
            "ATTACH ':memory:' AS m; CREATE TABLE m.t(a); INSERT INTO m.t VALUES (7); \
             ATTACH 'file:named?mode=memory' AS n; CREATE TABLE n.u(b); \
             SELECT a FROM m.t",
        )
        .unwrap();
    assert_eq!(r.rows, vec![vec![Value::Int(7)]]);
    tp.query("DETACH m; DETACH n").unwrap();
}

#[test]
fn extensions_and_directory_pragmas_are_refused() {
    let tp = TraceProcessor::from_bytes(&[]).unwrap();
    let e = refused(&tp, "SELECT load_extension('/nonexistent/libx.so')");
    assert!(e.contains("load_extension() is refused"), "{e}");
    let d = dir("pragma");
    let e = refused(
        &tp,
        &format!("PRAGMA temp_store_directory = {}", quoted(&d)),
    );
    assert!(e.contains("temp_store_directory"), "{e}");
    // The shell's file functions are not built in.
    let e = refused(&tp, "SELECT readfile('/etc/hostname')");
    assert!(e.contains("no such function"), "{e}");
    // Even with file access on, extensions stay off.
    tp.set_sql_file_access(true);
    let e = refused(&tp, "SELECT load_extension('/nonexistent/libx.so')");
    assert!(e.contains("load_extension() is refused"), "{e}");
}

#[test]
fn with_file_access_on_the_same_statements_work() {
    let d = dir("allowed");
    let db = d.join("x.db");
    let out = d.join("copy.db");
    let path = d.join("t.pftrace");
    std::fs::write(&path, []).unwrap();
    let tp = TraceProcessor::open_with_options(
        &path,
        LoadOptions {
            sql_file_access: true,
            ..LoadOptions::default()
        },
        |_| {},
    )
    .unwrap();
    assert!(tp.sql_file_access());
    tp.query(&format!(
        "ATTACH DATABASE {} AS x; CREATE TABLE x.t(a); INSERT INTO x.t VALUES (1); DETACH x",
        quoted(&db)
    ))
    .unwrap();
    assert!(db.exists());
    tp.query(&format!("VACUUM INTO {}", quoted(&out))).unwrap();
    assert!(out.exists());
    // And off again.
    tp.set_sql_file_access(false);
    let e = refused(&tp, &format!("ATTACH {} AS x", quoted(&db)));
    assert!(e.contains("ATTACH of a file"), "{e}");
}

fn rpc_query(s: &mut RpcSession, sql: &str) -> Option<String> {
    let mut w = protozero::HeapWriter::new();
    QueryArgs::from_message(w.root()).set_sql_query(sql);
    let answer = s.query(&w.to_vec()).concat();
    decode_query_result(&answer).unwrap().error
}

#[test]
fn the_rpc_sessions_sql_touches_no_file_unless_its_options_say() {
    let d = dir("rpc");
    let db = d.join("x.db");
    let sql = format!("ATTACH {} AS x; CREATE TABLE x.t(a); DETACH x", quoted(&db));
    // The empty trace a server starts with, and one sent over /parse.
    let mut s = RpcSession::new().unwrap();
    let e = rpc_query(&mut s, &sql).unwrap();
    assert!(e.contains("--allow-sql-file-access"), "{e}");
    s.parse(&[]);
    s.notify_eof().unwrap();
    let e = rpc_query(&mut s, &sql).unwrap();
    assert!(e.contains("--allow-sql-file-access"), "{e}");
    assert!(!db.exists());
    // Asked for: the traces loaded from then on may.
    s.set_load_options(LoadOptions {
        sql_file_access: true,
        ..LoadOptions::default()
    });
    s.parse(&[]);
    s.notify_eof().unwrap();
    assert_eq!(rpc_query(&mut s, &sql), None);
    assert!(db.exists());
}

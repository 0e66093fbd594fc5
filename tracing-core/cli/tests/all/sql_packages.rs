//! Users' SQL packages (`--add-sql-package PATH[@PACKAGE]`) on `zerotrace
//! sql`, `zerotrace-tp` (the classic flags Perfetto's Python client passes
//! and the `query`/`server http` subcommand form) and the RPC server: a
//! package's module runs on `INCLUDE`, a package named as a built-in one
//! is refused, an error in a user's file names the file and line, and
//! `.modules` / `__intrinsic_stdlib_objects` list the users' modules
//! beside ours.

#![cfg(feature = "sql")]

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use zerotrace_trace_processor::Value;
use zerotrace_trace_processor::rpc::decode::decode_query_result;

use crate::support::zerotrace;
use crate::tp_httpd::{connect, query_args, send};

const KEEP: &str = "Connection: keep-alive";

/// A temp dir holding an empty trace and package `mypkg`: `util.sql` (a
/// table and a function) and `sub/deep.sql` (a view over them, including
/// `mypkg.util`), and `broken/bad.sql` with an error on line 3.
fn fixture(name: &str) -> (PathBuf, PathBuf, PathBuf) {
    let d = std::env::temp_dir().join(format!("zt-sqlpkg-{}-{name}", std::process::id()));
    let pkg = d.join("mypkg");
    std::fs::create_dir_all(pkg.join("sub")).unwrap();
    std::fs::write(
        pkg.join("util.sql"),
        "-- The answer.\nCREATE PERFETTO TABLE my_answer AS SELECT 42 AS v;\n\
         CREATE PERFETTO FUNCTION my_double(x LONG) RETURNS LONG AS SELECT $x * 2;\n",
    )
    .unwrap();
    std::fs::write(
        pkg.join("sub/deep.sql"),
        "INCLUDE PERFETTO MODULE mypkg.util;\n\
         CREATE PERFETTO VIEW deep AS SELECT my_double(v) AS d FROM my_answer;\n",
    )
    .unwrap();
    let broken = d.join("broken");
    std::fs::create_dir_all(&broken).unwrap();
    std::fs::write(
        broken.join("bad.sql"),
        "CREATE PERFETTO TABLE fine AS SELECT 1 AS a;\n\n\
         CREATE PERFETTO TABLE worse AS SELECT nope FROM fine;\n",
    )
    .unwrap();
    let trace = d.join("t.pftrace");
    std::fs::write(&trace, b"").unwrap();
    (d, pkg, trace)
}

fn tp() -> Command {
    Command::new(env!("CARGO_BIN_EXE_zerotrace-tp"))
}

fn sql() -> Command {
    let mut c = zerotrace();
    c.arg("sql");
    c
}

fn out(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn arg(p: &Path) -> String {
    p.display().to_string()
}

#[test]
fn a_users_package_is_included_by_zerotrace_sql_and_zerotrace_tp() {
    let (d, pkg, trace) = fixture("include");
    let q = "INCLUDE PERFETTO MODULE mypkg.sub.deep; SELECT d FROM deep";
    let runs: Vec<(&str, Command)> = vec![
        ("zerotrace sql", {
            let mut c = sql();
            c.arg(&trace)
                .args(["--add-sql-package", &arg(&pkg), "-Q", q]);
            c
        }),
        ("zerotrace-tp classic", {
            let mut c = tp();
            c.arg(&trace)
                .args(["--add-sql-package", &arg(&pkg), "-Q", q]);
            c
        }),
        ("zerotrace-tp query", {
            let mut c = tp();
            c.args(["--add-sql-package", &arg(&pkg), "query"])
                .arg(&trace)
                .arg(q);
            c
        }),
        ("zerotrace-tp query, flag after", {
            let mut c = tp();
            c.arg("query")
                .arg(&trace)
                .arg(q)
                .args(["--add-sql-package", &arg(&pkg)]);
            c
        }),
    ];
    for (name, mut cmd) in runs {
        let o = cmd.output().unwrap();
        let (stdout, stderr) = out(&o);
        assert!(o.status.success(), "{name}: {stderr}");
        assert_eq!(stdout, "\"d\"\n84\n", "{name}");
    }
    // PATH@PACKAGE names the package; the wildcard reaches it.
    let o = sql()
        .arg(&trace)
        .args([
            "--add-sql-package",
            &format!("{}@acme.tools", pkg.display()),
            "-Q",
            "INCLUDE PERFETTO MODULE acme.*; SELECT my_double(v) AS x FROM my_answer",
        ])
        .output()
        .unwrap();
    let (stdout, stderr) = out(&o);
    // acme.tools.sub.deep includes mypkg.util, which is not registered.
    assert_eq!(o.status.code(), Some(1), "{stdout}");
    assert!(
        stderr.contains("Package 'mypkg.util' not found"),
        "{stderr}"
    );
    let o = sql()
        .arg(&trace)
        .args([
            "--add-sql-package",
            &format!("{}@acme.tools", pkg.display()),
            "-Q",
            "INCLUDE PERFETTO MODULE acme.tools.util; SELECT my_double(v) AS x FROM my_answer",
        ])
        .output()
        .unwrap();
    let (stdout, stderr) = out(&o);
    assert!(o.status.success(), "{stderr}");
    assert_eq!(stdout, "\"x\"\n84\n");
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_package_named_as_a_built_in_one_is_refused_and_errors_name_the_file_and_line() {
    let (d, pkg, trace) = fixture("refused");
    for name in ["slices", "slices.mine", "time"] {
        let o = sql()
            .arg(&trace)
            .args([
                "--add-sql-package",
                &format!("{}@{name}", pkg.display()),
                "-Q",
                "SELECT 1",
            ])
            .output()
            .unwrap();
        let (_, stderr) = out(&o);
        assert_eq!(o.status.code(), Some(1), "{name}: {stderr}");
        let built_in = name.split('.').next().unwrap();
        assert!(
            stderr.contains(&format!(
                "SQL package '{name}' clashes with the built-in package '{built_in}'"
            )),
            "{name}: {stderr}"
        );
    }
    // A directory named as a built-in package, with no @: refused too.
    let intervals = d.join("intervals");
    std::fs::create_dir_all(&intervals).unwrap();
    let o = tp()
        .args(["--add-sql-package", &arg(&intervals), "query"])
        .arg(&trace)
        .arg("SELECT 1")
        .output()
        .unwrap();
    let (_, stderr) = out(&o);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("built-in package 'intervals'"), "{stderr}");
    // A missing directory is named.
    let o = sql()
        .arg(&trace)
        .args(["--add-sql-package", "/nonexistent/zt-pkg", "-Q", "SELECT 1"])
        .output()
        .unwrap();
    let (_, stderr) = out(&o);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("/nonexistent/zt-pkg does not exist"),
        "{stderr}"
    );
    // An error in a user's module names its file, line and column.
    let o = sql()
        .arg(&trace)
        .args([
            "--add-sql-package",
            &arg(&d.join("broken")),
            "-Q",
            "INCLUDE PERFETTO MODULE broken.bad",
        ])
        .output()
        .unwrap();
    let (_, stderr) = out(&o);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("in module 'broken.bad' (")
            && stderr.contains("bad.sql, line 3, column")
            && stderr.contains("no such column: nope"),
        "{stderr}"
    );
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn the_modules_command_and_table_list_the_users_modules_beside_ours() {
    let (d, pkg, trace) = fixture("modules");
    let mut child = sql()
        .arg(&trace)
        .args(["--add-sql-package", &arg(&pkg)])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(
            b".modules mypkg\n.modules time.conversion\n\
              SELECT name, object_type, description FROM __intrinsic_stdlib_objects \
              WHERE package = 'mypkg' AND object_type != 'MODULE';\n",
        )
        .unwrap();
    let o = child.wait_with_output().unwrap();
    let (stdout, stderr) = out(&o);
    assert!(o.status.success(), "{stderr}");
    assert!(
        stdout.starts_with(
            "mypkg.sub.deep\n  VIEW           deep\nmypkg.util\n  TABLE          my_answer\n  \
             FUNCTION       my_double\ntime.conversion\n"
        ),
        "{stdout}"
    );
    assert!(stdout.contains("  FUNCTION       time_to_ns\n"), "{stdout}");
    assert!(
        stdout.ends_with(
            "\"name\",\"object_type\",\"description\"\n\"deep\",\"VIEW\",\"\"\n\
             \"my_answer\",\"TABLE\",\"The answer.\"\n\"my_double\",\"FUNCTION\",\"\"\n"
        ),
        "{stdout}"
    );
    std::fs::remove_dir_all(&d).unwrap();
}

/// Starts `cmd` (a server on port 0) and reads the address it serves on
/// from its stderr.
fn start_server(mut cmd: Command) -> (std::process::Child, std::net::SocketAddr) {
    let mut child = cmd.stderr(Stdio::piped()).spawn().unwrap();
    let mut addr = None;
    if let Some(stderr) = child.stderr.take() {
        let mut err = BufReader::new(stderr);
        let mut line = String::new();
        while addr.is_none() && err.read_line(&mut line).is_ok_and(|n| n > 0) {
            addr = line
                .split("http://")
                .nth(1)
                .and_then(|rest| rest.split_whitespace().next())
                .and_then(|a| a.parse().ok());
            line.clear();
        }
    }
    match addr {
        Some(a) => (child, a),
        None => {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the server stopped before saying where it serves");
        }
    }
}

fn rpc_query(c: &mut BufReader<std::net::TcpStream>, sql: &str) -> Vec<Vec<Value>> {
    let r = send(c, "POST", "/query", &[KEEP], &query_args(sql));
    let d = decode_query_result(&r.body).unwrap();
    assert_eq!(d.error, None, "{sql}");
    d.rows
}

#[test]
fn the_rpc_server_gives_every_trace_it_loads_the_users_packages() {
    let (d, pkg, trace) = fixture("server");
    let classic = {
        // What Perfetto's Python client passes.
        let mut c = tp();
        c.args([
            "-D",
            "--http-port",
            "0",
            "--no-ftrace-raw",
            "--dev",
            "--allow-sql-file-access",
            "--add-sql-package",
            &arg(&pkg),
        ]);
        c
    };
    let subcommand = {
        let mut c = tp();
        c.args(["--add-sql-package", &arg(&pkg), "server", "http"])
            .arg(&trace)
            .args(["--port", "0", "--ip-address", "127.0.0.1"]);
        c
    };
    let zerotrace_sql = {
        let mut c = sql();
        c.args(["--httpd", "127.0.0.1:0", "--add-sql-package", &arg(&pkg)]);
        c
    };
    for (name, cmd) in [
        ("classic", classic),
        ("subcommand", subcommand),
        ("zerotrace sql", zerotrace_sql),
    ] {
        let (mut child, addr) = start_server(cmd);
        let mut c = connect(addr);
        let q = "INCLUDE PERFETTO MODULE mypkg.sub.deep; SELECT d FROM deep";
        assert_eq!(rpc_query(&mut c, q), [[Value::Int(84)]], "{name}");
        // A trace sent over /parse gets them too.
        let r = send(&mut c, "POST", "/parse", &[KEEP], &[]);
        assert_eq!(r.status, "HTTP/1.1 200 OK", "{name}");
        let r = send(&mut c, "GET", "/notify_eof", &[KEEP], b"");
        assert_eq!(r.status, "HTTP/1.1 200 OK", "{name}");
        assert_eq!(rpc_query(&mut c, q), [[Value::Int(84)]], "{name}");
        child.kill().unwrap();
        child.wait().unwrap();
    }
    std::fs::remove_dir_all(&d).unwrap();
}

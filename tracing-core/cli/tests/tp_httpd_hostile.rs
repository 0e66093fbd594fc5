//! The trace processor's RPC server (`zerotrace sql --httpd`,
//! `zerotrace-tp -D`) against other users' processes on the same machine:
//! it serves its own uid and root, as the kernel names the peer of a
//! loopback connection, and answers anyone else 403 with the rule, for
//! `/status`, `/query` (no row of the trace) and `/parse` (the trace stays
//! as it was). A non-loopback address is a usage error unless
//! `--insecure-serve-remote-peers` is given, and then a warning says what
//! is exposed while local peers keep the rule.
//!
//! The servers run as child processes (as root, or as `nobody`); the other
//! users' clients are this test binary run again as those uids. (Its own
//! test binary: the children run one test of it by name.)

#![cfg(feature = "sql")]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use protozero::HeapWriter;
use zerotrace_protos::protos::{QueryArgs, TracePacket, track_event};
use zerotrace_trace_processor::Value;
use zerotrace_trace_processor::rpc::decode::decode_query_result;

mod uid_support;
// `nobody`: the other user, and in one test the server's own.
use uid_support::{NOBODY, root_or_say, run_as};

/// A third uid, neither root nor the server's.
const THIRD: u32 = 65533;
/// The client's part, run again as another uid: `ADDR|SERVER_UID|EXPECT`.
const CHILD_ENV: &str = "ZT_TP_HOSTILE_CHILD";
const CHILD_SAYS: &str = "child: answered as expected";

fn packet(f: impl FnOnce(&mut TracePacket<'_>)) -> Vec<u8> {
    let mut w = HeapWriter::new();
    {
        let mut p = TracePacket::from_message(w.root());
        f(&mut p);
    }
    let p = w.to_vec();
    let mut out = vec![0x0a];
    let mut n = p.len();
    while n >= 0x80 {
        out.push((n as u8) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
    out.extend_from_slice(&p);
    out
}

/// A trace of one track with one slice.
fn trace() -> Vec<u8> {
    let mut t = packet(|p| {
        p.set_trusted_packet_sequence_id(1);
        p.set_sequence_flags(1);
        let mut td = p.begin_track_descriptor();
        td.set_uuid(1);
        td.set_name("main");
    });
    for (ts, ty) in [
        (100, track_event::Type::SliceBegin),
        (350, track_event::Type::SliceEnd),
    ] {
        t.extend(packet(|p| {
            p.set_trusted_packet_sequence_id(1);
            p.set_timestamp(ts);
            let mut e = p.begin_track_event();
            e.set_track_uuid(1);
            e.set_type(ty);
            if ts == 100 {
                e.set_name("secret-work");
            }
        }));
    }
    t
}

/// A directory anyone may read, with the trace in it.
fn trace_file(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("zt-tp-hostile-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = d.join("t.pftrace");
    std::fs::write(&path, trace()).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    path
}

/// A server process, killed when dropped, and what it said on stderr.
struct ServerProc {
    child: Child,
    addr: SocketAddr,
}

impl Drop for ServerProc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `cmd` and waits for the line naming the address it serves on;
/// the lines before it are returned too.
fn start(mut cmd: Command) -> (ServerProc, Vec<String>) {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut said = Vec::new();
    let addr = loop {
        let Some(Ok(line)) = lines.next() else {
            let _ = child.kill();
            panic!("the server ended before serving: {said:#?}");
        };
        if let Some(rest) = line.split("RPC on http://").nth(1) {
            break rest.split_whitespace().next().unwrap().parse().unwrap();
        }
        said.push(line);
    };
    // Keep reading, so that the server never blocks on a full pipe.
    std::thread::spawn(move || lines.for_each(drop));
    (ServerProc { child, addr }, said)
}

/// One request on its own connection: the status line and the body
/// (chunks joined).
fn request(addr: SocketAddr, method: &str, path: &str, body: &[u8]) -> (String, Vec<u8>) {
    let mut s = TcpStream::connect(addr).unwrap();
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n",
        body.len()
    );
    s.write_all(head.as_bytes()).unwrap();
    s.write_all(body).unwrap();
    let mut r = BufReader::new(s);
    let mut status = String::new();
    r.read_line(&mut status).unwrap();
    let mut chunked = false;
    let mut len = None;
    loop {
        let mut l = String::new();
        r.read_line(&mut l).unwrap();
        let l = l.trim_end().to_ascii_lowercase();
        if l.is_empty() {
            break;
        }
        chunked |= l == "transfer-encoding: chunked";
        if let Some(n) = l.strip_prefix("content-length:") {
            len = Some(n.trim().parse::<usize>().unwrap());
        }
    }
    let mut out = Vec::new();
    if chunked {
        loop {
            let mut l = String::new();
            r.read_line(&mut l).unwrap();
            let n = usize::from_str_radix(l.trim_end(), 16).unwrap();
            let mut chunk = vec![0; n + 2];
            r.read_exact(&mut chunk).unwrap();
            if n == 0 {
                break;
            }
            out.extend_from_slice(&chunk[..n]);
        }
    } else {
        out = vec![0; len.unwrap_or(0)];
        r.read_exact(&mut out).unwrap();
    }
    (status.trim_end().to_owned(), out)
}

fn query_args(sql: &str) -> Vec<u8> {
    let mut w = HeapWriter::new();
    QueryArgs::from_message(w.root()).set_sql_query(sql);
    w.to_vec()
}

/// What `/query` of the slice count answers with, served.
fn slice_count(addr: SocketAddr) -> Vec<Vec<Value>> {
    let (status, body) = request(
        addr,
        "POST",
        "/query",
        &query_args("select count(*) from slice"),
    );
    assert_eq!(status, "HTTP/1.1 200 OK");
    decode_query_result(&body).unwrap().rows
}

/// The client's part, as whichever uid it runs as: served, or refused on
/// every endpoint with the rule.
fn client(args: &str) {
    let mut parts = args.split('|');
    let (addr, server_uid, expect) = (
        parts.next().unwrap().parse::<SocketAddr>().unwrap(),
        parts.next().unwrap().parse::<u32>().unwrap(),
        parts.next().unwrap(),
    );
    let me = rustix::process::getuid().as_raw();
    match expect {
        "served" => {
            assert_eq!(request(addr, "GET", "/status", b"").0, "HTTP/1.1 200 OK");
            assert_eq!(slice_count(addr), [[Value::Int(1)]]);
        }
        "refused" => {
            let rule = format!("serves uid {server_uid} and root only; uid {me} is refused");
            for (method, path, body) in [
                ("GET", "/status", Vec::new()),
                ("POST", "/query", query_args("select count(*) from slice")),
                ("POST", "/query", query_args("select name from slice")),
                ("POST", "/parse", trace()),
                ("POST", "/restore_initial_tables", Vec::new()),
            ] {
                let (status, body) = request(addr, method, path, &body);
                let text = String::from_utf8_lossy(&body);
                assert_eq!(status, "HTTP/1.1 403 Forbidden", "{path}: {text}");
                assert!(text.contains(&rule), "{path}: {text}");
                assert!(!text.contains("secret-work"), "{path}: {text}");
            }
        }
        other => panic!("{other}"),
    }
    println!("{CHILD_SAYS}");
}

/// Runs this test's client part as `uid`.
fn client_as(test: &str, uid: u32, addr: SocketAddr, server_uid: u32, expect: &str) {
    let out = run_as(
        uid,
        test,
        CHILD_ENV,
        &format!("{addr}|{server_uid}|{expect}"),
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains(CHILD_SAYS),
        "uid {uid} expecting {expect}: {}\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The trace is as it was loaded, and root is served.
fn root_is_served(addr: SocketAddr) {
    assert_eq!(request(addr, "GET", "/status", b"").0, "HTTP/1.1 200 OK");
    assert_eq!(slice_count(addr), [[Value::Int(1)]]);
}

#[test]
fn zerotrace_sql_httpd_as_root_refuses_another_user() {
    const TEST: &str = "zerotrace_sql_httpd_as_root_refuses_another_user";
    if let Ok(args) = std::env::var(CHILD_ENV) {
        return client(&args);
    }
    if !root_or_say(TEST) {
        return;
    }
    let path = trace_file("sql");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_zerotrace"));
    cmd.args(["sql", "--httpd", "127.0.0.1:0"]).arg(&path);
    let (server, _) = start(cmd);
    root_is_served(server.addr);
    client_as(TEST, NOBODY, server.addr, 0, "refused");
    // Its /parse and /restore_initial_tables changed nothing.
    root_is_served(server.addr);
    let _ = std::fs::remove_dir_all(path.parent().unwrap());
}

#[test]
fn zerotrace_tp_as_nobody_serves_nobody_and_root_only() {
    const TEST: &str = "zerotrace_tp_as_nobody_serves_nobody_and_root_only";
    if let Ok(args) = std::env::var(CHILD_ENV) {
        return client(&args);
    }
    if !root_or_say(TEST) {
        return;
    }
    let path = trace_file("tp");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_zerotrace-tp"));
    cmd.args(["-D", "--http-port", "0"])
        .arg(&path)
        .uid(NOBODY)
        .gid(NOBODY);
    let (server, _) = start(cmd);
    // Root, and the server's own uid, are served; a third uid is not.
    root_is_served(server.addr);
    client_as(TEST, NOBODY, server.addr, NOBODY, "served");
    client_as(TEST, THIRD, server.addr, NOBODY, "refused");
    root_is_served(server.addr);
    let _ = std::fs::remove_dir_all(path.parent().unwrap());
}

fn usage_error(mut cmd: Command) -> String {
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!out.status.success(), "{stderr}");
    stderr
}

#[test]
fn beyond_loopback_only_with_the_flag_and_a_warning() {
    const TEST: &str = "beyond_loopback_only_with_the_flag_and_a_warning";
    if let Ok(args) = std::env::var(CHILD_ENV) {
        return client(&args);
    }
    let mut sql = Command::new(env!("CARGO_BIN_EXE_zerotrace"));
    sql.args(["sql", "--httpd", "0.0.0.0:0"]);
    let mut tp = Command::new(env!("CARGO_BIN_EXE_zerotrace-tp"));
    tp.args(["-D", "--http-ip-address", "0.0.0.0", "--http-port", "0"]);
    for cmd in [sql, tp] {
        let e = usage_error(cmd);
        assert!(
            e.contains("0.0.0.0:0 is not a loopback address")
                && e.contains("--insecure-serve-remote-peers"),
            "{e}"
        );
    }
    if !root_or_say(TEST) {
        return;
    }
    // With the flag: a warning that says what is exposed, and local peers
    // of other users still refused.
    let path = trace_file("remote");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_zerotrace"));
    cmd.args([
        "sql",
        "--httpd",
        "0.0.0.0:0",
        "--insecure-serve-remote-peers",
    ])
    .arg(&path);
    let (server, said) = start(cmd);
    let said = said.join("\n");
    assert!(
        said.contains("WARNING") && said.contains("read the loaded trace, run SQL over it"),
        "{said}"
    );
    let local: SocketAddr = ([127, 0, 0, 1], server.addr.port()).into();
    root_is_served(local);
    client_as(TEST, NOBODY, local, 0, "refused");
    let _ = std::fs::remove_dir_all(Path::new(&path).parent().unwrap());
}

//! The trace processor's HTTP server against web pages and clients that
//! would hold it hostage (issue 61): a `GET` (an `<img>` tag's) changes
//! nothing, a `Host` naming another server (DNS rebinding) is refused,
//! `/status` answers while a query runs, a query stops when its client
//! hangs up, idle keep-alive connections do not lock working clients out
//! (one that never asks is closed, one served waits without a clock),
//! a gzip trace loads over `/parse`, and the endpoints not served answer
//! so that Google's client raises.

#![cfg(feature = "sql")]

use std::io::{Read, Write};
use std::net::{Shutdown, TcpStream};
use std::time::Duration;

use zerotrace_cli::tp_httpd::MAX_CONNECTIONS;
use zerotrace_protos::protos::AppendTraceDataResultDecoder;
use zerotrace_trace_processor::Value;
use zerotrace_trace_processor::rpc::decode::decode_query_result;

use super::tp_httpd::{KEEP, connect, query_args, read_response, send, start, trace};

/// A query that steps forever and sends nothing until its end.
const ENDLESS: &str = "WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s) \
                       SELECT count(*) FROM s";

/// Long enough that only a server that never answers reaches it: what
/// makes a hang a failure.
const NEVER: Duration = Duration::from_secs(120);

fn load_trace(addr: std::net::SocketAddr) {
    let mut c = connect(addr);
    let r = send(&mut c, "POST", "/parse", &[KEEP], &trace());
    assert_eq!(AppendTraceDataResultDecoder::new(&r.body).error(), None);
    send(&mut c, "POST", "/notify_eof", &[KEEP], b"");
}

fn threads(addr: std::net::SocketAddr) -> usize {
    let mut c = connect(addr);
    c.get_ref().set_read_timeout(Some(NEVER)).unwrap();
    let r = send(
        &mut c,
        "POST",
        "/query",
        &[],
        &query_args("SELECT tid FROM thread WHERE tid IN (6, 7)"),
    );
    let d = decode_query_result(&r.body).unwrap();
    assert_eq!(d.error, None);
    d.rows.len()
}

#[test]
fn a_get_from_a_web_page_changes_nothing() {
    let addr = start();
    load_trace(addr);
    assert_eq!(threads(addr), 2);
    // As an <img src="http://127.0.0.1:9001/parse"> sends them.
    for path in [
        "/parse",
        "/restore_initial_tables",
        "/query",
        "/rpc",
        "/notify_eof",
    ] {
        let r = send(
            &mut connect(addr),
            "GET",
            path,
            &["Sec-Fetch-Site: cross-site", "Sec-Fetch-Mode: no-cors"],
            b"",
        );
        assert_eq!(r.status, "HTTP/1.1 405 Method Not Allowed", "{path}");
        assert_eq!(r.header("allow"), Some("POST"), "{path}");
        assert!(String::from_utf8_lossy(&r.body).contains("POST only"));
    }
    // A form's POST to /parse is a POST, but the page's Origin is refused.
    let r = send(
        &mut connect(addr),
        "POST",
        "/parse",
        &["Origin: https://evil.example"],
        b"",
    );
    assert_eq!(r.status, "HTTP/1.1 403 Forbidden");
    // The trace is still loaded.
    assert_eq!(threads(addr), 2);
    // Google's Python client ends a trace with a GET /notify_eof: still
    // served.
    let r = send(&mut connect(addr), "GET", "/notify_eof", &[], b"");
    assert_eq!(r.status, "HTTP/1.1 200 OK");
}

/// Sends a raw request head and reads the answer.
fn raw(addr: std::net::SocketAddr, head: &str) -> super::tp_httpd::Response {
    let mut c = connect(addr);
    c.get_mut().write_all(head.as_bytes()).unwrap();
    read_response(&mut c)
}

#[test]
fn a_host_that_is_not_the_server_is_refused() {
    let addr = start();
    let port = addr.port();
    for host in [
        format!("evil.example:{port}"),
        format!("127.0.0.1:{}", port.wrapping_add(1)),
        "localhost".to_owned(),
    ] {
        let r = raw(
            addr,
            &format!("GET /status HTTP/1.1\r\nHost: {host}\r\n\r\n"),
        );
        assert_eq!(r.status, "HTTP/1.1 403 Forbidden", "{host}");
        assert!(String::from_utf8_lossy(&r.body).contains("DNS rebinding"));
    }
    let r = raw(addr, "GET /status HTTP/1.1\r\n\r\n");
    assert_eq!(r.status, "HTTP/1.1 403 Forbidden");
    // What Google's client sends (http.client: Host is the addr given).
    for host in [format!("127.0.0.1:{port}"), format!("localhost:{port}")] {
        let r = raw(
            addr,
            &format!("GET /status HTTP/1.1\r\nHost: {host}\r\nAccept-Encoding: identity\r\n\r\n"),
        );
        assert_eq!(r.status, "HTTP/1.1 200 OK", "{host}");
    }
}

#[test]
fn status_answers_while_a_query_runs_and_a_client_gone_stops_its_query() {
    let addr = start();
    load_trace(addr);
    // A query that would run forever, from a client that keeps waiting.
    let mut busy = connect(addr);
    let host = format!("Host: {addr}");
    let body = query_args(ENDLESS);
    let req = format!(
        "POST /query HTTP/1.1\r\n{host}\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    busy.get_mut().write_all(req.as_bytes()).unwrap();
    busy.get_mut().write_all(&body).unwrap();
    // Its answer's head comes before the query runs; /status answers
    // meanwhile (a server that took the session for it never would).
    let mut head = [0u8; 15];
    busy.read_exact(&mut head).unwrap();
    assert_eq!(&head, b"HTTP/1.1 200 OK");
    for _ in 0..3 {
        let mut c = connect(addr);
        c.get_ref().set_read_timeout(Some(NEVER)).unwrap();
        let r = send(&mut c, "GET", "/status", &[], b"");
        assert_eq!(r.status, "HTTP/1.1 200 OK");
    }
    // The client hangs up: its query stops, and the next one is answered.
    busy.get_ref().shutdown(Shutdown::Both).unwrap();
    drop(busy);
    assert_eq!(threads(addr), 2);

    // The same for a client that sent its query and left at once.
    let mut gone = TcpStream::connect(addr).unwrap();
    gone.write_all(req.as_bytes()).unwrap();
    gone.write_all(&body).unwrap();
    drop(gone);
    assert_eq!(threads(addr), 2);
}

#[test]
fn idle_keep_alive_connections_do_not_lock_working_clients_out() {
    let addr = start();
    // As many connections as the server serves at once, each served once
    // and then kept open, waiting.
    let idle: Vec<_> = (0..MAX_CONNECTIONS)
        .map(|_| {
            let mut c = connect(addr);
            let r = send(&mut c, "GET", "/status", &[KEEP], b"");
            assert_eq!(r.status, "HTTP/1.1 200 OK");
            c
        })
        .collect();
    // A new client is served. (A server thread stops counting its
    // connection just after answering; a newcomer may come first.)
    let served = (0..2000).any(|_| {
        let r = send(&mut connect(addr), "GET", "/status", &[], b"");
        if r.status == "HTTP/1.1 200 OK" {
            return true;
        }
        assert_eq!(r.status, "HTTP/1.1 503 Service Unavailable");
        std::thread::sleep(Duration::from_millis(10));
        false
    });
    assert!(served);
    // And the idle ones still work.
    for mut c in idle {
        let r = send(&mut c, "GET", "/status", &[], b"");
        assert_eq!(r.status, "HTTP/1.1 200 OK");
    }
}

#[test]
fn a_connection_that_never_asks_is_closed_and_a_served_one_waits() {
    let wait = Duration::from_millis(300);
    let server = zerotrace_cli::tp_httpd::Server::bind(
        "127.0.0.1:0",
        zerotrace_trace_processor::rpc::RpcSession::new().unwrap(),
        zerotrace_cli::tp_httpd::ServerOptions {
            first_request_timeout: Some(wait),
            ..Default::default()
        },
    )
    .unwrap();
    let addr = server.local_addr().unwrap();
    std::thread::spawn(move || server.run());
    // Served once, then idle for several times the first wait.
    let mut client = connect(addr);
    let r = send(&mut client, "GET", "/status", &[KEEP], b"");
    assert_eq!(r.status, "HTTP/1.1 200 OK");
    // Connected, never asking: the server closes it.
    let mut silent = TcpStream::connect(addr).unwrap();
    silent.set_read_timeout(Some(NEVER)).unwrap();
    let mut byte = [0u8; 1];
    assert_eq!(
        silent.read(&mut byte).unwrap(),
        0,
        "a connection that sends no request is closed"
    );
    std::thread::sleep(wait * 3);
    // The served connection, idle all that time, still answers.
    let r = send(&mut client, "GET", "/status", &[], b"");
    assert_eq!(r.status, "HTTP/1.1 200 OK");
}

#[test]
fn a_gzip_trace_loads_over_parse() {
    let addr = start();
    let mut z = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    z.write_all(&trace()).unwrap();
    let z = z.finish().unwrap();
    let mut c = connect(addr);
    // Google's client sends a file in chunks; the magic's two bytes apart.
    let (a, b) = z.split_at(1);
    for chunk in [a, b] {
        let r = send(&mut c, "POST", "/parse", &[KEEP], chunk);
        assert_eq!(AppendTraceDataResultDecoder::new(&r.body).error(), None);
    }
    send(&mut c, "GET", "/notify_eof", &[KEEP], b"");
    let r = send(
        &mut c,
        "POST",
        "/query",
        &[KEEP],
        &query_args("SELECT name FROM thread WHERE tid = 6"),
    );
    let d = decode_query_result(&r.body).unwrap();
    assert_eq!(d.rows, [[Value::Text("worker".into())]]);
}

/// The string in field `field` of the message `bytes`, if any.
fn string_field(bytes: &[u8], field: u8) -> Option<String> {
    let (&tag, rest) = bytes.split_first()?;
    if tag != field << 3 | 2 {
        return None;
    }
    let (mut len, mut shift, mut at) = (0usize, 0, 0);
    loop {
        let b = *rest.get(at)?;
        len |= usize::from(b & 0x7f) << shift;
        at += 1;
        shift += 7;
        if b < 0x80 {
            break;
        }
    }
    let text = rest.get(at..at + len)?;
    Some(String::from_utf8_lossy(text).into_owned())
}

#[test]
fn endpoints_not_served_answer_so_that_the_client_raises() {
    let addr = start();
    // Each result message with its `error` set, in the field upstream's
    // result has it (what the Python client raises on).
    for (method, path, field) in [
        ("POST", "/compute_metric", 2),
        ("POST", "/trace_summary", 3),
        ("GET", "/disable_and_read_metatrace", 2),
    ] {
        let r = send(&mut connect(addr), method, path, &[], b"");
        assert_eq!(r.status, "HTTP/1.1 200 OK", "{path}");
        let error = string_field(&r.body, field).expect(path);
        assert!(error.contains("is not supported"), "{path}: {error}");
    }
    let r = send(&mut connect(addr), "GET", "/enable_metatrace", &[], b"");
    assert_eq!(r.status, "HTTP/1.1 501 Not Implemented");
    assert!(!r.body.is_empty());
    // /export: the reason in a chunk, then the connection ends without
    // the last chunk (as upstream's failed export: the client raises).
    let mut c = connect(addr);
    let host = format!("Host: {addr}");
    c.get_mut()
        .write_all(
            format!("POST /export HTTP/1.1\r\n{host}\r\nContent-Length: 0\r\n\r\n").as_bytes(),
        )
        .unwrap();
    let mut all = Vec::new();
    c.read_to_end(&mut all).unwrap();
    let text = String::from_utf8_lossy(&all);
    assert!(text.starts_with("HTTP/1.1 501 Not Implemented"), "{text}");
    assert!(text.contains("export is not supported"));
    assert!(!text.ends_with("0\r\n\r\n"));
    // Anything else: 404 with a reason, never an empty body.
    let r = send(&mut connect(addr), "POST", "/nope", &[], b"");
    assert_eq!(r.status, "HTTP/1.1 404 Not Found");
    assert!(!r.body.is_empty());
}

#[test]
fn a_query_past_the_time_limit_stops_naming_it() {
    use std::io::BufRead;
    use std::process::{Command, Stdio};
    let mut child = Command::new(env!("CARGO_BIN_EXE_zerotrace"))
        .args(["sql", "--httpd", "127.0.0.1:0", "--query-timeout", "0.05"])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let addr = loop {
        let mut line = String::new();
        assert_ne!(stderr.read_line(&mut line).unwrap(), 0, "no address");
        if let Some(rest) = line.split("http://").nth(1) {
            break rest.split_whitespace().next().unwrap().parse().unwrap();
        }
    };
    let mut c = connect(addr);
    c.get_ref().set_read_timeout(Some(NEVER)).unwrap();
    let r = send(&mut c, "POST", "/query", &[], &query_args(ENDLESS));
    let d = decode_query_result(&r.body).unwrap();
    let _ = child.kill();
    let _ = child.wait();
    let e = d.error.expect("stopped");
    assert!(e.contains("time limit of 0.05 s"), "{e}");
}

//! The trace processor's HTTP server on an ephemeral port, spoken to as
//! Perfetto's Python client and UI speak to it: `/status`, `/parse` in
//! chunks, `/notify_eof`, `/query`, `/restore_initial_tables`, `/rpc` and
//! `/websocket`, the origin checks and the request bounds. Answers are
//! read with the generated decoders and compared with the trace
//! processor's own answers.

#![cfg(feature = "sql")]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};

use protozero::HeapWriter;
use zerotrace_cli::tp_httpd::{Server, ServerOptions};
use zerotrace_protos::protos::trace_processor_rpc::TraceProcessorMethod;
use zerotrace_protos::protos::{
    AppendTraceDataResultDecoder, QueryArgs, StatusResultDecoder, TracePacket,
    TraceProcessorRpcDecoder, TraceProcessorRpcStream, TraceProcessorRpcStreamDecoder,
};
use zerotrace_trace_processor::TraceProcessor;
use zerotrace_trace_processor::rpc::decode::decode_query_result;
use zerotrace_trace_processor::rpc::{API_VERSION, RpcSession};

pub(crate) fn start() -> SocketAddr {
    let server = Server::bind(
        "127.0.0.1:0",
        RpcSession::new().unwrap(),
        ServerOptions::default(),
    )
    .unwrap();
    let addr = server.local_addr().unwrap();
    std::thread::spawn(move || server.run());
    addr
}

/// A response: status line, headers (lowercased names), body (chunks joined).
pub(crate) struct Response {
    pub(crate) status: String,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: Vec<u8>,
}

impl Response {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Sends one request on `conn` (its `Host` the server's address) and
/// reads its response.
pub(crate) fn send(
    conn: &mut BufReader<TcpStream>,
    method: &str,
    path: &str,
    extra: &[&str],
    body: &[u8],
) -> Response {
    let host = conn.get_ref().peer_addr().unwrap();
    let mut req = format!(
        "{method} {path} HTTP/1.1\r\nHost: {host}\r\nContent-Length: {}\r\n",
        body.len()
    );
    for h in extra {
        req += h;
        req += "\r\n";
    }
    req += "\r\n";
    let s = conn.get_mut();
    s.write_all(req.as_bytes()).unwrap();
    s.write_all(body).unwrap();
    read_response(conn)
}

fn read_line(conn: &mut BufReader<TcpStream>) -> String {
    let mut l = String::new();
    conn.read_line(&mut l).unwrap();
    l.trim_end().to_owned()
}

pub(crate) fn read_response(conn: &mut BufReader<TcpStream>) -> Response {
    let status = read_line(conn);
    let mut headers = Vec::new();
    loop {
        let l = read_line(conn);
        if l.is_empty() {
            break;
        }
        let (n, v) = l.split_once(':').unwrap();
        headers.push((n.to_ascii_lowercase(), v.trim().to_owned()));
    }
    let mut r = Response {
        status,
        headers,
        body: Vec::new(),
    };
    if r.header("transfer-encoding") == Some("chunked") {
        loop {
            let n = usize::from_str_radix(&read_line(conn), 16).unwrap();
            let mut chunk = vec![0; n + 2];
            conn.read_exact(&mut chunk).unwrap();
            if n == 0 {
                break;
            }
            r.body.extend_from_slice(&chunk[..n]);
        }
    } else {
        let n: usize = r.header("content-length").unwrap_or("0").parse().unwrap();
        r.body = vec![0; n];
        conn.read_exact(&mut r.body).unwrap();
    }
    r
}

pub(crate) fn connect(addr: SocketAddr) -> BufReader<TcpStream> {
    BufReader::new(TcpStream::connect(addr).unwrap())
}

pub(crate) fn query_args(sql: &str) -> Vec<u8> {
    let mut w = HeapWriter::new();
    QueryArgs::from_message(w.root()).set_sql_query(sql);
    w.to_vec()
}

/// A trace of two named threads with a slice each, as `Trace` bytes.
pub(crate) fn trace() -> Vec<u8> {
    let mut out = Vec::new();
    for (uuid, tid, name) in [(10u64, 6, "worker"), (11, 7, "io")] {
        let mut w = HeapWriter::new();
        {
            let mut p = TracePacket::from_message(w.root());
            p.set_trusted_packet_sequence_id(1);
            let mut td = p.begin_track_descriptor();
            td.set_uuid(uuid);
            td.begin_thread()
                .set_pid(5)
                .set_tid(tid)
                .set_thread_name(name);
        }
        push_packet(&mut out, &w.to_vec());
    }
    out
}

fn push_packet(out: &mut Vec<u8>, packet: &[u8]) {
    out.push(0x0a);
    let mut n = packet.len() as u64;
    while n >= 0x80 {
        out.push((n as u8) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
    out.extend_from_slice(packet);
}

pub(crate) const KEEP: &str = "Connection: keep-alive";

#[test]
fn a_trace_parsed_over_http_answers_queries_as_the_trace_processor_does() {
    let addr = start();
    let mut c = connect(addr);
    let r = send(&mut c, "GET", "/status", &[KEEP], b"");
    assert_eq!(r.status, "HTTP/1.1 200 OK");
    assert_eq!(r.header("connection"), Some("keep-alive"));
    let st = StatusResultDecoder::new(&r.body);
    assert_eq!(st.api_version(), Some(API_VERSION));

    let t = trace();
    let (a, b) = t.split_at(t.len() / 3);
    for chunk in [a, b] {
        let r = send(&mut c, "POST", "/parse", &[KEEP], chunk);
        assert_eq!(r.status, "HTTP/1.1 200 OK");
        assert_eq!(AppendTraceDataResultDecoder::new(&r.body).error(), None);
    }
    let r = send(&mut c, "GET", "/notify_eof", &[KEEP], b"");
    assert_eq!(r.status, "HTTP/1.1 200 OK");

    let local = TraceProcessor::from_bytes(&t).unwrap();
    for sql in [
        "SELECT utid, tid, name, upid FROM thread ORDER BY utid",
        "SELECT pid, name FROM process ORDER BY upid",
        "SELECT 1.5 AS x, NULL AS y, x'0102' AS z",
    ] {
        let r = send(&mut c, "POST", "/query", &[KEEP], &query_args(sql));
        assert_eq!(r.header("transfer-encoding"), Some("chunked"));
        let d = decode_query_result(&r.body).unwrap();
        let want = local.query(sql).unwrap();
        assert_eq!(d.columns, want.columns, "{sql}");
        assert_eq!(d.rows, want.rows, "{sql}");
        assert!(d.complete && d.error.is_none());
    }

    let r = send(
        &mut c,
        "POST",
        "/query",
        &[KEEP],
        &query_args("SELECT x FROM nowhere"),
    );
    let d = decode_query_result(&r.body).unwrap();
    assert!(d.error.unwrap().ends_with("no such table: nowhere"));

    send(
        &mut c,
        "POST",
        "/query",
        &[KEEP],
        &query_args("CREATE TABLE mine AS SELECT 1"),
    );
    let r = send(&mut c, "POST", "/restore_initial_tables", &[KEEP], b"");
    assert_eq!(r.status, "HTTP/1.1 200 OK");
    let r = send(
        &mut c,
        "POST",
        "/query",
        &[KEEP],
        &query_args("SELECT * FROM mine"),
    );
    assert!(decode_query_result(&r.body).unwrap().error.is_some());

    // Without keep-alive the server says close and closes.
    let r = send(&mut c, "GET", "/nope", &[], b"");
    assert_eq!(r.status, "HTTP/1.1 404 Not Found");
    assert_eq!(r.header("connection"), Some("close"));
    let mut rest = Vec::new();
    assert_eq!(c.read_to_end(&mut rest).unwrap(), 0);
}

#[test]
fn origins_are_checked_as_upstream_checks_them() {
    let addr = start();
    let r = send(
        &mut connect(addr),
        "GET",
        "/status",
        &["Origin: https://evil.example"],
        b"",
    );
    assert_eq!(r.status, "HTTP/1.1 403 Forbidden");
    assert_eq!(r.body, b"Origin not allowed");
    // The UI's origin is let in (CORS headers back) ...
    let r = send(
        &mut connect(addr),
        "GET",
        "/",
        &["Origin: https://ui.perfetto.dev"],
        b"",
    );
    assert_eq!(r.status, "HTTP/1.1 200 OK");
    assert_eq!(
        r.header("access-control-allow-origin"),
        Some("https://ui.perfetto.dev")
    );
    assert_eq!(r.header("vary"), Some("Origin"));
    // ... but its probe of /status, as the UI sends it, is told no (with
    // the reason, readable by the page), so it keeps its built-in engine
    // rather than draw a trace with SQL this server does not have.
    for origin in ["https://ui.perfetto.dev", "http://localhost:10000"] {
        let r = send(
            &mut connect(addr),
            "POST",
            "/status",
            &[&format!("Origin: {origin}")],
            b"",
        );
        assert_eq!(r.status, "HTTP/1.1 403 Forbidden", "{origin}");
        assert_eq!(r.header("access-control-allow-origin"), Some(origin));
        assert!(
            String::from_utf8_lossy(&r.body).contains("PerfettoSQL's standard library"),
            "{origin}"
        );
    }
    let r = send(
        &mut connect(addr),
        "OPTIONS",
        "/query",
        &["Origin: https://evil.example"],
        b"",
    );
    assert_eq!(r.status, "HTTP/1.1 204 No Content");
    assert_eq!(
        r.header("access-control-allow-methods"),
        Some("POST, GET, OPTIONS")
    );
    assert_eq!(r.header("access-control-allow-origin"), None);
    // No Origin (a script, the Python client): served, no CORS header.
    let r = send(&mut connect(addr), "GET", "/status", &[], b"");
    assert_eq!(r.status, "HTTP/1.1 200 OK");
    assert_eq!(r.header("access-control-allow-origin"), None);
}

#[test]
fn oversized_requests_are_refused() {
    let addr = start();
    let mut c = connect(addr);
    c.get_mut()
        .write_all(b"POST /parse HTTP/1.1\r\nContent-Length: 67108865\r\n\r\n")
        .unwrap();
    let r = read_response(&mut c);
    assert_eq!(r.status, "HTTP/1.1 413 Payload Too Large");
}

fn rpc_request(seq: i64, method: TraceProcessorMethod, sql: Option<&str>) -> Vec<u8> {
    let mut w = HeapWriter::new();
    {
        let mut s = TraceProcessorRpcStream::from_message(w.root());
        let mut m = s.add_msg();
        m.set_seq(seq).set_request(method);
        if let Some(sql) = sql {
            m.begin_query_args().set_sql_query(sql);
        }
    }
    w.to_vec()
}

fn messages(stream: &[u8]) -> Vec<Vec<u8>> {
    TraceProcessorRpcStreamDecoder::new(stream)
        .msg_bytes()
        .map(<[u8]>::to_vec)
        .collect()
}

#[test]
fn the_framed_stream_works_over_rpc_and_the_websocket() {
    let addr = start();
    let mut body = rpc_request(1, TraceProcessorMethod::TpmGetStatus, None);
    body.extend(rpc_request(
        2,
        TraceProcessorMethod::TpmQueryStreaming,
        Some("SELECT 40 + 2 AS answer"),
    ));
    let r = send(&mut connect(addr), "POST", "/rpc", &[], &body);
    assert_eq!(r.header("transfer-encoding"), Some("chunked"));
    let msgs = messages(&r.body);
    assert_eq!(msgs.len(), 2);
    let status = TraceProcessorRpcDecoder::new(&msgs[0]);
    assert_eq!(status.status().unwrap().api_version(), Some(API_VERSION));
    let q = TraceProcessorRpcDecoder::new(&msgs[1]);
    let d = decode_query_result(q.query_result_bytes().unwrap()).unwrap();
    assert_eq!(d.columns, ["answer"]);

    // The WebSocket wants an allowed origin.
    let url = format!("ws://{addr}/websocket");
    let plain = tungstenite::client::IntoClientRequest::into_client_request(url.as_str()).unwrap();
    let e = tungstenite::client::client(plain, TcpStream::connect(addr).unwrap()).unwrap_err();
    assert!(e.to_string().contains("403"), "{e}");

    let mut req =
        tungstenite::client::IntoClientRequest::into_client_request(url.as_str()).unwrap();
    req.headers_mut()
        .insert("Origin", "https://ui.perfetto.dev".parse().unwrap());
    let (mut ws, _) = tungstenite::client::client(req, TcpStream::connect(addr).unwrap()).unwrap();
    // A fresh stream restarts its sequence at 1.
    ws.send(tungstenite::Message::binary(rpc_request(
        0,
        TraceProcessorMethod::TpmQueryStreaming,
        Some("SELECT 'ws' AS via"),
    )))
    .unwrap();
    let m = ws.read().unwrap().into_data();
    let msgs = messages(&m);
    let q = TraceProcessorRpcDecoder::new(&msgs[0]);
    assert_eq!(q.response(), Some(TraceProcessorMethod::TpmQueryStreaming));
    let d = decode_query_result(q.query_result_bytes().unwrap()).unwrap();
    assert_eq!(
        d.rows,
        [[zerotrace_trace_processor::Value::Text("ws".into())]]
    );
}

#[test]
fn connections_past_the_limit_are_turned_away() {
    let addr = start();
    // Requests begun and not finished count (idle connections do not:
    // tp_httpd_guards).
    let held: Vec<TcpStream> = (0..zerotrace_cli::tp_httpd::MAX_CONNECTIONS)
        .map(|_| {
            let mut c = TcpStream::connect(addr).unwrap();
            c.write_all(b"GET /status HTTP/1.1\r\n").unwrap();
            c
        })
        .collect();
    // Each server thread counts its connection again once it has read the
    // begun head; until all have, a newcomer may still get in.
    let refused = (0..2000).any(|_| {
        let r = send(&mut connect(addr), "GET", "/status", &[], b"");
        if r.status == "HTTP/1.1 503 Service Unavailable" {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
        false
    });
    assert!(refused);
    drop(held);
}

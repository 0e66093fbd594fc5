//! The WebSocket bridge against hostile local clients. Any local program
//! can forge the `Origin` of the UI, so the origin decides nothing about
//! identity: a process of another user that connects with the UI's origin
//! is a consumer of its own uid, which can neither clone a session root
//! started nor have the service (root here) create a file. Also: a service
//! that cannot be reached is 503 (as Perfetto's bridge), `localhost`
//! listens on `[::1]` too, text frames carry bytes as binary ones do, a
//! handshake that dawdles or never ends is cut, and 10,000 sockets opened
//! at once neither take the service down nor keep the bridge from serving
//! once they are gone.
//! (Its own test binary, not a module of `all/`: it counts the process's
//! threads, and opens 10,000 sockets in it.)

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use protozero::{Decoder, HeapWriter};
use tungstenite::Message;
use zerotrace_cli::websocket::{ALLOWED_ORIGINS, Bridge, Limits, TRACED_PATH, Target};
use zerotrace_core::consumer::{ConsumerClient, SessionEnd};
use zerotrace_core::ipc::Endpoint;
use zerotrace_protos::protos::{
    CloneSessionResponseDecoder, TraceConfig, TracingServiceStateDecoder,
};

mod uid_support;
mod websocket_support;
// The uid and gid the other user's process runs as (`nobody`).
use uid_support::{NOBODY as OTHER, dir_owned_by, root_or_say, run_as};
use websocket_support::{Setup, consumer_over, open, status};

const WAIT: Duration = Duration::from_secs(20);
const CHILD_ENV: &str = "ZT_WS_HOSTILE_CHILD";
const ROOT_SESSION: &str = "zt-root-session";
const CHILD_SAYS: &str = "child: clone refused, output_path refused, own session recorded";

fn config(f: impl FnOnce(&mut TraceConfig<'_>)) -> Vec<u8> {
    let mut w = HeapWriter::new();
    {
        let mut c = TraceConfig::from_message(w.root());
        c.add_buffers().set_size_kb(256);
        c.add_data_sources().begin_config().set_name("zt.none");
        f(&mut c);
    }
    w.finish().unwrap()
}

#[test]
fn another_user_with_a_forged_origin_can_neither_clone_nor_create_a_file() {
    if let Ok(args) = std::env::var(CHILD_ENV) {
        return other_user(&args);
    }
    if !root_or_say("another_user_with_a_forged_origin_can_neither_clone_nor_create_a_file") {
        return;
    }
    // A consumer socket any user may connect to: the bridge lets the other
    // user in as itself, and it gets no more than its uid would.
    let s = Setup::start_full("127.0.0.1:0", "other-uid", Limits::default(), 0o666, None);
    // Root's session, worth a bugreport, on the consumer socket.
    let mut root = ConsumerClient::connect(&s.consumer).unwrap();
    let _root_session = root
        .enable_tracing(
            &config(|c| {
                c.set_unique_session_name(ROOT_SESSION);
                c.set_bugreport_score(10);
            }),
            None,
        )
        .unwrap();
    let _ = root.query_service_state().unwrap();

    // Where the other user would have the service create a file: a
    // directory only root may write.
    let target_dir = s.dir.join("root-only");
    std::fs::create_dir_all(&target_dir).unwrap();
    let target = target_dir.join("evil.pftrace");
    let child_dir = std::env::temp_dir().join(format!("zt-ws-child-{}", std::process::id()));
    dir_owned_by(&child_dir, OTHER);

    let out = run_as(
        OTHER,
        "another_user_with_a_forged_origin_can_neither_clone_nor_create_a_file",
        CHILD_ENV,
        &format!("{}|{}|{}", s.addr(), child_dir.display(), target.display()),
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains(CHILD_SAYS),
        "the other user's process: {}\n{stdout}\n{stderr}",
        out.status
    );
    assert!(
        !target.exists(),
        "the service created {target:?} for another user"
    );
    // Root's session is untouched and still running.
    let state = root.query_service_state().unwrap();
    let st = TracingServiceStateDecoder::new(&state);
    assert!(
        st.tracing_sessions()
            .any(|t| t.unique_session_name() == Some(ROOT_SESSION) && t.state() == Some("STARTED")),
        "root's session runs on"
    );
    let _ = std::fs::remove_dir_all(&child_dir);
}

/// The other user's process: through the bridge, with the UI's origin.
fn other_user(args: &str) {
    let mut parts = args.split('|');
    let (addr, dir, target) = (
        parts.next().unwrap().parse::<SocketAddr>().unwrap(),
        std::path::PathBuf::from(parts.next().unwrap()),
        parts.next().unwrap().to_owned(),
    );
    assert_eq!(
        rustix::process::getuid().as_raw(),
        OTHER,
        "runs as the other user"
    );
    let through_bridge = |name: &str| {
        let ws = open(addr, TRACED_PATH, Some(ALLOWED_ORIGINS[0])).unwrap();
        consumer_over(ws, &dir, name)
    };

    // Clone root's session: by name, as a bugreport, and by every small id.
    let refused = |r: Result<Vec<u8>, _>| match r {
        Err(_) => true,
        Ok(reply) => {
            let r = CloneSessionResponseDecoder::new(&reply);
            r.success() != Some(true)
        }
    };
    let mut c = through_bridge("clone");
    assert!(
        refused(c.clone_session(None, Some(ROOT_SESSION))),
        "clone by name"
    );
    let mut c = through_bridge("clone-bugreport");
    assert!(
        refused(c.clone_session(Some(u64::MAX), None)),
        "clone as bugreport"
    );
    for id in 1..=8u64 {
        let mut c = through_bridge(&format!("clone-{id}"));
        assert!(
            refused(c.clone_session(Some(id), None)),
            "clone session {id}"
        );
    }

    // Have the service create a file.
    let mut c = through_bridge("file");
    let req = c
        .enable_tracing(
            &config(|c| {
                c.set_write_into_file(true);
                c.set_output_path(&target);
            }),
            None,
        )
        .unwrap();
    match c.wait_for_end(req, Some(WAIT)).unwrap() {
        SessionEnd::Error(e) => assert!(e.contains("output_path"), "{e}"),
        other => panic!("output_path was accepted: {other:?}"),
    }
    assert!(!std::path::Path::new(&target).exists());

    // Its own session records, is its uid's, and root's is not shown.
    let mut c = through_bridge("own");
    let req = c
        .enable_tracing(
            &config(|c| {
                c.set_unique_session_name("zt-other");
            }),
            None,
        )
        .unwrap();
    let state = c.query_service_state().unwrap();
    let st = TracingServiceStateDecoder::new(&state);
    let sessions: Vec<_> = st
        .tracing_sessions()
        .map(|t| (t.unique_session_name().map(str::to_owned), t.consumer_uid()))
        .collect();
    assert_eq!(
        sessions,
        [(Some("zt-other".to_owned()), Some(OTHER as i32))],
        "only its own session, with the kernel's uid"
    );
    c.disable_tracing().unwrap();
    assert_eq!(
        c.wait_for_end(req, Some(WAIT)).unwrap(),
        SessionEnd::Disabled
    );
    c.read_trace().unwrap();
    println!("{CHILD_SAYS}");
}

#[test]
fn an_unreachable_service_is_503() {
    // A consumer socket nobody listens on.
    let dir = std::env::temp_dir().join(format!("zt-ws-503-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bridge = Bridge::start(
        "127.0.0.1:0",
        Target::Socket(Endpoint::Path(dir.join("nobody"))),
        Vec::new(),
        false,
    )
    .unwrap();
    assert_eq!(
        status(open(
            bridge.local_addr(),
            TRACED_PATH,
            Some(ALLOWED_ORIGINS[0])
        )),
        503
    );
    drop(bridge);
    let _ = std::fs::remove_dir_all(&dir);
    // A service of this process that has stopped.
    let mut s = Setup::start("stopped");
    s.stop_service();
    assert_eq!(
        status(open(s.addr(), TRACED_PATH, Some(ALLOWED_ORIGINS[0]))),
        503
    );
}

#[test]
fn localhost_is_ipv4_and_ipv6_loopback() {
    if std::net::TcpListener::bind("[::1]:0").is_err() {
        assert!(
            std::env::var_os("ZEROTRACE_REQUIRE_IPV6").is_none(),
            "no IPv6 loopback"
        );
        println!("localhost_is_ipv4_and_ipv6_loopback did not run: no IPv6 loopback here");
        return;
    }
    let s = Setup::start_with("localhost:0", "v6", Limits::default());
    let addrs = s.addrs();
    assert_eq!(addrs.len(), 2, "{addrs:?}");
    assert!(addrs[0].is_ipv4() && addrs[1].is_ipv6());
    assert_eq!(addrs[0].port(), addrs[1].port());
    for a in addrs {
        assert!(a.ip().is_loopback());
        let ws = open(a, TRACED_PATH, Some("HTTPS://UI.PERFETTO.DEV")).unwrap();
        let mut c = consumer_over(
            ws,
            &s.dir,
            &format!("c{}", a.port() as u32 + a.is_ipv6() as u32),
        );
        c.query_service_state().unwrap();
    }
}

/// `ConsumerPort`'s BindService request as an IPC frame: all its bytes are
/// ASCII, so it can travel as a text message.
fn bind_consumer_port_frame() -> Vec<u8> {
    let mut w = HeapWriter::new();
    {
        let mut m = w.root();
        m.append_uint64(2, 1);
        let mut bind = m.begin_nested(3);
        bind.append_string(1, "ConsumerPort");
    }
    let body = w.finish().unwrap();
    let mut frame = (body.len() as u32).to_le_bytes().to_vec();
    frame.extend_from_slice(&body);
    frame
}

#[test]
fn text_messages_carry_bytes_as_binary_ones() {
    let s = Setup::start("text");
    let mut ws = open(s.addr(), TRACED_PATH, Some(ALLOWED_ORIGINS[0])).unwrap();
    let frame = bind_consumer_port_frame();
    let text = String::from_utf8(frame).expect("an ASCII frame");
    ws.send(Message::text(text)).unwrap();
    let mut got = Vec::new();
    while got.len() < 4 || got.len() < 4 + u32::from_le_bytes(got[..4].try_into().unwrap()) as usize
    {
        match ws.read().unwrap() {
            Message::Binary(b) => got.extend_from_slice(&b),
            other => panic!("unexpected {other:?}"),
        }
    }
    let reply = Decoder::new(&got[4..])
        .find_last(4)
        .expect("a BindServiceReply");
    let success = Decoder::new(reply.as_bytes().unwrap()).find_last(1);
    assert_eq!(
        success.map(|f| f.as_u64().unwrap()),
        Some(1),
        "bound: {got:?}"
    );
}

/// Reads until the peer closes; the bytes read (an HTTP answer, if any).
fn read_to_close(mut s: TcpStream) -> Vec<u8> {
    s.set_read_timeout(Some(WAIT)).unwrap();
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    out
}

#[test]
fn dawdling_and_endless_handshakes_are_cut() {
    let limits = Limits {
        handshake_timeout: Duration::from_millis(300),
        handshake_max_bytes: 8 << 10,
        ..Limits::default()
    };
    let s = Setup::start_with("127.0.0.1:0", "slow", limits);
    // Says nothing: closed at the deadline.
    let began = Instant::now();
    let silent = TcpStream::connect(s.addr()).unwrap();
    assert!(read_to_close(silent).is_empty());
    assert!(
        began.elapsed() < WAIT,
        "closed by the bridge, not the test's timeout"
    );
    // A header that never ends: closed once it is over the budget.
    let mut endless = TcpStream::connect(s.addr()).unwrap();
    endless
        .write_all(b"GET /traced HTTP/1.1\r\nHost: x\r\n")
        .unwrap();
    let line = format!("X-Pad: {}\r\n", "a".repeat(1000));
    let mut refused = false;
    for _ in 0..64 {
        if endless.write_all(line.as_bytes()).is_err() {
            refused = true;
            break;
        }
    }
    if !refused {
        endless.set_read_timeout(Some(WAIT)).unwrap();
        let mut b = [0u8; 256];
        let n = endless.read(&mut b).unwrap_or(0);
        assert!(
            !b[..n].starts_with(b"HTTP/1.1 101"),
            "no upgrade for an endless header"
        );
    }
    // The bridge still serves.
    let ws = open(s.addr(), TRACED_PATH, Some(ALLOWED_ORIGINS[0])).unwrap();
    consumer_over(ws, &s.dir, "after")
        .query_service_state()
        .unwrap();
}

#[test]
fn ten_thousand_sockets_do_not_take_the_service_down() {
    let limits = Limits {
        handshake_timeout: Duration::from_millis(500),
        ..Limits::default()
    };
    let s = Setup::start_with("127.0.0.1:0", "flood", limits);
    let threads_before = threads();
    let mut flood = Vec::with_capacity(10_000);
    for _ in 0..10_000 {
        match TcpStream::connect(s.addr()) {
            Ok(c) => flood.push(c),
            Err(e) => panic!("connect {}: {e}", flood.len()),
        }
    }
    // While they are all open: the service answers its consumer socket,
    // and the bridge holds at most its limit of threads.
    let mut direct = ConsumerClient::connect(&s.consumer).unwrap();
    direct.query_service_state().unwrap();
    let threads_during = threads();
    assert!(
        threads_during <= threads_before + Limits::default().max_connections + 8,
        "{threads_during} threads with 10,000 sockets open (from {threads_before})"
    );
    // Those over the limit were answered 503 and closed.
    let mut answered = 0;
    for c in flood.iter_mut().rev().take(100) {
        c.set_read_timeout(Some(WAIT)).unwrap();
        let mut b = [0u8; 64];
        if let Ok(n) = c.read(&mut b) {
            if b[..n].starts_with(b"HTTP/1.1 503") {
                answered += 1;
            }
        }
    }
    assert!(answered > 90, "{answered} of the last 100 got 503");
    drop(flood);
    // Once they are gone (the held ones time out), the UI gets in again.
    let deadline = Instant::now() + WAIT;
    loop {
        match open(s.addr(), TRACED_PATH, Some(ALLOWED_ORIGINS[0])) {
            Ok(ws) => {
                consumer_over(ws, &s.dir, "after-flood")
                    .query_service_state()
                    .unwrap();
                break;
            }
            Err(e) if Instant::now() < deadline => {
                let _ = e;
                std::thread::sleep(Duration::from_millis(50));
            }
            Err(e) => panic!("the bridge no longer serves: {e}"),
        }
    }
}

/// The threads of this process.
fn threads() -> usize {
    std::fs::read_dir("/proc/self/task").unwrap().count()
}

const SHARE_CHILD_ENV: &str = "ZT_WS_SHARE_CHILD";

#[test]
fn one_user_holding_many_websockets_does_not_lock_another_out() {
    if let Ok(addr) = std::env::var(SHARE_CHILD_ENV) {
        // The other user: let in while root holds its whole share.
        let addr: SocketAddr = addr.parse().unwrap();
        let code = status(open(addr, TRACED_PATH, Some(ALLOWED_ORIGINS[0])));
        println!("other user's status: {code}");
        return;
    }
    if !root_or_say("one_user_holding_many_websockets_does_not_lock_another_out") {
        return;
    }
    let limits = Limits {
        max_connections: 8,
        max_connections_per_uid: 3,
        ..Limits::default()
    };
    let s = Setup::start_full("127.0.0.1:0", "share", limits, 0o666, None);
    // Root's share, held open.
    let held: Vec<_> = (0..3)
        .map(|_| open(s.addr(), TRACED_PATH, Some(ALLOWED_ORIGINS[0])).unwrap())
        .collect();
    // One more of root's is refused, with a reason.
    let mut extra = TcpStream::connect(s.addr()).unwrap();
    extra
        .write_all(
            format!(
                "GET {TRACED_PATH} HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
                 Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\
                 Origin: {}\r\n\r\n",
                ALLOWED_ORIGINS[0]
            )
            .as_bytes(),
        )
        .unwrap();
    let answer = String::from_utf8_lossy(&read_to_close(extra)).into_owned();
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
    assert!(answer.contains("its share"), "{answer}");
    // Another user still gets in.
    let out = run_as(
        OTHER,
        "one_user_holding_many_websockets_does_not_lock_another_out",
        SHARE_CHILD_ENV,
        &s.addr().to_string(),
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("other user's status: 101"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Root's slots come back as its WebSockets close.
    drop(held);
    let again = Instant::now();
    loop {
        match open(s.addr(), TRACED_PATH, Some(ALLOWED_ORIGINS[0])) {
            Ok(_) => break,
            Err(_) if again.elapsed() < WAIT => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => panic!("root's share did not come back: {e}"),
        }
    }
}

#[test]
fn a_silent_peer_is_closed_and_a_live_one_is_not() {
    let limits = Limits {
        idle_timeout: Duration::from_millis(400),
        ..Limits::default()
    };
    let s = Setup::start_with("127.0.0.1:0", "idle", limits);
    // Answers pings (its pipe reads all the time), so it stays.
    let mut live = s.consumer("live");
    // Never reads, so never answers the bridge's ping.
    let mut silent = open(s.addr(), TRACED_PATH, Some(ALLOWED_ORIGINS[0])).unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    live.query_service_state()
        .expect("a peer that answers pings stays open past the idle timeout");
    // The silent one finds a ping, then the close (or the socket's end).
    silent
        .get_ref()
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let mut pinged = false;
    let closed = loop {
        match silent.read() {
            Ok(Message::Ping(_)) => pinged = true,
            Ok(Message::Close(_)) => break true,
            Ok(_) => {}
            Err(tungstenite::Error::Io(e))
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                break false;
            }
            Err(_) => break true,
        }
    };
    assert!(pinged, "the bridge pings a quiet peer first");
    assert!(closed, "a peer silent for the idle timeout is closed");
}

#[test]
fn an_oversized_message_closes_its_websocket_only() {
    let limits = Limits {
        max_message_bytes: 64 << 10,
        ..Limits::default()
    };
    let s = Setup::start_with("127.0.0.1:0", "big", limits);
    let mut ws = open(s.addr(), TRACED_PATH, Some(ALLOWED_ORIGINS[0])).unwrap();
    // Written raw-ish: one binary message of twice the limit.
    let _ = ws.send(Message::binary(vec![0u8; 128 << 10]));
    ws.get_ref().set_read_timeout(Some(WAIT)).unwrap();
    let ended = loop {
        match ws.read() {
            Ok(Message::Close(_)) | Err(_) => break true,
            Ok(_) => {}
        }
    };
    assert!(ended, "the bridge closed the WebSocket");
    // The service and the bridge serve on.
    let mut c = s.consumer("after");
    c.query_service_state().unwrap();
}

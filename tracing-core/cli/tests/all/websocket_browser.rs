//! The Perfetto UI's path in a real browser: headless Chromium loads a
//! page from an origin `zerotraced --websocket` lets in (the extra-origins
//! flag with the test's ephemeral port), and the page opens WebSockets to
//! the bridge. The page is only the transport: it sends what the test
//! gives it and posts back every message it receives, in order; the test
//! speaks the consumer protocol through it (our sans-IO IPC client) with
//! the UI's call sequence while a producer writes: QueryServiceState on one
//! WebSocket; EnableTracing, GetTraceStats, Flush, DisableTracing,
//! ReadBuffers and FreeBuffers on a second; CloneSession on a third. Every
//! reply is of the right kind and the trace read through the browser
//! holds the packets as written. A `file://` page (an opaque origin) is
//! refused. Without `chromium-headless-shell` the test says so and passes,
//! unless `ZEROTRACE_REQUIRE_BROWSER=1` (CI installs it and sets that).

use std::collections::{HashMap, VecDeque};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use protozero::{Decoder, HeapWriter};
use zerotrace_cli::websocket::{Bridge, TRACED_PATH, Target};
use zerotrace_core::daemon::{DaemonConfig, DaemonThread};
use zerotrace_core::ipc::{ClientConnection, ClientEvent, Endpoint};
use zerotrace_core::producer::{DataSourceSpec, ProducerClient, ProducerOptions};
use zerotrace_protos::protos::{ReadBuffersResponseDecoder, TraceConfig};

const BROWSER: &str = "chromium-headless-shell";
const WAIT: Duration = Duration::from_secs(30);
const PAYLOAD_FIELD: u32 = 900;
const CONNECTIONS: u32 = 3;

/// What the page and the test exchange, per WebSocket.
#[derive(Default)]
struct Hub {
    state: Mutex<HubState>,
    changed: Condvar,
}

#[derive(Default)]
struct HubState {
    /// Bytes for the page to send, per connection.
    out: HashMap<u32, VecDeque<Vec<u8>>>,
    /// Bytes the page received, per connection.
    inb: HashMap<u32, VecDeque<Vec<u8>>>,
    /// `open`, `error`, `close` per connection, as the page reports them.
    events: Vec<String>,
}

impl Hub {
    fn lock(&self) -> std::sync::MutexGuard<'_, HubState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn push_out(&self, c: u32, bytes: Vec<u8>) {
        self.lock().out.entry(c).or_default().push_back(bytes);
        self.changed.notify_all();
    }

    fn take_out(&self, c: u32, wait: Duration) -> Vec<u8> {
        let deadline = Instant::now() + wait;
        let mut st = self.lock();
        loop {
            if let Some(q) = st.out.get_mut(&c).filter(|q| !q.is_empty()) {
                return q.drain(..).flatten().collect();
            }
            let now = Instant::now();
            if now >= deadline {
                return Vec::new();
            }
            st = self
                .changed
                .wait_timeout(st, deadline - now)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    fn push_in(&self, c: u32, bytes: Vec<u8>) {
        self.lock().inb.entry(c).or_default().push_back(bytes);
        self.changed.notify_all();
    }

    fn take_in(&self, c: u32, deadline: Instant) -> Vec<u8> {
        let mut st = self.lock();
        loop {
            if let Some(b) = st.inb.get_mut(&c).and_then(VecDeque::pop_front) {
                return b;
            }
            let now = Instant::now();
            assert!(
                now < deadline,
                "connection {c}: no reply in time ({:?})",
                st.events
            );
            st = self
                .changed
                .wait_timeout(st, deadline - now)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    fn event(&self, e: String) {
        self.lock().events.push(e);
        self.changed.notify_all();
    }

    fn wait_event(&self, want: &str, wait: Duration) -> bool {
        let deadline = Instant::now() + wait;
        let mut st = self.lock();
        loop {
            if st.events.iter().any(|e| e == want) {
                return true;
            }
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            st = self
                .changed
                .wait_timeout(st, deadline - now)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }
}

/// The page: opens the WebSockets, sends what `/next` gives, posts back
/// what it receives (in order) and what happens to each socket.
fn page(ws_url: &str, report: &str) -> String {
    format!(
        r#"<!doctype html><html><body><script>
const N = {CONNECTIONS};
for (let c = 0; c < N; c++) {{
  const ws = new WebSocket("{ws_url}");
  ws.binaryType = "arraybuffer";
  let chain = Promise.resolve();
  const post = (path, body) => {{
    chain = chain.then(() => fetch("{report}" + path + "?c=" + c,
      {{method: "POST", mode: "no-cors", body: body}})).catch(() => {{}});
  }};
  ws.onopen = async () => {{
    post("/event", "open");
    while (ws.readyState === 1) {{
      try {{
        const r = await fetch("{report}/next?c=" + c);
        const b = await r.arrayBuffer();
        if (b.byteLength > 0 && ws.readyState === 1) ws.send(b);
      }} catch (e) {{ break; }}
    }}
  }};
  ws.onmessage = (e) => post("/recv", e.data);
  ws.onerror = () => post("/event", "error");
  ws.onclose = () => post("/event", "close");
}}
</script></body></html>"#
    )
}

/// One HTTP request: its method, path with query, and body.
fn read_request(conn: &mut TcpStream) -> Option<(String, String, Vec<u8>)> {
    let mut r = BufReader::new(conn.try_clone().ok()?);
    let mut line = String::new();
    r.read_line(&mut line).ok()?;
    let mut parts = line.split_whitespace();
    let (method, path) = (parts.next()?.to_owned(), parts.next()?.to_owned());
    let mut len = 0usize;
    loop {
        let mut h = String::new();
        r.read_line(&mut h).ok()?;
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            if k.eq_ignore_ascii_case("content-length") {
                len = v.trim().parse().ok()?;
            }
        }
    }
    let mut body = vec![0; len];
    r.read_exact(&mut body).ok()?;
    Some((method, path, body))
}

fn respond(conn: &mut TcpStream, ctype: &str, body: &[u8]) {
    let head = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\n\
         Access-Control-Allow-Origin: *\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let _ = conn.write_all(head.as_bytes());
    let _ = conn.write_all(body);
}

/// The test's web server: the page and the transport's endpoints.
fn serve(listener: TcpListener, hub: Arc<Hub>, html: Arc<Mutex<String>>) {
    for conn in listener.incoming() {
        let Ok(mut conn) = conn else { continue };
        let (hub, html) = (hub.clone(), html.clone());
        std::thread::spawn(move || {
            let Some((_, path, body)) = read_request(&mut conn) else {
                return;
            };
            let (route, query) = path.split_once('?').unwrap_or((&path, ""));
            let c: u32 = query
                .strip_prefix("c=")
                .and_then(|c| c.parse().ok())
                .unwrap_or(0);
            match route {
                "/page.html" => {
                    let page = html.lock().unwrap().clone();
                    respond(&mut conn, "text/html", page.as_bytes());
                }
                "/next" => {
                    let bytes = hub.take_out(c, Duration::from_millis(200));
                    respond(&mut conn, "application/octet-stream", &bytes);
                }
                "/recv" => {
                    hub.push_in(c, body);
                    respond(&mut conn, "text/plain", b"");
                }
                "/event" => {
                    hub.event(format!("{c}:{}", String::from_utf8_lossy(&body)));
                    respond(&mut conn, "text/plain", b"");
                }
                _ => respond(&mut conn, "text/plain", b"?"),
            }
        });
    }
}

/// The consumer protocol over one of the page's WebSockets.
struct Conn {
    hub: Arc<Hub>,
    c: u32,
    client: ClientConnection,
    events: VecDeque<ClientEvent>,
    /// Replies that came while waiting for another request's.
    stashed: Vec<(u64, bool, bool, Vec<u8>)>,
}

impl Conn {
    fn new(hub: &Arc<Hub>, c: u32) -> Conn {
        let mut conn = Conn {
            hub: hub.clone(),
            c,
            client: ClientConnection::new("ConsumerPort"),
            events: VecDeque::new(),
            stashed: Vec::new(),
        };
        conn.flush();
        // Calls made before the bind's reply are held back: wait for it.
        let deadline = Instant::now() + WAIT;
        while !conn.client.is_bound() {
            let bytes = conn.hub.take_in(c, deadline);
            let events = conn.client.receive(&bytes);
            conn.events.extend(events);
            conn.flush();
        }
        conn
    }

    fn flush(&mut self) {
        for b in self.client.take_transmit() {
            self.hub.push_out(self.c, b);
        }
    }

    fn call(&mut self, method: &str, args: Vec<u8>) -> u64 {
        let id = self.client.invoke(method, args, false);
        self.flush();
        id
    }

    /// The next reply to `id`: (success, has_more, data).
    fn reply(&mut self, id: u64) -> (bool, bool, Vec<u8>) {
        let deadline = Instant::now() + WAIT;
        loop {
            if let Some(i) = self.stashed.iter().position(|r| r.0 == id) {
                let (_, ok, more, data) = self.stashed.remove(i);
                return (ok, more, data);
            }
            match self.events.pop_front() {
                Some(ClientEvent::Reply {
                    request_id,
                    success,
                    has_more,
                    data,
                }) => self.stashed.push((request_id, success, has_more, data)),
                Some(ClientEvent::Bound { success }) => assert!(success, "ConsumerPort bound"),
                Some(other) => panic!("connection {}: {other:?}", self.c),
                None => {
                    let bytes = self.hub.take_in(self.c, deadline);
                    self.events.extend(self.client.receive(&bytes));
                    self.flush();
                }
            }
        }
    }
}

fn encode(f: impl FnOnce(&mut protozero::Message<'_>)) -> Vec<u8> {
    let mut w = HeapWriter::new();
    {
        let mut m = w.root();
        f(&mut m);
    }
    w.finish().unwrap()
}

/// Our payloads in the packets of ReadBuffers replies.
fn payloads_of(replies: &[Vec<u8>]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut partial = Vec::new();
    for r in replies {
        for s in ReadBuffersResponseDecoder::new(r).slices() {
            partial.extend_from_slice(s.data().unwrap_or(&[]));
            if s.last_slice_for_packet().unwrap_or(false) {
                if let Some(f) = Decoder::new(&partial).find_last(PAYLOAD_FIELD) {
                    out.push(f.as_bytes().unwrap().to_vec());
                }
                partial.clear();
            }
        }
    }
    out
}

/// Reads every ReadBuffers reply of a call.
fn read_buffers(conn: &mut Conn) -> Vec<Vec<u8>> {
    let id = conn.call("ReadBuffers", Vec::new());
    let mut replies = Vec::new();
    loop {
        let (ok, more, data) = conn.reply(id);
        assert!(ok, "ReadBuffers");
        replies.push(data);
        if !more {
            return replies;
        }
    }
}

/// Chromium, killed when dropped.
struct Browser(std::process::Child, std::path::PathBuf);

impl Browser {
    fn open(url: &str, tag: &str) -> Browser {
        let profile =
            std::env::temp_dir().join(format!("zt-chromium-{tag}-{}", std::process::id()));
        let child = std::process::Command::new(BROWSER)
            .args(["--no-sandbox", "--disable-gpu", "--no-first-run"])
            .arg(format!("--user-data-dir={}", profile.display()))
            .arg(url)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            // A group of its own, so that its helper processes go with it.
            .process_group(0)
            .spawn()
            .expect("chromium starts");
        Browser(child, profile)
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        // The browser's renderers and zygote outlive a kill of its main
        // process: the whole group goes.
        if let Some(pid) = rustix::process::Pid::from_raw(self.0.id() as i32) {
            let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
        let _ = std::fs::remove_dir_all(&self.1);
    }
}

fn browser_available() -> bool {
    let found = std::process::Command::new(BROWSER)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        let required = std::env::var("ZEROTRACE_REQUIRE_BROWSER").is_ok_and(|v| v == "1");
        assert!(
            !required,
            "ZEROTRACE_REQUIRE_BROWSER=1 but {BROWSER} cannot be run"
        );
        println!("websocket_browser did not run: {BROWSER} is not installed");
    }
    found
}

#[test]
fn the_ui_call_sequence_works_from_a_real_browser() {
    if !browser_available() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("zt-wsb-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let (producer_ep, consumer_ep) = (
        Endpoint::Path(dir.join("producer")),
        Endpoint::Path(dir.join("consumer")),
    );
    let cfg = DaemonConfig {
        producer_sockets: vec![producer_ep.clone()],
        consumer_socket: consumer_ep.clone(),
        log_level: 0,
        ..DaemonConfig::default()
    };
    let daemon = DaemonThread::spawn(cfg).unwrap();

    // The test's web server, and the bridge letting its origin in.
    let http = TcpListener::bind("127.0.0.1:0").unwrap();
    let origin = format!("http://{}", http.local_addr().unwrap());
    let bridge = Bridge::start(
        "127.0.0.1:0",
        Target::Door(daemon.consumer_door()),
        vec![origin.clone()],
        false,
    )
    .unwrap();
    let ws_url = format!("ws://{}{TRACED_PATH}", bridge.local_addr());
    let hub = Arc::new(Hub::default());
    let html = Arc::new(Mutex::new(page(&ws_url, &origin)));
    {
        let (hub, html) = (hub.clone(), html.clone());
        std::thread::spawn(move || serve(http, hub, html));
    }

    let producer = ProducerClient::start(&producer_ep, ProducerOptions::default()).unwrap();
    producer
        .register_data_source(
            DataSourceSpec {
                name: "zt.browser".into(),
                ..Default::default()
            },
            |_| {},
        )
        .unwrap();
    producer.wait_connected(WAIT).unwrap();

    let browser = Browser::open(&format!("{origin}/page.html"), "page");
    for c in 0..CONNECTIONS {
        assert!(
            hub.wait_event(&format!("{c}:open"), WAIT),
            "WebSocket {c} did not open: {:?}",
            hub.lock().events
        );
    }

    // The UI's first connection: what there is to record.
    let mut query = Conn::new(&hub, 0);
    let id = query.call("QueryServiceState", Vec::new());
    let (ok, _, state) = query.reply(id);
    assert!(ok && state.windows(10).any(|w| w == b"zt.browser"));

    // A recording on the second.
    let mut rec = Conn::new(&hub, 1);
    let config = encode(|m| {
        let mut c = TraceConfig::from_message(m.begin_nested(1));
        c.add_buffers().set_size_kb(1024);
        c.add_data_sources().begin_config().set_name("zt.browser");
        c.set_unique_session_name("zt-browser-session");
    });
    let enable = rec.call("EnableTracing", config);
    let instance = producer.wait_for_start("zt.browser", WAIT).unwrap();
    let mut writer = producer.create_trace_writer_for(&instance).unwrap();
    let written: Vec<Vec<u8>> = (0..300u32)
        .map(|i| format!("browser packet {i} {}", "y".repeat((i % 70) as usize)).into_bytes())
        .collect();
    for p in &written {
        writer.packet(|m| {
            m.message().append_bytes(PAYLOAD_FIELD, p);
        });
    }
    writer.flush(None);
    producer.flush_blocking(WAIT).unwrap();
    let stats = rec.call("GetTraceStats", Vec::new());
    let (ok, _, data) = rec.reply(stats);
    assert!(ok && !data.is_empty(), "GetTraceStats");
    let flush = rec.call("Flush", encode(|m| m.append_uint32(1, 5000)));
    assert!(rec.reply(flush).0, "Flush");

    // CloneSession on the third, while it records.
    let mut cloner = Conn::new(&hub, 2);
    let clone = cloner.call(
        "CloneSession",
        encode(|m| m.append_string(4, "zt-browser-session")),
    );
    assert!(cloner.reply(clone).0, "CloneSession");
    assert_eq!(
        payloads_of(&read_buffers(&mut cloner)),
        written,
        "the clone"
    );

    let disable = rec.call("DisableTracing", Vec::new());
    assert!(rec.reply(disable).0, "DisableTracing");
    let (ok, _, _) = rec.reply(enable);
    assert!(ok, "EnableTracing's reply comes at the stop");
    assert_eq!(payloads_of(&read_buffers(&mut rec)), written, "the trace");
    let free = rec.call("FreeBuffers", Vec::new());
    assert!(rec.reply(free).0, "FreeBuffers");
    drop(browser);

    // A file:// page (an opaque origin, `null`) is refused.
    let file_page = dir.join("opaque.html");
    std::fs::write(&file_page, page(&ws_url, &origin)).unwrap();
    let before = hub.lock().events.len();
    let browser = Browser::open(&format!("file://{}", file_page.display()), "file");
    let deadline = Instant::now() + WAIT;
    loop {
        let events: Vec<String> = hub.lock().events[before..].to_vec();
        assert!(
            !events.iter().any(|e| e.ends_with(":open")),
            "a file:// page opened the WebSocket: {events:?}"
        );
        if (0..CONNECTIONS).all(|c| events.contains(&format!("{c}:close"))) {
            break;
        }
        assert!(Instant::now() < deadline, "no close reported: {events:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
    drop(browser);
    drop(bridge);
    daemon.stop().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

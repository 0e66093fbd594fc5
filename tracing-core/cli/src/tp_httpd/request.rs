//! Reading one HTTP/1.1 request head, sans-IO and bounded: the request
//! line, the headers the trace processor's server acts on (`Content-Length`,
//! `Origin`, `Connection`, the WebSocket handshake's, `Host`,
//! `Sec-Fetch-Site`), and how many bytes the head took. Upstream's server
//! reads the same fields; like it, a `Connection` header listing
//! `keep-alive` keeps the connection open and one listing `upgrade` asks
//! for a WebSocket.
//!
//! Two rules a web page must not get around, judged here from the head:
//! - [`check_host`]: the `Host` names the address the server is bound to
//!   (a DNS-rebinding page's requests name its own host); 403 otherwise.
//! - [`check_method`]: what changes the session's state needs `POST`,
//!   which a page cannot send cross-site without the CORS check (an
//!   `<img>` or a link sends `GET`); 405 with `Allow: POST` otherwise.
//!   Google's Python client sends `GET /notify_eof`, so that one `GET`
//!   is let in when no browser marks it as sent from another site.

use std::net::{IpAddr, SocketAddr};

/// The longest request head accepted.
pub const MAX_HEAD_BYTES: usize = 64 * 1024;
/// The most headers a request may have (upstream's 32).
pub const MAX_HEADERS: usize = 32;
/// The largest request body accepted (upstream's 64 MiB).
pub const MAX_BODY_BYTES: usize = 64 * 1024 * 1024;

/// A request head.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Head {
    /// `GET`, `POST`, `OPTIONS`...
    pub method: String,
    /// The path as sent.
    pub uri: String,
    /// `Content-Length`, 0 when absent.
    pub content_length: usize,
    /// `Origin`, when sent.
    pub origin: Option<String>,
    /// `Connection` lists `keep-alive`.
    pub keep_alive: bool,
    /// `Connection` lists `upgrade`.
    pub upgrade: bool,
    /// `Sec-WebSocket-Key`, when sent.
    pub websocket_key: Option<String>,
    /// `Sec-WebSocket-Version`, when sent.
    pub websocket_version: Option<String>,
    /// `Host`, when sent.
    pub host: Option<String>,
    /// The request line says `HTTP/1.0` (where `Host` may be missing).
    pub http10: bool,
    /// `Sec-Fetch-Site` (a browser's word on where the request came
    /// from), when sent.
    pub fetch_site: Option<String>,
}

/// Why a request was refused before it was served: the status line and
/// body to answer with before closing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refusal {
    /// E.g. `400 Bad Request`.
    pub status: &'static str,
    /// A short body.
    pub body: &'static str,
}

/// Parses the head at the start of `buf`: `Ok(None)` while it is not all
/// there, else the head and its length (the body follows).
pub fn parse_head(buf: &[u8]) -> Result<Option<(Head, usize)>, Refusal> {
    let Some(end) = find_head_end(buf) else {
        if buf.len() > MAX_HEAD_BYTES {
            return Err(Refusal {
                status: "431 Request Header Fields Too Large",
                body: "Request head too large",
            });
        }
        return Ok(None);
    };
    let bad = |body| Refusal {
        status: "400 Bad Request",
        body,
    };
    let text = std::str::from_utf8(&buf[..end]).map_err(|_| bad("Bad HTTP header"))?;
    let mut lines = text.split('\n').map(|l| l.trim_end_matches('\r'));
    let first = lines.next().unwrap_or_default();
    let mut parts = first.split(' ');
    let (Some(method), Some(uri)) = (parts.next(), parts.next()) else {
        return Err(bad("Bad request line"));
    };
    if method.is_empty() || uri.is_empty() {
        return Err(bad("Bad request line"));
    }
    let mut head = Head {
        method: method.to_owned(),
        uri: uri.to_owned(),
        http10: parts.next() == Some("HTTP/1.0"),
        ..Head::default()
    };
    let mut count = 0;
    for line in lines.filter(|l| !l.is_empty()) {
        count += 1;
        if count > MAX_HEADERS {
            return Err(bad("Too many HTTP headers"));
        }
        let (name, value) = line.split_once(':').ok_or(bad("Bad HTTP header"))?;
        let value = value.trim();
        if name.eq_ignore_ascii_case("content-length") {
            head.content_length = value.parse().map_err(|_| bad("Bad Content-Length"))?;
        } else if name.eq_ignore_ascii_case("origin") {
            head.origin = Some(value.to_owned());
        } else if name.eq_ignore_ascii_case("connection") {
            for v in value.split(',').map(str::trim) {
                head.keep_alive |= v.eq_ignore_ascii_case("keep-alive");
                head.upgrade |= v.eq_ignore_ascii_case("upgrade");
            }
        } else if name.eq_ignore_ascii_case("sec-websocket-key") {
            head.websocket_key = Some(value.to_owned());
        } else if name.eq_ignore_ascii_case("sec-websocket-version") {
            head.websocket_version = Some(value.to_owned());
        } else if name.eq_ignore_ascii_case("host") {
            if head.host.is_some() {
                return Err(bad("More than one Host header"));
            }
            head.host = Some(value.to_owned());
        } else if name.eq_ignore_ascii_case("sec-fetch-site") {
            head.fetch_site = Some(value.to_owned());
        }
    }
    if head.content_length > MAX_BODY_BYTES {
        return Err(Refusal {
            status: "413 Payload Too Large",
            body: "Payload Too Large",
        });
    }
    Ok(Some((head, end)))
}

/// The endpoints that change the session's state: `POST` only.
const POST_ONLY: [&str; 5] = [
    "/parse",
    "/notify_eof",
    "/restore_initial_tables",
    "/query",
    "/rpc",
];

/// Whether `head`'s method may reach its endpoint: anything for `/`,
/// `/status` and the rest (which change nothing), `POST` for the
/// endpoints that change the session's state, except a `GET
/// /notify_eof` that no browser marks as sent from another site (Google's
/// Python client sends that one as `GET`). The refusal is `405` with a
/// reason; the server adds `Allow: POST`.
pub fn check_method(head: &Head) -> Result<(), Refusal> {
    if !POST_ONLY.contains(&head.uri.as_str()) || head.method == "POST" {
        return Ok(());
    }
    let cross_site = head.origin.is_some()
        || head.fetch_site.as_deref().is_some_and(|s| {
            !s.eq_ignore_ascii_case("none") && !s.eq_ignore_ascii_case("same-origin")
        });
    if head.uri == "/notify_eof" && head.method == "GET" && !cross_site {
        return Ok(());
    }
    Err(Refusal {
        status: "405 Method Not Allowed",
        body: "This endpoint changes the loaded trace or runs SQL: it takes POST only                (a web page can make a browser send GET anywhere)",
    })
}

/// Whether `head`'s `Host` names `local`, the address the connection came
/// in on: `127.0.0.1`, `localhost`, `[::1]` or `local`'s own IP, with
/// `local`'s port. A page reached by a rebound DNS name sends that name;
/// an HTTP/1.1 request must send a `Host`. The refusal is `403`.
pub fn check_host(head: &Head, local: SocketAddr) -> Result<(), Refusal> {
    let refuse = |body| {
        Err(Refusal {
            status: "403 Forbidden",
            body,
        })
    };
    let Some(host) = head.host.as_deref() else {
        if head.http10 {
            return Ok(());
        }
        return refuse("An HTTP/1.1 request needs a Host header naming this server's address");
    };
    if host_names(host, local) {
        Ok(())
    } else {
        refuse(
            "The Host header does not name this server's address (127.0.0.1, localhost or              [::1], or the address it listens on, with its port): refused, as a page              reached through another name (DNS rebinding) would send",
        )
    }
}

/// Whether `host` (`NAME:PORT`, `[V6]:PORT`, or a name alone for port 80)
/// names `local`.
fn host_names(host: &str, local: SocketAddr) -> bool {
    let (name, port) = match host.rsplit_once(':') {
        Some((n, p)) if !p.contains(']') => (n, p.parse::<u16>().ok()),
        _ => (host, Some(80)),
    };
    if port != Some(local.port()) {
        return false;
    }
    if name.eq_ignore_ascii_case("localhost") {
        return true;
    }
    let bare = name
        .strip_prefix('[')
        .and_then(|n| n.strip_suffix(']'))
        .unwrap_or(name);
    // A v6 address must come in brackets, a v4 one without.
    if (bare.len() != name.len()) != bare.contains(':') {
        return false;
    }
    let Ok(ip) = bare.parse::<IpAddr>() else {
        return false;
    };
    let ip = match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    };
    let local_ip = match local.ip() {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(local.ip(), IpAddr::V4),
        v4 => v4,
    };
    ip == local_ip
        || ip == IpAddr::from([127, 0, 0, 1])
        || ip == IpAddr::from([0u16, 0, 0, 0, 0, 0, 0, 1])
}

/// The length of the head (through its blank line), if it has ended.
fn find_head_end(buf: &[u8]) -> Option<usize> {
    let scan = &buf[..buf.len().min(MAX_HEAD_BYTES)];
    scan.windows(2).enumerate().find_map(|(i, w)| match w {
        b"\n\n" => Some(i + 2),
        b"\n\r" if scan.get(i + 2) == Some(&b'\n') => Some(i + 3),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_head_is_read_once_whole() {
        let req = b"POST /query HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\
                    Connection: Keep-Alive\r\nOrigin: https://ui.perfetto.dev\r\n\r\nabc";
        for cut in 0..req.len() - 3 {
            assert_eq!(parse_head(&req[..cut]), Ok(None), "{cut}");
        }
        let (h, n) = parse_head(req).unwrap().unwrap();
        assert_eq!(&req[n..], b"abc");
        assert_eq!(h.method, "POST");
        assert_eq!(h.uri, "/query");
        assert_eq!(h.content_length, 3);
        assert!(h.keep_alive && !h.upgrade);
        assert_eq!(h.origin.as_deref(), Some("https://ui.perfetto.dev"));
    }

    fn head(req: &str) -> Head {
        parse_head(req.as_bytes()).unwrap().unwrap().0
    }

    #[test]
    fn state_changes_need_post() {
        for uri in POST_ONLY {
            let h = head(&format!(
                "GET {uri} HTTP/1.1\r\nSec-Fetch-Site: cross-site\r\n\r\n"
            ));
            let r = check_method(&h).unwrap_err();
            assert_eq!(r.status, "405 Method Not Allowed", "{uri}");
            assert_eq!(
                check_method(&head(&format!("POST {uri} HTTP/1.1\r\n\r\n"))),
                Ok(())
            );
        }
        for uri in ["/parse", "/query", "/rpc", "/restore_initial_tables"] {
            // Not even from a client that is no browser.
            assert!(check_method(&head(&format!("GET {uri} HTTP/1.1\r\n\r\n"))).is_err());
        }
        for ok in [
            "GET /status HTTP/1.1\r\n\r\n",
            "HEAD / HTTP/1.1\r\n\r\n",
            // Google's Python client.
            "GET /notify_eof HTTP/1.1\r\nHost: 127.0.0.1:9001\r\n\r\n",
            "GET /notify_eof HTTP/1.1\r\nSec-Fetch-Site: none\r\n\r\n",
        ] {
            assert_eq!(check_method(&head(ok)), Ok(()), "{ok}");
        }
        for cross in [
            "GET /notify_eof HTTP/1.1\r\nOrigin: https://evil.example\r\n\r\n",
            "GET /notify_eof HTTP/1.1\r\nSec-Fetch-Site: same-site\r\n\r\n",
            "PUT /notify_eof HTTP/1.1\r\n\r\n",
        ] {
            assert!(check_method(&head(cross)).is_err(), "{cross}");
        }
    }

    #[test]
    fn the_host_must_name_the_bound_address() {
        let v4: SocketAddr = "127.0.0.1:9001".parse().unwrap();
        let v6: SocketAddr = "[::1]:9001".parse().unwrap();
        let lan: SocketAddr = "10.1.2.3:9001".parse().unwrap();
        let with = |h: &str| head(&format!("GET / HTTP/1.1\r\nHost: {h}\r\n\r\n"));
        for (h, local) in [
            ("127.0.0.1:9001", v4),
            ("localhost:9001", v4),
            ("LocalHost:9001", v6),
            ("[::1]:9001", v4),
            ("[::1]:9001", v6),
            ("10.1.2.3:9001", lan),
        ] {
            assert_eq!(check_host(&with(h), local), Ok(()), "{h} {local}");
        }
        for (h, local) in [
            ("127.0.0.1:9002", v4),
            ("localhost", v4),
            ("evil.example:9001", v4),
            ("127.0.0.1.nip.io:9001", v4),
            ("10.1.2.3:9001", v4),
            ("::1:9001", v6),
            ("[127.0.0.1]:9001", v4),
            ("", v4),
        ] {
            let r = check_host(&with(h), local).unwrap_err();
            assert_eq!(r.status, "403 Forbidden", "{h}");
        }
        assert!(check_host(&head("GET / HTTP/1.1\r\n\r\n"), v4).is_err());
        assert_eq!(check_host(&head("GET / HTTP/1.0\r\n\r\n"), v4), Ok(()));
        assert!(parse_head(b"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n").is_err());
    }

    #[test]
    fn oversized_or_malformed_heads_are_refused() {
        let big = format!(
            "POST / HTTP/1.1\r\nContent-Length: {}\r\n\r\n",
            MAX_BODY_BYTES + 1
        );
        assert_eq!(
            parse_head(big.as_bytes()).unwrap_err().status,
            "413 Payload Too Large"
        );
        let mut many = String::from("GET / HTTP/1.1\r\n");
        for i in 0..=MAX_HEADERS {
            many += &format!("X-{i}: y\r\n");
        }
        many += "\r\n";
        assert_eq!(
            parse_head(many.as_bytes()).unwrap_err().body,
            "Too many HTTP headers"
        );
        assert_eq!(
            parse_head(b"GET / HTTP/1.1\r\nnocolon\r\n\r\n")
                .unwrap_err()
                .body,
            "Bad HTTP header"
        );
        let endless = vec![b'a'; MAX_HEAD_BYTES + 1];
        assert_eq!(
            parse_head(&endless).unwrap_err().status,
            "431 Request Header Fields Too Large"
        );
    }
}

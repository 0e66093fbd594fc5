//! Reading one HTTP/1.1 request head, sans-IO and bounded: the request
//! line, the headers the trace processor's server acts on (`Content-Length`,
//! `Origin`, `Connection`, the WebSocket handshake's), and how many bytes
//! the head took. Upstream's server reads the same fields; like it, a
//! `Connection` header listing `keep-alive` keeps the connection open and
//! one listing `upgrade` asks for a WebSocket.

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

//! A consumer connection that shows every reply in arrival order, across
//! requests (our [`Channel`](zerotrace_core::ipc::Channel) files
//! replies by request): what the tests need to compare a whole session's
//! replies, kinds and order, with a recorded one.

use std::collections::VecDeque;
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

use zerotrace_core::ipc::{ClientConnection, ClientEvent};

/// One consumer (or producer) connection over a unix socket.
#[derive(Debug)]
pub struct RawClient {
    stream: UnixStream,
    conn: ClientConnection,
    events: VecDeque<ClientEvent>,
    methods: std::collections::HashMap<u64, String>,
}

/// A reply with the method it answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawReply {
    /// The method called.
    pub method: String,
    /// The request id.
    pub request_id: u64,
    /// Whether it succeeded.
    pub success: bool,
    /// More replies follow.
    pub has_more: bool,
    /// The encoded response.
    pub data: Vec<u8>,
}

impl RawClient {
    /// Connects to `path` and binds `service` (`ConsumerPort`,
    /// `ProducerPort`), waiting for the bind reply.
    pub fn connect(path: &str, service: &str) -> std::io::Result<RawClient> {
        let stream = UnixStream::connect(path)?;
        stream.set_read_timeout(Some(Duration::from_secs(30)))?;
        let mut c = RawClient {
            stream,
            conn: ClientConnection::new(service),
            events: VecDeque::new(),
            methods: Default::default(),
        };
        c.flush_out()?;
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let n = c.stream.read(&mut buf)?;
            if n == 0 {
                return Err(std::io::ErrorKind::UnexpectedEof.into());
            }
            for ev in c.conn.receive(&buf[..n]) {
                match ev {
                    ClientEvent::Bound { success: true } => {}
                    ClientEvent::Bound { success: false } => {
                        return Err(std::io::Error::other(format!("{service} refused the bind")));
                    }
                    other => c.events.push_back(other),
                }
            }
            if c.conn.is_bound() {
                return Ok(c);
            }
        }
    }

    fn flush_out(&mut self) -> std::io::Result<()> {
        for frame in self.conn.take_transmit() {
            self.stream.write_all(&frame)?;
        }
        Ok(())
    }

    /// Calls `method` with encoded `args`; returns the request id.
    pub fn call(&mut self, method: &str, args: Vec<u8>) -> std::io::Result<u64> {
        let id = self.conn.invoke(method, args, false);
        self.methods.insert(id, method.to_owned());
        self.flush_out()?;
        Ok(id)
    }

    /// The next reply (of any request), waiting at most `timeout`.
    pub fn next_reply(&mut self, timeout: Duration) -> Option<RawReply> {
        let deadline = Instant::now() + timeout;
        loop {
            while let Some(ev) = self.events.pop_front() {
                if let ClientEvent::Reply {
                    request_id,
                    success,
                    has_more,
                    data,
                } = ev
                {
                    return Some(RawReply {
                        method: self.methods.get(&request_id).cloned().unwrap_or_default(),
                        request_id,
                        success,
                        has_more,
                        data,
                    });
                }
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return None;
            }
            self.stream.set_read_timeout(Some(left)).ok()?;
            let mut buf = vec![0u8; 256 * 1024];
            let n = match self.stream.read(&mut buf) {
                Ok(0) => return None,
                Ok(n) => n,
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) =>
                {
                    return None;
                }
                Err(_) => return None,
            };
            let evs = self.conn.receive(&buf[..n]);
            self.events.extend(evs);
            // Calls held for the bind reply go out now.
            self.flush_out().ok()?;
        }
    }
}

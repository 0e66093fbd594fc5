//! A blocking RPC channel for clients: a [`ClientConnection`] over a
//! connected [`Stream`]. Calls are sent at once (pipelined); replies are
//! read on demand and kept until the caller asks for their request.

use std::collections::{HashMap, VecDeque};
use std::io;
use std::time::{Duration, Instant};

use super::client::{ClientConnection, ClientEvent};
use super::fd::{BorrowedFd, OwnedFd};
use super::socket::Stream;

/// One reply (of possibly several) to a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallReply {
    /// Whether the call succeeded.
    pub success: bool,
    /// More replies follow.
    pub has_more: bool,
    /// The encoded response.
    pub data: Vec<u8>,
}

/// Errors of a client channel.
#[derive(Debug, thiserror::Error)]
pub enum ChannelError {
    /// The socket failed or closed.
    #[error("connection: {0}")]
    Io(#[from] io::Error),
    /// The service does not have the service or method.
    #[error("the service has no {0}")]
    Unknown(String),
    /// The service refused the call.
    #[error("{0} failed")]
    Rejected(&'static str),
    /// No reply in time.
    #[error("timed out waiting for {0}")]
    Timeout(&'static str),
    /// A reply did not decode.
    #[error("malformed reply to {0}")]
    Malformed(&'static str),
}

/// A blocking client channel.
#[derive(Debug)]
pub struct Channel {
    stream: Stream,
    conn: ClientConnection,
    replies: HashMap<u64, VecDeque<CallReply>>,
    failed: HashMap<u64, String>,
    /// Fds received (an SMB with `setup_tracing`).
    pub fds: Vec<OwnedFd>,
    buf: Vec<u8>,
}

impl Channel {
    /// Binds `service` over `stream` and waits for the bind reply.
    pub fn bind(stream: Stream, service: &str, timeout: Duration) -> Result<Channel, ChannelError> {
        stream.set_nonblocking(false)?;
        let mut ch = Channel {
            stream,
            conn: ClientConnection::new(service),
            replies: HashMap::new(),
            failed: HashMap::new(),
            fds: Vec::new(),
            buf: vec![0; 256 * 1024],
        };
        ch.send_pending(None)?;
        let deadline = Instant::now() + timeout;
        while !ch.conn.is_bound() {
            if Instant::now() > deadline {
                return Err(ChannelError::Timeout("BindService"));
            }
            if let Some(false) = ch.pump(Some(deadline))? {
                return Err(ChannelError::Unknown(service.to_owned()));
            }
        }
        Ok(ch)
    }

    /// The underlying stream.
    pub fn stream(&self) -> &Stream {
        &self.stream
    }

    /// Sends a call now; returns its request id.
    pub fn call(
        &mut self,
        method: &str,
        args: Vec<u8>,
        drop_reply: bool,
    ) -> Result<u64, ChannelError> {
        self.call_with_fd(method, args, drop_reply, None)
    }

    /// Sends a call with an fd attached (e.g. a trace file for EnableTracing).
    pub fn call_with_fd(
        &mut self,
        method: &str,
        args: Vec<u8>,
        drop_reply: bool,
        fd: Option<BorrowedFd<'_>>,
    ) -> Result<u64, ChannelError> {
        let id = self.conn.invoke(method, args, drop_reply);
        self.send_pending(fd)?;
        Ok(id)
    }

    fn send_pending(&mut self, mut fd: Option<BorrowedFd<'_>>) -> Result<(), ChannelError> {
        for frame in self.conn.take_transmit() {
            let mut sent = 0;
            while sent < frame.len() {
                match self.stream.send(&frame[sent..], fd.take()) {
                    Ok(n) => sent += n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(e.into()),
                }
            }
        }
        Ok(())
    }

    /// Reads once from the socket (until `deadline`) and files the replies.
    /// Returns `Some(success)` when a bind reply came.
    fn pump(&mut self, deadline: Option<Instant>) -> Result<Option<bool>, ChannelError> {
        let timeout = deadline.map(|d| {
            d.saturating_duration_since(Instant::now())
                .max(Duration::from_millis(1))
        });
        self.stream.set_read_timeout(timeout)?;
        let n = match self.stream.recv(&mut self.buf, &mut self.fds) {
            Ok(0) => return Err(io::Error::from(io::ErrorKind::UnexpectedEof).into()),
            Ok(n) => n,
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                return Ok(None);
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => return Ok(None),
            Err(e) => return Err(e.into()),
        };
        let mut bound = None;
        let events = self.conn.receive(&self.buf[..n]);
        for ev in events {
            match ev {
                ClientEvent::Bound { success } => bound = Some(success),
                ClientEvent::Reply {
                    request_id,
                    success,
                    has_more,
                    data,
                } => {
                    self.replies
                        .entry(request_id)
                        .or_default()
                        .push_back(CallReply {
                            success,
                            has_more,
                            data,
                        });
                }
                ClientEvent::UnknownMethod { request_id, method } => {
                    self.failed.insert(request_id, method);
                }
                ClientEvent::Fatal(e) => {
                    return Err(io::Error::new(io::ErrorKind::InvalidData, e).into());
                }
            }
        }
        // Calls held for the bind go out now.
        self.send_pending(None)?;
        Ok(bound)
    }

    /// The next reply to `request`, waiting up to `timeout`.
    pub fn next_reply(
        &mut self,
        request: u64,
        timeout: Option<Duration>,
    ) -> Result<CallReply, ChannelError> {
        let deadline = timeout.map(|t| Instant::now() + t);
        loop {
            if let Some(r) = self.replies.get_mut(&request).and_then(VecDeque::pop_front) {
                return Ok(r);
            }
            if let Some(m) = self.failed.remove(&request) {
                return Err(ChannelError::Unknown(m));
            }
            if deadline.is_some_and(|d| Instant::now() > d) {
                return Err(ChannelError::Timeout("a reply"));
            }
            self.pump(deadline)?;
        }
    }

    /// A reply to `request` if one has arrived, reading what is there
    /// without waiting longer than `wait`.
    pub fn poll_reply(
        &mut self,
        request: u64,
        wait: Duration,
    ) -> Result<Option<CallReply>, ChannelError> {
        if let Some(r) = self.replies.get_mut(&request).and_then(VecDeque::pop_front) {
            return Ok(Some(r));
        }
        self.pump(Some(Instant::now() + wait))?;
        Ok(self.replies.get_mut(&request).and_then(VecDeque::pop_front))
    }

    /// Calls `method` and waits for its (single) reply.
    pub fn call_and_wait(
        &mut self,
        method: &'static str,
        args: Vec<u8>,
        timeout: Duration,
    ) -> Result<Vec<u8>, ChannelError> {
        let id = self.call(method, args, false)?;
        let r = self.next_reply(id, Some(timeout)).map_err(|e| match e {
            ChannelError::Timeout(_) => ChannelError::Timeout(method),
            e => e,
        })?;
        if !r.success {
            return Err(ChannelError::Rejected(method));
        }
        Ok(r.data)
    }
}

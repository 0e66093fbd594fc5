//! After the handshake: the consumer byte stream carried both ways, each
//! way as it comes, until either side ends. While the browser is behind,
//! the service's bytes stay in its socket (back-pressure, not a queue).
//! Binary and text messages both carry bytes, as in Perfetto's bridge.
//! A peer silent for half the idle timeout is pinged; one silent for all
//! of it is closed.

use std::io::{self, Read, Write};
use std::time::{Duration, Instant};

use rustix::event::{PollFd, PollFlags, Timespec, poll};
use tungstenite::{Message, WebSocket};

use super::upstream::Upstream;
use super::{Bounded, BridgeError};

/// The most bytes read from the consumer socket into one message.
const READ_CHUNK: usize = 64 * 1024;

/// Moves bytes between the WebSocket and the consumer connection until one
/// of them closes.
pub(super) fn pump(
    ws: &mut WebSocket<Bounded>,
    upstream: &mut Upstream,
    idle_timeout: Duration,
) -> Result<(), BridgeError> {
    ws.get_mut().stream.set_nonblocking(true)?;
    let mut buf = vec![0u8; READ_CHUNK];
    // The WebSocket holds unsent bytes (its socket was full).
    let mut unsent = false;
    // When the peer last sent anything (a pong included), and whether it
    // has been pinged since.
    let mut heard = Instant::now();
    let mut pinged = false;
    loop {
        let silent = heard.elapsed();
        if silent >= idle_timeout {
            let _ = ws.close(None);
            let _ = flush(ws);
            return Err(BridgeError::Idle(idle_timeout));
        }
        if !pinged && silent >= idle_timeout / 2 {
            pinged = true;
            match ws.write(Message::Ping(Vec::new().into())) {
                Ok(()) => {}
                Err(tungstenite::Error::Io(e)) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(e.into()),
            }
            unsent = flush(ws)?;
        }
        let next = if pinged {
            idle_timeout
        } else {
            idle_timeout / 2
        };
        let wait = next.saturating_sub(silent).max(Duration::from_millis(1));
        let timeout = Timespec::try_from(wait).ok();
        let (ws_ready, ws_out, up_ready) = {
            let mut ws_flags = PollFlags::IN;
            if unsent {
                ws_flags |= PollFlags::OUT;
            }
            let up_flags = if unsent {
                PollFlags::empty()
            } else {
                PollFlags::IN
            };
            let mut fds = [
                PollFd::new(&ws.get_ref().stream, ws_flags),
                PollFd::new(upstream, up_flags),
            ];
            match poll(&mut fds, timeout.as_ref()) {
                Ok(_) => {}
                Err(rustix::io::Errno::INTR) => continue,
                Err(e) => return Err(io::Error::from(e).into()),
            }
            let w = fds[0].revents();
            let u = fds[1].revents();
            (
                w.intersects(PollFlags::IN | PollFlags::HUP | PollFlags::ERR),
                w.contains(PollFlags::OUT),
                u.intersects(PollFlags::IN | PollFlags::HUP | PollFlags::ERR),
            )
        };
        if up_ready {
            let n = match upstream.read(&mut buf) {
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e.into()),
            };
            if n == 0 {
                // The service closed the consumer connection.
                let _ = ws.close(None);
                let _ = flush(ws);
                return Ok(());
            }
            match ws.write(Message::binary(buf[..n].to_vec())) {
                Ok(()) => {}
                Err(tungstenite::Error::Io(e)) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(e.into()),
            }
            unsent = flush(ws)?;
        } else if ws_out {
            unsent = flush(ws)?;
        }
        if ws_ready {
            loop {
                let read = ws.read();
                if read.is_ok() {
                    heard = Instant::now();
                    pinged = false;
                }
                match read {
                    Ok(Message::Binary(bytes)) => upstream.write_all(&bytes)?,
                    Ok(Message::Text(text)) => upstream.write_all(text.as_bytes())?,
                    Ok(Message::Close(_)) => {
                        let _ = flush(ws);
                        return Ok(());
                    }
                    // Pings are answered by the library.
                    Ok(_) => {}
                    Err(tungstenite::Error::Io(e)) if e.kind() == io::ErrorKind::WouldBlock => {
                        break;
                    }
                    Err(
                        tungstenite::Error::ConnectionClosed | tungstenite::Error::AlreadyClosed,
                    ) => {
                        return Ok(());
                    }
                    Err(e) => return Err(e.into()),
                }
            }
            unsent = flush(ws)?;
        }
    }
}

/// Flushes the WebSocket; whether bytes are left for when it can take them.
fn flush(ws: &mut WebSocket<Bounded>) -> Result<bool, BridgeError> {
    match ws.flush() {
        Ok(()) => Ok(false),
        Err(tungstenite::Error::Io(e)) if e.kind() == io::ErrorKind::WouldBlock => Ok(true),
        Err(tungstenite::Error::ConnectionClosed) => Ok(false),
        Err(e) => Err(e.into()),
    }
}

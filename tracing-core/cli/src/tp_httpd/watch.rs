//! Watching a client while its query runs: a query that sends nothing for
//! a long time (a count over a huge join) must stop when the client that
//! asked for it goes away, not hold the session until SQLite is done. A
//! [`Watch`] is a thread blocked in `poll(2)` on the client's socket for a
//! hang-up (`POLLRDHUP`: the peer closed or shut down its side; `POLLHUP`,
//! `POLLERR`: reset) and on one end of a socket pair that the request's
//! end closes; on a hang-up it cancels the query. Bytes the client sends
//! meanwhile (a pipelined request) are not a hang-up and stay unread.

use std::io;
use std::net::TcpStream;
use std::os::unix::net::UnixStream;
use std::thread::JoinHandle;

use rustix::event::{PollFd, PollFlags, poll};
use zerotrace_trace_processor::rpc::QueryCancel;

/// The reason a query stopped because of its client.
pub const CLIENT_GONE: &str = "the client closed the connection";

/// A running watch; dropping it ends the watch (and waits for its thread),
/// so a hang-up after the request cannot cancel a later one.
#[derive(Debug)]
pub struct Watch {
    stop: Option<UnixStream>,
    thread: Option<JoinHandle<()>>,
}

impl Watch {
    /// Watches `conn` until dropped, cancelling `cancel` if its client
    /// hangs up.
    pub fn start(conn: &TcpStream, cancel: QueryCancel) -> io::Result<Self> {
        let conn = conn.try_clone()?;
        let (stop, stopped) = UnixStream::pair()?;
        let thread = std::thread::Builder::new()
            .name("tp-httpd-watch".into())
            .spawn(move || {
                if hung_up(&conn, &stopped) {
                    cancel.cancel(CLIENT_GONE);
                }
            })?;
        Ok(Watch {
            stop: Some(stop),
            thread: Some(thread),
        })
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        // Closing our end wakes the poll.
        drop(self.stop.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Blocks until `conn`'s peer hangs up (true) or `stopped` is closed
/// (false).
fn hung_up(conn: &TcpStream, stopped: &UnixStream) -> bool {
    let gone = PollFlags::RDHUP | PollFlags::HUP | PollFlags::ERR;
    loop {
        let mut fds = [
            PollFd::new(conn, PollFlags::RDHUP),
            PollFd::new(stopped, PollFlags::IN),
        ];
        match poll(&mut fds, None) {
            Ok(_) => {}
            Err(rustix::io::Errno::INTR) => continue,
            Err(_) => return false,
        }
        if !fds[1].revents().is_empty() {
            return false;
        }
        if fds[0].revents().intersects(gone) {
            return true;
        }
    }
}

//! The daemon's one loop: wait for the sockets (or the core's next
//! deadline, or a stalled peer's timeout), hand what is ready to the
//! connections, let the core's timers fire, carry out its actions; and the
//! orderly stop when the shutdown fd becomes readable.

use std::io::{self, Write};

use rustix::fd::AsFd;

use super::poller::Ready;
use super::{Daemon, TOKEN_CONN_BASE, TOKEN_DOOR, TOKEN_LISTENER_BASE, TOKEN_SHUTDOWN};
use crate::ipc::socket::Endpoint;
use crate::platform::boottime_ns;

impl Daemon {
    /// Runs until the shutdown fd becomes readable.
    pub fn run(&mut self) -> io::Result<()> {
        let mut events: Vec<Ready> = Vec::with_capacity(64);
        loop {
            let now = boottime_ns();
            let timeout = self.svc.poll_timeout().map(|t| {
                let d = t.saturating_sub(now);
                rustix::event::Timespec {
                    tv_sec: (d / 1_000_000_000) as i64,
                    tv_nsec: (d % 1_000_000_000) as _,
                }
            });
            // With data stuck in a send queue, wake up to enforce the timeout.
            let stall_tick = rustix::event::Timespec {
                tv_sec: 1,
                tv_nsec: 0,
            };
            let timeout = match (timeout, self.conns.values().any(|c| c.queued > 0)) {
                (Some(t), true) if t.tv_sec >= 1 => Some(stall_tick),
                (None, true) => Some(stall_tick),
                (t, _) => t,
            };
            events.clear();
            #[cfg(unix)]
            let door = self.door.as_ref().map(|d| d.wake.as_fd());
            #[cfg(not(unix))]
            let door: Option<rustix::fd::BorrowedFd<'_>> = None;
            // What `poll` needs listed at every wait (epoll ignores it).
            let watched = self
                .shutdown
                .iter()
                .map(|fd| (fd.as_fd(), TOKEN_SHUTDOWN, false))
                .chain(
                    self.listeners
                        .iter()
                        .enumerate()
                        .map(|(i, (l, _))| (l.as_fd(), TOKEN_LISTENER_BASE + i as u64, false)),
                )
                .chain(door.map(|fd| (fd, TOKEN_DOOR, false)))
                .chain(
                    self.conns
                        .iter()
                        .map(|(&token, c)| (c.stream.as_fd(), token, c.writable_armed)),
                );
            match self.poller.wait(watched, timeout.as_ref(), &mut events) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
            for ev in &events {
                let token = ev.token;
                if token == TOKEN_SHUTDOWN {
                    self.shutdown_now();
                    return Ok(());
                } else if token == TOKEN_DOOR {
                    self.admit_door();
                } else if token < TOKEN_CONN_BASE {
                    self.admit_arrivals((token - TOKEN_LISTENER_BASE) as usize);
                } else {
                    if ev.read {
                        self.read(token);
                    }
                    if ev.write {
                        self.flush_conn(token);
                    }
                }
            }
            self.svc.handle_timeout(boottime_ns());
            self.apply_actions();
            self.flush_all();
        }
    }

    /// Stops every session (file sessions write what they hold) and closes.
    fn shutdown_now(&mut self) {
        self.log(2, format_args!("shutting down"));
        self.svc.shutdown(boottime_ns());
        self.apply_actions();
        self.flush_all();
        for f in self.files.values_mut() {
            let _ = f.flush();
        }
        self.remove_socket_files();
    }

    /// Removes the socket files this daemon created.
    fn remove_socket_files(&self) {
        let paths = self
            .cfg
            .producer_sockets
            .iter()
            .chain(std::iter::once(&self.cfg.consumer_socket));
        for ep in paths {
            if let Endpoint::Path(p) = ep {
                let _ = std::fs::remove_file(p);
            }
        }
    }
}

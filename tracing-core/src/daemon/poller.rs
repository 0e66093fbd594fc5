//! Readiness of the daemon's sockets: epoll on Linux, which keeps the
//! registrations; elsewhere `poll` (WSAPoll on Windows) over the set the
//! driver lists at every wait, so there registering does nothing.

use std::io;

use rustix::event::Timespec;
use rustix::fd::BorrowedFd;

/// A socket that is ready.
#[derive(Debug, Clone, Copy)]
pub(super) struct Ready {
    /// Its token.
    pub token: u64,
    /// Readable, closed or failed: read it.
    pub read: bool,
    /// Writable.
    pub write: bool,
}

/// A socket as the driver lists it for a wait: its token and whether it
/// waits to write.
pub(super) type Watched<'a> = (BorrowedFd<'a>, u64, bool);

#[cfg(target_os = "linux")]
pub(super) use epoll_poller::Poller;
#[cfg(not(target_os = "linux"))]
pub(super) use poll_poller::Poller;

#[cfg(target_os = "linux")]
mod epoll_poller {
    use rustix::event::epoll;
    use rustix::fd::{AsFd, OwnedFd};

    use super::{Ready, Timespec, Watched, io};

    /// An epoll instance.
    pub(in crate::daemon) struct Poller {
        epoll: OwnedFd,
        events: Vec<epoll::Event>,
    }

    impl Poller {
        /// A new epoll instance.
        pub fn new() -> io::Result<Poller> {
            Ok(Poller {
                epoll: epoll::create(epoll::CreateFlags::CLOEXEC)?,
                events: Vec::with_capacity(64),
            })
        }

        /// Watches `source` for reading.
        pub fn add(&self, source: impl AsFd, token: u64) -> io::Result<()> {
            epoll::add(
                &self.epoll,
                source,
                epoll::EventData::new_u64(token),
                epoll::EventFlags::IN,
            )?;
            Ok(())
        }

        /// Watches `source` for writing too (`write`), or no longer.
        pub fn set_write(&self, source: impl AsFd, token: u64, write: bool) -> io::Result<()> {
            let flags = if write {
                epoll::EventFlags::IN | epoll::EventFlags::OUT
            } else {
                epoll::EventFlags::IN
            };
            epoll::modify(&self.epoll, source, epoll::EventData::new_u64(token), flags)?;
            Ok(())
        }

        /// Stops watching `source`.
        pub fn remove(&self, source: impl AsFd) -> io::Result<()> {
            epoll::delete(&self.epoll, source)?;
            Ok(())
        }

        /// Waits until something is ready or `timeout` passes and appends
        /// what is ready to `ready` (an interruption is an
        /// [`io::ErrorKind::Interrupted`] error). `_watched` is not needed:
        /// epoll keeps the registrations.
        pub fn wait<'a>(
            &mut self,
            _watched: impl Iterator<Item = Watched<'a>>,
            timeout: Option<&Timespec>,
            ready: &mut Vec<Ready>,
        ) -> io::Result<()> {
            self.events.clear();
            epoll::wait(
                &self.epoll,
                rustix::buffer::spare_capacity(&mut self.events),
                timeout,
            )?;
            let read = epoll::EventFlags::IN | epoll::EventFlags::HUP | epoll::EventFlags::ERR;
            ready.extend(self.events.iter().map(|ev| {
                // A copy: the event is a packed struct.
                let flags = ev.flags;
                Ready {
                    token: ev.data.u64(),
                    read: flags.intersects(read),
                    write: flags.contains(epoll::EventFlags::OUT),
                }
            }));
            Ok(())
        }
    }
}

// Also built for Linux tests, which check it next to epoll.
#[cfg(any(not(target_os = "linux"), test))]
mod poll_poller {
    use rustix::event::{PollFd, PollFlags, poll};
    use rustix::fd::AsFd;

    use super::{Ready, Timespec, Watched, io};

    /// The longest single wait: `poll` takes milliseconds in a C int (and
    /// the driver works out its timeout afresh after every wait).
    const MAX_WAIT: Timespec = Timespec {
        tv_sec: 3600,
        tv_nsec: 0,
    };

    /// `poll` over the sockets the driver lists at each wait.
    pub(in crate::daemon) struct Poller {
        tokens: Vec<u64>,
    }

    impl Poller {
        /// A poller (nothing to create).
        pub fn new() -> io::Result<Poller> {
            Ok(Poller { tokens: Vec::new() })
        }

        /// Nothing to do: the driver lists `source` at every wait.
        pub fn add(&self, _source: impl AsFd, _token: u64) -> io::Result<()> {
            Ok(())
        }

        /// Nothing to do: the driver lists whether a socket waits to write
        /// at every wait.
        pub fn set_write(&self, _source: impl AsFd, _token: u64, _write: bool) -> io::Result<()> {
            Ok(())
        }

        /// Nothing to do: the driver no longer lists `source`.
        pub fn remove(&self, _source: impl AsFd) -> io::Result<()> {
            Ok(())
        }

        /// Waits until one of `watched` is ready or `timeout` passes and
        /// appends what is ready to `ready` (an interruption is an
        /// [`io::ErrorKind::Interrupted`] error).
        pub fn wait<'a>(
            &mut self,
            watched: impl Iterator<Item = Watched<'a>>,
            timeout: Option<&Timespec>,
            ready: &mut Vec<Ready>,
        ) -> io::Result<()> {
            self.tokens.clear();
            let mut fds = Vec::new();
            for (fd, token, write) in watched {
                let flags = if write {
                    PollFlags::IN | PollFlags::OUT
                } else {
                    PollFlags::IN
                };
                fds.push(PollFd::from_borrowed_fd(fd, flags));
                self.tokens.push(token);
            }
            let timeout = match timeout {
                Some(t) if t.tv_sec < MAX_WAIT.tv_sec => Some(t),
                _ => Some(&MAX_WAIT),
            };
            poll(&mut fds, timeout)?;
            let read = PollFlags::IN | PollFlags::HUP | PollFlags::ERR | PollFlags::NVAL;
            for (fd, &token) in fds.iter().zip(&self.tokens) {
                let flags = fd.revents();
                if !flags.is_empty() {
                    ready.push(Ready {
                        token,
                        read: flags.intersects(read),
                        write: flags.contains(PollFlags::OUT),
                    });
                }
            }
            Ok(())
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use std::io::Write;
    use std::os::fd::AsFd;
    use std::os::unix::net::UnixStream;

    use super::{Ready, Timespec};

    const NOW: Timespec = Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };

    /// Waits without blocking; the tokens ready to read and to write.
    fn ready_now(wait: impl FnOnce(&mut Vec<Ready>)) -> (Vec<u64>, Vec<u64>) {
        let mut ready = Vec::new();
        wait(&mut ready);
        let mut read: Vec<u64> = ready.iter().filter(|r| r.read).map(|r| r.token).collect();
        let mut write: Vec<u64> = ready.iter().filter(|r| r.write).map(|r| r.token).collect();
        read.sort_unstable();
        write.sort_unstable();
        (read, write)
    }

    /// Both pollers report the same readiness by token: readable once data
    /// or the end of the stream waits, writable only while asked.
    macro_rules! readiness_test {
        ($name:ident, $poller:ty) => {
            #[test]
            #[cfg_attr(miri, ignore = "sockets are not available under Miri")]
            fn $name() {
                let (a, b) = UnixStream::pair().unwrap();
                let mut p = <$poller>::new().unwrap();
                p.add(&a, 7).unwrap();
                p.add(&b, 9).unwrap();
                let mut b_writes = true;
                p.set_write(&b, 9, b_writes).unwrap();
                let wait = |p: &mut $poller, b_writes: bool| {
                    let watched = [(a.as_fd(), 7, false), (b.as_fd(), 9, b_writes)];
                    ready_now(|r| p.wait(watched.into_iter(), Some(&NOW), r).unwrap())
                };
                assert_eq!(wait(&mut p, b_writes), (vec![], vec![9]));
                (&b).write_all(b"x").unwrap();
                b_writes = false;
                p.set_write(&b, 9, b_writes).unwrap();
                assert_eq!(wait(&mut p, b_writes), (vec![7], vec![]));
                drop(b);
                p.remove(&a).unwrap();
                let mut ready = Vec::new();
                let watched = [(a.as_fd(), 7, false)];
                p.wait(watched.into_iter(), Some(&NOW), &mut ready).unwrap();
                // epoll no longer watches `a`; poll still does, as listed.
                assert!(ready.iter().all(|r| r.token == 7 && r.read));
            }
        };
    }

    #[cfg(target_os = "linux")]
    readiness_test!(epoll_readiness, super::epoll_poller::Poller);
    readiness_test!(poll_readiness, super::poll_poller::Poller);
}

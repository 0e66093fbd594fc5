//! Keep-alive connections waiting for their next request must not lock
//! working clients out: a connection counts against
//! [`super::MAX_CONNECTIONS`] only while a request of it is being read or
//! served. While it waits it is parked here instead, and at most
//! [`MAX_IDLE_CONNECTIONS`] wait at once: parking one more closes the one
//! that has waited longest (its thread then ends). No timer closes an idle
//! connection: Google's Python client holds one between queries for as
//! long as its user thinks, and raises (it does not reconnect) on a
//! connection the server closed.

use std::collections::VecDeque;
use std::net::{Shutdown, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

/// The most keep-alive connections kept waiting for a next request.
pub const MAX_IDLE_CONNECTIONS: usize = 256;

/// The connections waiting for their next request.
#[derive(Debug, Default)]
pub(crate) struct IdlePool {
    waiting: Mutex<Waiting>,
}

#[derive(Debug, Default)]
struct Waiting {
    next_ticket: u64,
    /// Oldest first: each with a handle on its socket to close it by.
    conns: VecDeque<(u64, TcpStream)>,
}

/// A parked connection's place in the pool.
#[derive(Debug)]
pub(crate) struct Ticket(Option<u64>);

impl IdlePool {
    /// `conn` waits for its next request: it stops counting in `working`,
    /// and the longest-waiting connection is closed if too many wait.
    pub(crate) fn park(&self, conn: &TcpStream, working: &AtomicUsize) -> Ticket {
        working.fetch_sub(1, Ordering::AcqRel);
        let Ok(handle) = conn.try_clone() else {
            return Ticket(None);
        };
        let mut w = self.waiting.lock().unwrap_or_else(PoisonError::into_inner);
        let ticket = w.next_ticket;
        w.next_ticket = ticket.wrapping_add(1);
        w.conns.push_back((ticket, handle));
        while w.conns.len() > MAX_IDLE_CONNECTIONS {
            if let Some((_, oldest)) = w.conns.pop_front() {
                // Its blocked read returns; its thread ends.
                let _ = oldest.shutdown(Shutdown::Both);
            }
        }
        Ticket(Some(ticket))
    }

    /// The connection's request began (or it ended): it counts in
    /// `working` again and leaves the pool.
    pub(crate) fn unpark(&self, ticket: Ticket, working: &AtomicUsize) {
        working.fetch_add(1, Ordering::AcqRel);
        let Some(t) = ticket.0 else { return };
        let mut w = self.waiting.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(at) = w.conns.iter().position(|(k, _)| *k == t) {
            w.conns.remove(at);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::net::TcpListener;

    #[test]
    fn parking_one_too_many_closes_the_longest_waiting() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let pool = IdlePool::default();
        let working = AtomicUsize::new(MAX_IDLE_CONNECTIONS + 1);
        let mut clients = Vec::new();
        let mut tickets = Vec::new();
        let mut servers = Vec::new();
        for _ in 0..=MAX_IDLE_CONNECTIONS {
            clients.push(TcpStream::connect(addr).unwrap());
            let (s, _) = listener.accept().unwrap();
            tickets.push(pool.park(&s, &working));
            servers.push(s);
        }
        // None of them counts as working.
        assert_eq!(working.load(Ordering::Acquire), 0);
        // The first parked was closed: its client reads the end.
        let mut b = [0u8; 1];
        assert_eq!(clients[0].read(&mut b).unwrap(), 0);
        assert_eq!(
            pool.waiting.lock().unwrap().conns.len(),
            MAX_IDLE_CONNECTIONS
        );
        let last = tickets.pop().unwrap();
        pool.unpark(last, &working);
        assert_eq!(working.load(Ordering::Acquire), 1);
        assert_eq!(
            pool.waiting.lock().unwrap().conns.len(),
            MAX_IDLE_CONNECTIONS - 1
        );
    }
}

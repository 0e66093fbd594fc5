//! Whom the trace processor's RPC server serves, and where it may listen.
//! The server runs SQL over its user's trace, so it follows the peer
//! policy's rule for it ([`Policy::OwnUidAndRoot`], judged in
//! `zerotrace_core::peer_policy`): its own uid and root, as the kernel
//! vouches for them (a loopback peer's socket owner in `/proc/net/tcp`).
//! Any other peer, and a peer the kernel vouches for no uid, gets a 403
//! whose body names the rule.
//!
//! It listens on loopback unless told otherwise with
//! `--insecure-serve-remote-peers` ([`ServerOptions::serve_remote_peers`]);
//! without it another address is refused before anything is bound
//! ([`BindError::NotLoopback`]). With it the server says on stderr what
//! it exposes, and admits peers the kernel vouches for no uid (remote
//! ones, for which the rule cannot be enforced); local peers keep the rule.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use zerotrace_core::peer_policy::{Policy, RefusedPeer};

use super::ServerOptions;
use super::request::MAX_HEAD_BYTES;

/// How long a refused peer may take to send its request's head before it
/// is told why and closed.
const REFUSAL_TIMEOUT: Duration = Duration::from_secs(10);

/// The most bytes of a refused peer's body read (and dropped) after the
/// answer, so that closing does not reset the connection under it.
const REFUSAL_DRAIN_BYTES: usize = 1 << 20;

/// Why the server does not bind an address.
#[derive(Debug, thiserror::Error)]
pub enum BindError {
    /// The address is not loopback and the server was not told to serve
    /// remote peers.
    #[error(
        "{addr} is not a loopback address: the trace processor would serve the loaded trace \
         and SQL over it to anyone who can reach it, and the kernel vouches for no remote \
         peer's uid. Listen on 127.0.0.1 or [::1], or pass --insecure-serve-remote-peers \
         to accept that risk"
    )]
    NotLoopback {
        /// The address refused.
        addr: SocketAddr,
    },
    /// The address names nothing.
    #[error("{0} resolves to no address")]
    Unresolved(String),
    /// The socket could not be bound.
    #[error("{0}")]
    Io(#[from] io::Error),
}

impl From<BindError> for io::Error {
    fn from(e: BindError) -> io::Error {
        match e {
            BindError::Io(e) => e,
            other => io::Error::new(io::ErrorKind::InvalidInput, other),
        }
    }
}

/// Whether an address is loopback (an IPv4-mapped one too).
fn is_loopback(a: &SocketAddr) -> bool {
    a.ip().to_canonical().is_loopback()
}

/// The server's peer policy.
pub(super) fn policy(options: &ServerOptions) -> Policy {
    Policy::OwnUidAndRoot {
        admit_unvouched: options.serve_remote_peers,
    }
}

/// Refuses `addrs` unless every one is loopback or remote peers are to be
/// served; `what` is the address as given.
pub(super) fn check_bind(
    what: &str,
    addrs: &[SocketAddr],
    serve_remote_peers: bool,
) -> Result<(), BindError> {
    if addrs.is_empty() {
        return Err(BindError::Unresolved(what.to_owned()));
    }
    match addrs.iter().find(|a| !is_loopback(a)) {
        Some(addr) if !serve_remote_peers => Err(BindError::NotLoopback { addr: *addr }),
        _ => Ok(()),
    }
}

/// What the server says on stderr when it listens beyond loopback.
pub fn remote_warning(bound: SocketAddr) -> Option<String> {
    if is_loopback(&bound) {
        return None;
    }
    let own = zerotrace_core::platform::current_uid();
    Some(format!(
        "zerotrace: WARNING: the trace processor listens on {bound}, beyond loopback \
         (--insecure-serve-remote-peers): anyone who can reach this address can read the \
         loaded trace, run SQL over it and load traces of their own. The rule \"uid {own} \
         and root only\" holds for local processes only; the kernel vouches for no remote \
         peer's uid, so remote peers are admitted unvouched."
    ))
}

/// A plain-text answer that closes the connection.
pub(super) fn plain(status: &str, body: &str) -> String {
    format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n{body}",
        body.len()
    )
}

/// Tells a refused peer why (403, the rule in the body) and closes: the
/// request's head is read first (bounded in time and bytes), and what
/// follows it is drained after the answer, so that the peer is not reset
/// before it reads the answer.
pub(super) fn refuse_peer(refused: RefusedPeer<TcpStream>, log: bool) {
    let RefusedPeer {
        mut stream,
        peer,
        refusal,
    } = refused;
    if log {
        eprintln!("[HTTP] refused uid {:?}: {refusal}", peer.uid);
    }
    let deadline = Instant::now() + REFUSAL_TIMEOUT;
    let mut head = Vec::new();
    let mut buf = [0u8; 4096];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < MAX_HEAD_BYTES {
        match read_until(&mut stream, &mut buf, deadline) {
            Some(n) => head.extend_from_slice(&buf[..n]),
            None => break,
        }
    }
    let answer = plain("403 Forbidden", &format!("{refusal}\n"));
    let _ = stream.write_all(answer.as_bytes());
    let _ = stream.shutdown(std::net::Shutdown::Write);
    let mut drained = 0;
    while drained < REFUSAL_DRAIN_BYTES {
        match read_until(&mut stream, &mut buf, deadline) {
            Some(n) => drained += n,
            None => break,
        }
    }
}

/// One read that ends by `deadline`; `None` at the end of the stream, on an
/// error or past the deadline.
fn read_until(stream: &mut TcpStream, buf: &mut [u8], deadline: Instant) -> Option<usize> {
    let left = deadline.saturating_duration_since(Instant::now());
    if left.is_zero() || stream.set_read_timeout(Some(left)).is_err() {
        return None;
    }
    match stream.read(buf) {
        Ok(0) | Err(_) => None,
        Ok(n) => Some(n),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addrs(s: &str) -> Vec<SocketAddr> {
        std::net::ToSocketAddrs::to_socket_addrs(s)
            .unwrap()
            .collect()
    }

    #[test]
    fn beyond_loopback_only_when_told() {
        for ok in ["127.0.0.1:9001", "[::1]:9001", "[::ffff:127.0.0.1]:1"] {
            assert!(check_bind(ok, &addrs(ok), false).is_ok(), "{ok}");
        }
        for remote in ["0.0.0.0:9001", "[::]:9001", "192.0.2.1:9001"] {
            let e = check_bind(remote, &addrs(remote), false).unwrap_err();
            assert!(matches!(e, BindError::NotLoopback { .. }), "{remote}: {e}");
            assert!(
                e.to_string().contains("--insecure-serve-remote-peers"),
                "{e}"
            );
            assert!(check_bind(remote, &addrs(remote), true).is_ok(), "{remote}");
        }
        assert!(matches!(
            check_bind("x", &[], true),
            Err(BindError::Unresolved(_))
        ));
    }

    #[test]
    fn the_warning_says_what_is_exposed() {
        assert_eq!(remote_warning("127.0.0.1:1".parse().unwrap()), None);
        let w = remote_warning("0.0.0.0:9001".parse().unwrap()).unwrap();
        assert!(w.contains("read the loaded trace, run SQL"), "{w}");
        assert!(w.contains("remote peers are admitted unvouched"), "{w}");
    }

    #[test]
    fn the_server_serves_its_uid_and_root() {
        let strict = policy(&ServerOptions::default());
        assert_eq!(
            strict,
            Policy::OwnUidAndRoot {
                admit_unvouched: false
            }
        );
        let open = policy(&ServerOptions {
            serve_remote_peers: true,
            ..ServerOptions::default()
        });
        assert_eq!(
            open,
            Policy::OwnUidAndRoot {
                admit_unvouched: true
            }
        );
    }
}

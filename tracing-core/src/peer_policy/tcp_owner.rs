//! Who is on the other end of a loopback TCP connection, as the kernel
//! tells it, so that a listener lends a TCP peer no more than its own
//! identity (the policy's judgement needs a uid to judge).
//!
//! A loopback TCP peer is a local process whose socket the kernel lists in
//! `/proc/net/tcp` (or `tcp6`) with its owner's uid: the row whose local
//! address is the peer's and whose remote address is ours, in state
//! ESTABLISHED. Anything else (a peer on another machine, a row that is
//! gone or closing, a file that does not parse) names nobody. The parsing
//! is a pure function over the file's text; reading the files is
//! [`peer_uid`].

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// `TCP_ESTABLISHED` as `/proc/net/tcp` prints it.
const ESTABLISHED: &str = "01";

/// The uid that owns the socket connected from `peer` to `local` on this
/// machine, from `/proc/net/tcp` and `/proc/net/tcp6` (this process's
/// network namespace); `None` where the kernel names no such socket.
pub fn peer_uid(local: SocketAddr, peer: SocketAddr) -> Option<u32> {
    #[cfg(target_os = "linux")]
    {
        ["/proc/net/tcp", "/proc/net/tcp6"].iter().find_map(|f| {
            let text = std::fs::read_to_string(f).ok()?;
            uid_in_table(&text, local, peer)
        })
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (local, peer);
        None
    }
}

/// In a `/proc/net/tcp{,6}` table, the uid of the established socket
/// whose local address is `peer` and whose remote address is `local`.
/// Lines that do not parse are passed over.
pub fn uid_in_table(table: &str, local: SocketAddr, peer: SocketAddr) -> Option<u32> {
    let (local, peer) = (canonical(local), canonical(peer));
    table.lines().skip(1).find_map(|line| {
        let mut f = line.split_ascii_whitespace();
        let _slot = f.next()?;
        let row_local = canonical(parse_addr(f.next()?)?);
        let row_remote = canonical(parse_addr(f.next()?)?);
        let state = f.next()?;
        let uid = f.nth(3)?;
        if row_local != peer || row_remote != local || state != ESTABLISHED {
            return None;
        }
        uid.parse().ok()
    })
}

/// An IPv4-mapped IPv6 address as the IPv4 one, so both tables compare.
fn canonical(a: SocketAddr) -> SocketAddr {
    match a.ip() {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => SocketAddr::new(IpAddr::V4(v4), a.port()),
            None => a,
        },
        IpAddr::V4(_) => a,
    }
}

/// `ADDR:PORT` as the kernel prints it: the address as 32-bit words in
/// this machine's byte order, each `%08X` (one for IPv4, four for IPv6),
/// the port as `%04X`.
fn parse_addr(s: &str) -> Option<SocketAddr> {
    let (addr, port) = s.split_once(':')?;
    let port = u16::from_str_radix(port, 16).ok()?;
    let word = |i: usize| -> Option<[u8; 4]> {
        let hex = addr.get(i * 8..i * 8 + 8)?;
        Some(u32::from_str_radix(hex, 16).ok()?.to_ne_bytes())
    };
    let ip = match addr.len() {
        8 => IpAddr::V4(Ipv4Addr::from(word(0)?)),
        32 => {
            let mut b = [0u8; 16];
            for i in 0..4 {
                b[i * 4..i * 4 + 4].copy_from_slice(&word(i)?);
            }
            IpAddr::V6(Ipv6Addr::from(b))
        }
        _ => return None,
    };
    Some(SocketAddr::new(ip, port))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `addr` as the kernel would print it on this machine.
    fn print(a: SocketAddr) -> String {
        let ip = match a.ip() {
            IpAddr::V4(v4) => format!("{:08X}", u32::from_ne_bytes(v4.octets())),
            IpAddr::V6(v6) => v6
                .octets()
                .chunks(4)
                .map(|w| format!("{:08X}", u32::from_ne_bytes([w[0], w[1], w[2], w[3]])))
                .collect(),
        };
        format!("{ip}:{:04X}", a.port())
    }

    fn row(local: SocketAddr, remote: SocketAddr, state: &str, uid: u32) -> String {
        format!(
            "   3: {} {} {state} 00000000:00000000 00:00000000 00000000 {uid:>5}        0 4242 1 0000000000000000 20 4 30 10 -1",
            print(local),
            print(remote)
        )
    }

    const HEADER: &str = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode";

    #[test]
    fn the_peers_row_names_its_owner_and_ours_does_not() {
        let ours: SocketAddr = "127.0.0.1:8037".parse().unwrap();
        let peer: SocketAddr = "127.0.0.1:51234".parse().unwrap();
        let table = [
            HEADER.to_owned(),
            // The listener and our accepted socket belong to the bridge.
            row(ours, "0.0.0.0:0".parse().unwrap(), "0A", 0),
            row(ours, peer, ESTABLISHED, 0),
            row(peer, ours, ESTABLISHED, 1000),
        ]
        .join("\n");
        assert_eq!(uid_in_table(&table, ours, peer), Some(1000));
        // The kernel's own printing agrees with ours for 127.0.0.1.
        if cfg!(target_endian = "little") {
            assert!(table.contains("0100007F:C822 0100007F:1F65"), "{table}");
        }
    }

    #[test]
    fn closing_or_absent_rows_name_nobody() {
        let ours: SocketAddr = "127.0.0.1:8037".parse().unwrap();
        let peer: SocketAddr = "127.0.0.1:51234".parse().unwrap();
        // TIME_WAIT rows say uid 0: they must not make a peer root.
        for state in ["06", "05", "08", "0A"] {
            let table = [HEADER.to_owned(), row(peer, ours, state, 0)].join("\n");
            assert_eq!(uid_in_table(&table, ours, peer), None, "{state}");
        }
        let other: SocketAddr = "127.0.0.1:51235".parse().unwrap();
        let table = [HEADER.to_owned(), row(other, ours, ESTABLISHED, 0)].join("\n");
        assert_eq!(uid_in_table(&table, ours, peer), None);
        assert_eq!(uid_in_table("", ours, peer), None);
        assert_eq!(uid_in_table("header\n garbage: x y z", ours, peer), None);
        assert_eq!(
            uid_in_table("h\n 1: 0100007F:ZZZZ 0:0 01 a b c 5", ours, peer),
            None
        );
    }

    #[test]
    fn ipv6_and_mapped_addresses() {
        let ours: SocketAddr = "[::1]:8037".parse().unwrap();
        let peer: SocketAddr = "[::1]:40000".parse().unwrap();
        let table = [HEADER.to_owned(), row(peer, ours, ESTABLISHED, 77)].join("\n");
        assert_eq!(uid_in_table(&table, ours, peer), Some(77));
        // A dual-stack listener sees an IPv4 peer as ::ffff:a.b.c.d.
        let ours6: SocketAddr = "[::ffff:127.0.0.1]:8037".parse().unwrap();
        let peer6: SocketAddr = "[::ffff:127.0.0.1]:40001".parse().unwrap();
        let table = [
            HEADER.to_owned(),
            row(
                "127.0.0.1:40001".parse().unwrap(),
                "127.0.0.1:8037".parse().unwrap(),
                ESTABLISHED,
                5,
            ),
        ]
        .join("\n");
        assert_eq!(uid_in_table(&table, ours6, peer6), Some(5));
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn a_real_loopback_connection_is_ours() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let c = std::net::TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (s, peer) = l.accept().unwrap();
        let uid = rustix::process::getuid().as_raw();
        assert_eq!(peer_uid(s.local_addr().unwrap(), peer), Some(uid));
        drop(c);
    }
}

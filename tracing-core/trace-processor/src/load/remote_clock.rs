//! A remote machine's `RemoteClockSync`: rounds of clock readings taken on
//! the machine and on the host in turn, and from two adjacent rounds of the
//! same exchange the offset of each clock (machine minus host), estimated
//! from the two round trips they hold and averaged, as upstream estimates
//! it.

use std::collections::BTreeMap;

use protozero::Decoder;

/// BOOTTIME's id: rounds are told apart by the machine's BOOTTIME.
const BOOTTIME: u64 = 6;

/// Adjacent readings further apart than this belong to different
/// exchanges.
const EXCHANGE_NS: u64 = 30_000_000_000;

/// One round: clock id → (host reading, machine reading), 0 when absent.
pub type Round = BTreeMap<u64, (u64, u64)>;

/// The clocks of a `ClockSnapshot` message: (id, timestamp).
fn clocks(snapshot: &[u8]) -> Vec<(u64, u64)> {
    Decoder::new(snapshot)
        .flatten()
        .filter(|f| f.id == 1)
        .filter_map(|f| f.as_bytes().ok())
        .map(|c| {
            let d = Decoder::new(c);
            let v = |n| d.find_last(n).and_then(|f| f.as_u64().ok()).unwrap_or(0);
            (v(1), v(2))
        })
        .collect()
}

/// The rounds of a `RemoteClockSync` message.
pub fn rounds(bytes: &[u8]) -> Vec<Round> {
    let mut out = Vec::new();
    for synced in Decoder::new(bytes)
        .flatten()
        .filter(|f| f.id == 1)
        .filter_map(|f| f.as_bytes().ok())
    {
        let d = Decoder::new(synced);
        let mut round = Round::new();
        // SyncedClocks: client_clocks = 2, host_clocks = 3.
        if let Some(host) = d.find_last(3).and_then(|f| f.as_bytes().ok()) {
            for (id, ts) in clocks(host) {
                round.entry(id).or_default().0 = ts;
            }
        }
        if let Some(client) = d.find_last(2).and_then(|f| f.as_bytes().ok()) {
            for (id, ts) in clocks(client) {
                round.entry(id).or_default().1 = ts;
            }
        }
        out.push(round);
    }
    out
}

/// Each clock's offset (machine minus host) and the host reading it is
/// anchored at: (clock id, offset, host anchor).
pub fn offsets(rounds: &[Round]) -> Vec<(u64, i64, i64)> {
    let mut raw: BTreeMap<u64, Vec<i64>> = BTreeMap::new();
    for pair in rounds.windows(2) {
        let (ping, update) = (&pair[0], &pair[1]);
        let boot = |r: &Round| r.get(&BOOTTIME).map_or(0, |c| c.1);
        if boot(update).wrapping_sub(boot(ping)) >= EXCHANGE_NS {
            continue;
        }
        for (id, &(t1h, t1c)) in ping {
            let Some(&(t2h, t2c)) = update.get(id) else {
                continue;
            };
            if t1h == 0 || t1c == 0 || t2h == 0 || t2c == 0 {
                continue;
            }
            let [t1h, t1c, t2h, t2c] = [t1h, t1c, t2h, t2c].map(|v| v as i64);
            let o1 = t1c.wrapping_add(t2c) / 2 - t1h;
            let o2 = t2c - t1h.wrapping_add(t2h) / 2;
            raw.entry(*id).or_default().extend([o1, o2]);
        }
    }
    raw.into_iter()
        .map(|(id, v)| {
            let sum: i128 = v.iter().map(|&o| i128::from(o)).sum();
            let avg = (sum / v.len() as i128) as i64;
            let anchor = rounds
                .iter()
                .filter_map(|r| r.get(&id).map(|c| c.0))
                .rfind(|h| *h != 0)
                .unwrap_or(0) as i64;
            (id, avg, anchor)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round(host: u64, client: u64) -> Round {
        Round::from([(BOOTTIME, (host, client))])
    }

    #[test]
    fn offsets_average_both_round_trips() {
        // The machine's clock runs 1000 ns ahead; each message takes 10 ns.
        let rounds = [round(1010, 2000), round(1030, 2020)];
        assert_eq!(offsets(&rounds), vec![(BOOTTIME, 1000, 1030)]);
        // Rounds of different exchanges are not paired.
        let apart = [round(1010, 2000), round(1030, 2000 + EXCHANGE_NS)];
        assert!(offsets(&apart).is_empty());
        assert!(offsets(&[]).is_empty());
    }

    #[test]
    fn hostile_bytes_give_no_rounds_or_empty_ones() {
        assert!(rounds(&[0xff, 0xff, 0xff]).is_empty());
        assert_eq!(rounds(&[0x0a, 0x00]), vec![Round::new()]);
    }
}

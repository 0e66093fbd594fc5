//! Upstream's rules for the clocks of an archive's traces: a manifest's
//! `clocks` entries relate a file's clock to another file's (an edge in
//! the clock graph, with its offset) or pin a clockless file's own
//! timeline to one; a text member's times (JSON's own timeline, systrace's
//! MONOTONIC) are placed through them; and a clock no snapshot relates to
//! the trace clock is placed, when the trace ends, by a REALTIME
//! rendezvous (both machines relate to REALTIME, assumed equal across
//! machines), else by the same clock domain at zero offset, else not at
//! all (`clock_sync_unrelatable_clock_domains`, its packets dropped).

use super::manifest::Manifest;
use crate::clock::{ClockError, machine_clock};
use crate::load::Loader;

/// REALTIME's id.
const REALTIME: u64 = 1;

/// Where a clockless member's own timeline goes: its times moved by
/// `offset`, then read on the `key` clock (None: they are trace times).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pin {
    /// The reference clock.
    pub key: Option<u64>,
    /// Added to the member's times first.
    pub offset: i64,
}

/// Adds the manifest's edges relating one file's clock to another's.
pub(super) fn relate(l: &mut Loader, m: &Manifest) {
    for f in &m.files {
        let Some(c) = &f.clocks else { continue };
        let (Some(clock), Some(ref_clock)) = (c.clock, c.sync_clock) else {
            continue;
        };
        let src_machine = l.machine_of_file(m, &f.path, c.machine.as_deref());
        let ref_machine = l.machine_of_file(m, &c.sync_file, c.sync_machine.as_deref());
        let base = c.offset_ns.checked_neg().unwrap_or(0).max(0);
        let (Ok(src), Ok(dst)) = (
            u64::try_from(base),
            u64::try_from(base.saturating_add(c.offset_ns)),
        ) else {
            continue;
        };
        let edge = [
            (machine_clock(clock, src_machine), src, 1, false),
            (machine_clock(ref_clock, ref_machine), dst, 1, false),
        ];
        if l.parser.clocks.add_snapshot(&edge).is_none() {
            l.parser.storage.stats.incr("invalid_clock_snapshots");
        }
    }
}

/// The pin of a clockless member (`clocks` without its own clock), as the
/// manifest says; a reference that is itself pinned is followed. Each
/// path's pin is resolved once and kept, so members along one long chain
/// of references cost the chain's length in all, not each.
pub(super) fn pin_of(l: &mut Loader, m: &Manifest, path: &str) -> Option<Pin> {
    let mut memo = std::mem::take(&mut l.archive.pins);
    let mut chain: Vec<(String, i64)> = Vec::new();
    let mut seen = crate::hash::HashSet::default();
    let mut cur = path.to_owned();
    // The pin where the walk stops, before the offsets of `chain`.
    let mut pin = loop {
        if let Some(p) = memo.get(&cur) {
            break *p;
        }
        // A chain that comes back on itself pins nothing.
        if !seen.insert(cur.clone()) {
            break None;
        }
        let Some(c) = m.entry(&cur).and_then(|f| f.clocks.as_ref()) else {
            break None;
        };
        let own = (cur.clone(), c.offset_ns);
        if let Some(ref_clock) = c.sync_clock {
            let machine = l.machine_of_file(m, &c.sync_file, c.sync_machine.as_deref());
            chain.push(own);
            break Some(Pin {
                key: Some(machine_clock(ref_clock, machine)),
                offset: 0,
            });
        }
        let next = c.sync_file.clone();
        chain.push(own);
        if m.entry(&next).and_then(|f| f.clocks.as_ref()).is_none() {
            break Some(Pin {
                key: None,
                offset: 0,
            });
        }
        cur = next;
    };
    for (p, offset) in chain.into_iter().rev() {
        pin = pin.map(|t| Pin {
            key: t.key,
            offset: offset.saturating_add(t.offset),
        });
        memo.insert(p, pin);
    }
    l.archive.pins = memo;
    pin
}

/// A text member's time on the timeline: through its pin, else through
/// its own clock (`own`, of `machine`) when a snapshot relates it, else
/// as it is (the format's clock taken as the trace clock at zero offset).
pub(super) fn text_time(
    l: &mut Loader,
    pin: Option<Pin>,
    own: Option<u64>,
    machine: u32,
    ts: i64,
) -> i64 {
    if let Some(p) = pin {
        let v = ts.saturating_add(p.offset);
        return match p.key {
            Some(k) => l.parser.clocks.trace_time(k, v).unwrap_or(v),
            None => v,
        };
    }
    match own {
        Some(clock) => l
            .parser
            .clocks
            .trace_time(machine_clock(clock, machine), ts)
            .unwrap_or(ts),
        None => ts,
    }
}

/// Before the held packets are converted at the end: places each of
/// their clocks that no snapshot relates to the trace clock by upstream's
/// fallbacks (REALTIME rendezvous, then the same domain), counting the
/// clocks that stay unrelatable.
pub(crate) fn place_deferred(l: &mut Loader, clocks: &[(u64, i64)]) {
    if !l.archive.active {
        return;
    }
    let trace = l.parser.clocks.trace_clock();
    let (trace_machine, trace_id) = split(trace);
    for &(key, ns) in clocks {
        if key >> 63 == 1 || !l.archive.placed.insert(key) {
            continue;
        }
        if l.parser.clocks.trace_time(key, ns) != Err(ClockError::NoPath) {
            continue;
        }
        let (machine, id) = split(key);
        if machine == trace_machine {
            l.parser
                .storage
                .stats
                .incr("clock_sync_unrelatable_clock_domains");
            continue;
        }
        let here = machine_clock(REALTIME, machine);
        let there = machine_clock(REALTIME, trace_machine);
        let tracker = &mut l.parser.clocks;
        if tracker.knows(here) && (tracker.knows(there) || trace == there) {
            identity_edge(l, here, there);
            if l.parser.clocks.trace_time(key, ns).is_ok() {
                continue;
            }
        }
        let peer = machine_clock(id, trace_machine);
        if id == trace_id || l.parser.clocks.knows(peer) {
            identity_edge(l, key, peer);
            if l.parser.clocks.trace_time(key, ns).is_ok() {
                continue;
            }
        }
        l.parser
            .storage
            .stats
            .incr("clock_sync_unrelatable_clock_domains");
    }
}

/// A clock key's machine and builtin clock id.
fn split(key: u64) -> (u32, u64) {
    (((key >> 32) & 0x7FFF_FFFF) as u32, key & 0xFFFF_FFFF)
}

/// An edge reading the two clocks as equal.
fn identity_edge(l: &mut Loader, a: u64, b: u64) {
    let edge = [(a, 0, 1, false), (b, 0, 1, false)];
    if l.parser.clocks.add_snapshot(&edge).is_none() {
        l.parser.storage.stats.incr("invalid_clock_snapshots");
    }
}

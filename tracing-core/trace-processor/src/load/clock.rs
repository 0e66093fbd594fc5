//! Clock conversion: `ClockSnapshot`s say which values several clocks had
//! at one instant; a timestamp on any clock reaches the trace clock
//! (BOOTTIME unless the trace says otherwise) through a path of clocks that
//! were snapshotted together, hop by hop, each hop using the snapshot
//! nearest below the value. Clocks 64..=127 are scoped to one sequence;
//! incremental clocks carry deltas from their last value.

use crate::hash::{HashMap, HashSet};
use std::collections::VecDeque;

/// BOOTTIME's id.
pub const BOOTTIME: u64 = 6;

/// First sequence-scoped clock id.
const FIRST_SEQUENCE_CLOCK: u64 = 64;
/// Last sequence-scoped clock id.
const LAST_SEQUENCE_CLOCK: u64 = 127;

/// The bit that marks a sequence-scoped clock's key.
const SEQUENCE_SCOPED: u64 = 1 << 63;

/// A clock as the tracker keys it: sequence-scoped ids carry their sequence
/// (sequence ids are unique across machines); others carry their machine
/// (0 for the host), as each machine has its own BOOTTIME, MONOTONIC, ...
pub fn clock_key(clock_id: u64, sequence_id: u32, machine: u32) -> u64 {
    let clock_id = clock_id & 0xFFFF_FFFF;
    if (FIRST_SEQUENCE_CLOCK..=LAST_SEQUENCE_CLOCK).contains(&clock_id) {
        SEQUENCE_SCOPED | (u64::from(sequence_id) << 32) | clock_id
    } else {
        machine_clock(clock_id, machine)
    }
}

/// A builtin clock of one machine.
pub fn machine_clock(clock_id: u64, machine: u32) -> u64 {
    (u64::from(machine & 0x7FFF_FFFF) << 32) | (clock_id & 0xFFFF_FFFF)
}

/// The clock graph seen from one machine: its builtin clocks by id.
#[derive(Debug)]
pub struct MachineClocks<'a> {
    tracker: &'a mut ClockTracker,
    machine: u32,
}

impl<'a> MachineClocks<'a> {
    /// The clocks of `machine` (0: the host).
    pub fn new(tracker: &'a mut ClockTracker, machine: u32) -> Self {
        MachineClocks { tracker, machine }
    }

    /// Converts ns on this machine's builtin clock `clock_id` to the trace
    /// clock.
    pub fn trace_time(&mut self, clock_id: u64, ns: i64) -> Result<i64, ClockError> {
        self.tracker
            .trace_time(machine_clock(clock_id, self.machine), ns)
    }
}

/// One clock in one snapshot.
#[derive(Debug, Clone, Copy)]
pub struct SnapshotClock {
    /// Keyed clock id ([`clock_key`]).
    pub key: u64,
    /// The clock's value in ns.
    pub ns: i64,
}

#[derive(Debug, Clone, Copy)]
struct ClockInfo {
    unit_ns: u64,
    incremental: bool,
    last_value: i64,
}

/// Why a timestamp could not reach the trace clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClockError {
    /// No snapshot relates the clock to the trace clock.
    NoPath,
    /// The value overflowed on the way.
    Overflow,
}

/// The clock graph of one trace.
#[derive(Debug)]
pub struct ClockTracker {
    trace_clock: u64,
    /// Set once a timestamp was converted (the trace clock is then fixed).
    used: bool,
    snapshots: Vec<Vec<SnapshotClock>>,
    /// For each ordered pair of clocks, the snapshots holding both, as
    /// (source ns, target ns) sorted by source ns.
    edges: HashMap<(u64, u64), Vec<(i64, i64)>>,
    neighbours: HashMap<u64, HashSet<u64>>,
    clocks: HashMap<u64, ClockInfo>,
    /// The path found from each clock to the trace clock (None: none),
    /// until a snapshot changes the graph.
    paths: HashMap<u64, Option<Vec<u64>>>,
}

impl Default for ClockTracker {
    fn default() -> Self {
        ClockTracker {
            trace_clock: BOOTTIME,
            used: false,
            snapshots: Vec::new(),
            edges: HashMap::default(),
            neighbours: HashMap::default(),
            clocks: HashMap::default(),
            paths: HashMap::default(),
        }
    }
}

impl ClockTracker {
    /// The trace clock.
    pub fn trace_clock(&self) -> u64 {
        self.trace_clock
    }

    /// Sets the trace clock; refused (false) once timestamps were converted
    /// with another one.
    pub fn set_trace_clock(&mut self, clock_id: u64) -> bool {
        if self.used && clock_id != self.trace_clock {
            return false;
        }
        self.trace_clock = clock_id;
        self.paths.clear();
        true
    }

    /// Adds a snapshot: (keyed clock, raw value, unit ns, incremental).
    /// Returns the clocks' values in ns, or None when the snapshot is
    /// invalid (a clock twice).
    pub fn add_snapshot(&mut self, clocks: &[(u64, u64, u64, bool)]) -> Option<Vec<SnapshotClock>> {
        let mut seen = HashSet::default();
        let mut snap = Vec::with_capacity(clocks.len());
        for &(key, raw, unit, incremental) in clocks {
            if !seen.insert(key) {
                return None;
            }
            let unit = unit.max(1);
            let ns = i64::try_from(raw)
                .ok()?
                .checked_mul(i64::try_from(unit).ok()?)?;
            self.clocks.insert(
                key,
                ClockInfo {
                    unit_ns: unit,
                    incremental,
                    last_value: ns,
                },
            );
            snap.push(SnapshotClock { key, ns });
        }
        for a in &snap {
            for b in &snap {
                if a.key == b.key {
                    continue;
                }
                let list = self.edges.entry((a.key, b.key)).or_default();
                let pos = list.partition_point(|e| e.0 <= a.ns);
                list.insert(pos, (a.ns, b.ns));
                self.neighbours.entry(a.key).or_default().insert(b.key);
            }
        }
        self.paths.clear();
        self.snapshots.push(snap.clone());
        Some(snap)
    }

    /// A packet's raw timestamp on `key` as ns on that clock: applies the
    /// clock's unit and, for an incremental clock, adds it to the last value.
    pub fn clock_ns(&mut self, key: u64, raw: i64) -> Result<i64, ClockError> {
        match self.clocks.get_mut(&key) {
            None => Ok(raw),
            Some(info) => {
                let unit = i64::try_from(info.unit_ns).map_err(|_| ClockError::Overflow)?;
                let v = raw.checked_mul(unit).ok_or(ClockError::Overflow)?;
                if info.incremental {
                    info.last_value = info.last_value.checked_add(v).ok_or(ClockError::Overflow)?;
                    Ok(info.last_value)
                } else {
                    Ok(v)
                }
            }
        }
    }

    /// Converts ns on `key` to the trace clock.
    pub fn trace_time(&mut self, key: u64, ns: i64) -> Result<i64, ClockError> {
        self.used = true;
        if key == self.trace_clock {
            return Ok(ns);
        }
        if !self.paths.contains_key(&key) {
            let p = self.find_path(key);
            self.paths.insert(key, p);
        }
        let Some(Some(path)) = self.paths.get(&key) else {
            return Err(ClockError::NoPath);
        };
        let mut value = ns;
        for hop in path.windows(2) {
            let list = self
                .edges
                .get(&(hop[0], hop[1]))
                .ok_or(ClockError::NoPath)?;
            let idx = list.partition_point(|e| e.0 <= value);
            let (src, dst) = list[idx.saturating_sub(1).min(list.len() - 1)];
            value = value
                .checked_sub(src)
                .and_then(|d| dst.checked_add(d))
                .ok_or(ClockError::Overflow)?;
        }
        Ok(value)
    }

    /// The shortest path of snapshotted pairs from `key` to the trace
    /// clock (breadth first).
    fn find_path(&self, key: u64) -> Option<Vec<u64>> {
        let mut prev: HashMap<u64, u64> = HashMap::default();
        let mut queue = VecDeque::from([key]);
        let mut found = false;
        while let Some(c) = queue.pop_front() {
            if c == self.trace_clock {
                found = true;
                break;
            }
            if let Some(ns) = self.neighbours.get(&c) {
                let mut next: Vec<u64> = ns.iter().copied().collect();
                next.sort_unstable();
                for n in next {
                    if n != key && !prev.contains_key(&n) {
                        prev.insert(n, c);
                        queue.push_back(n);
                    }
                }
            }
        }
        if !found {
            return None;
        }
        let mut path = vec![self.trace_clock];
        while let Some(&p) = prev.get(path.last().unwrap_or(&key)) {
            path.push(p);
            if p == key {
                break;
            }
        }
        path.reverse();
        Some(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn converts_through_nearest_snapshot_and_paths() {
        let mut c = ClockTracker::default();
        c.add_snapshot(&[(BOOTTIME, 1000, 1, false), (3, 100, 1, false)])
            .unwrap();
        c.add_snapshot(&[(BOOTTIME, 2000, 1, false), (3, 1050, 1, false)])
            .unwrap();
        c.add_snapshot(&[(3, 0, 1, false), (1, 5_000, 1, false)])
            .unwrap();
        assert_eq!(c.trace_time(BOOTTIME, 7), Ok(7));
        assert_eq!(c.trace_time(3, 150), Ok(1050));
        assert_eq!(c.trace_time(3, 1100), Ok(2050));
        assert_eq!(c.trace_time(3, 50), Ok(950));
        // REALTIME -> MONOTONIC -> BOOTTIME.
        assert_eq!(c.trace_time(1, 5_150), Ok(1050));
        assert_eq!(c.trace_time(42, 1), Err(ClockError::NoPath));
    }

    #[test]
    fn incremental_sequence_clocks() {
        let mut c = ClockTracker::default();
        let k = clock_key(64, 7, 0);
        assert_ne!(k, clock_key(64, 8, 0));
        assert_eq!(clock_key(64, 7, 3), k);
        // A builtin clock is per machine.
        assert_eq!(clock_key(BOOTTIME, 7, 0), BOOTTIME);
        assert_ne!(clock_key(BOOTTIME, 7, 1), BOOTTIME);
        c.add_snapshot(&[(BOOTTIME, 1000, 1, false), (k, 10, 1000, true)])
            .unwrap();
        let ns = c.clock_ns(k, 1).unwrap();
        assert_eq!(ns, 11_000);
        assert_eq!(c.trace_time(k, ns), Ok(2000));
        let ns = c.clock_ns(k, 2).unwrap();
        assert_eq!(c.trace_time(k, ns), Ok(4000));
    }
}

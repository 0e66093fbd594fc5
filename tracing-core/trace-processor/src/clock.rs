//! Clock conversion: `ClockSnapshot`s say which values several clocks had
//! at one instant; a timestamp on any clock reaches the trace clock
//! (BOOTTIME unless the trace says otherwise) through a path of clocks that
//! were snapshotted together, hop by hop, each hop using the snapshot
//! nearest below the value. Clocks 64..=127 are scoped to one sequence;
//! incremental clocks carry deltas from their last value.
//!
//! Hostile snapshots: a pair's snapshots are kept in an ordered map (a
//! trace whose snapshots went back in time moved a growing list at each
//! one), a snapshot of more than [`MAX_SNAPSHOT_CLOCKS`] clocks is invalid
//! (each pair of its clocks is an edge: thousands in one packet made
//! millions), a path has at most [`MAX_PATH_HOPS`] hops, and the paths
//! found are kept until a snapshot links clocks not linked before. The
//! work is counted in [`ClockTracker::steps`]. Left quadratic: a search
//! for a new clock's path after each snapshot that links a new clock,
//! through a clock linked to thousands (as upstream's).

use crate::hash::{HashMap, HashSet};
use std::collections::{BTreeMap, VecDeque};

/// Most clocks one snapshot may hold (builtin clocks are six; upstream
/// has no limit): beyond it the snapshot is invalid.
pub const MAX_SNAPSHOT_CLOCKS: usize = 32;

/// Most hops of a conversion's path (real traces need two or three): a
/// clock reached only through more has no path, so that a chain of
/// snapshots the trace grows cannot make each conversion walk it.
pub const MAX_PATH_HOPS: usize = 16;

/// BOOTTIME's id.
pub const BOOTTIME: u64 = 6;

/// The builtin REALTIME clock's id: the wall clock, the same on every
/// machine.
const REALTIME: u64 = 1;

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

/// The machine of a builtin clock's key; none for a clock scoped to a
/// sequence.
fn key_machine(key: u64) -> Option<u32> {
    (key & SEQUENCE_SCOPED == 0).then_some(((key >> 32) & 0x7FFF_FFFF) as u32)
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
    /// For each ordered pair of clocks, the snapshots holding both:
    /// (source ns, arrival) → target ns.
    edges: HashMap<(u64, u64), BTreeMap<(i64, u64), i64>>,
    neighbours: HashMap<u64, HashSet<u64>>,
    clocks: HashMap<u64, ClockInfo>,
    /// The path found from each clock to the trace clock (None: none),
    /// until a snapshot changes the graph.
    paths: HashMap<u64, Option<Vec<u64>>>,
    /// Edges added, path searches' visits and conversions' hops so far.
    steps: u64,
    /// Remote machines whose BOOTTIME is yet to be related to the trace
    /// clock when nothing else relates it ([`ClockTracker::defer_machine_bridge`]).
    pending_bridges: Vec<u32>,
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
            steps: 0,
            pending_bridges: Vec::new(),
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
        if clock_id != self.trace_clock {
            self.trace_clock = clock_id;
            self.paths.clear();
        }
        true
    }

    /// Adds a snapshot: (keyed clock, raw value, unit ns, incremental).
    /// Returns the clocks' values in ns, or None when the snapshot is
    /// invalid (a clock twice).
    pub fn add_snapshot(&mut self, clocks: &[(u64, u64, u64, bool)]) -> Option<Vec<SnapshotClock>> {
        if clocks.len() > MAX_SNAPSHOT_CLOCKS {
            return None;
        }
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
        let arrival = self.snapshots.len() as u64;
        let mut linked = false;
        for a in &snap {
            for b in &snap {
                if a.key == b.key {
                    continue;
                }
                self.steps += 1;
                self.edges
                    .entry((a.key, b.key))
                    .or_default()
                    .insert((a.ns, arrival), b.ns);
                linked |= self.neighbours.entry(a.key).or_default().insert(b.key);
            }
        }
        if linked {
            self.paths.clear();
        }
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
        if !self.pending_bridges.is_empty() {
            // A machine's first conversion relates its BOOTTIME to the
            // trace clock, as upstream does at a remote machine's first.
            if let Some(m) = key_machine(key) {
                if let Some(i) = self.pending_bridges.iter().position(|&p| p == m) {
                    self.pending_bridges.swap_remove(i);
                    self.bridge_machine(m);
                }
            }
        }
        if !self.paths.contains_key(&key) {
            let (p, visits) = self.find_path(key);
            self.steps += visits;
            self.paths.insert(key, p);
        }
        if matches!(self.paths.get(&key), Some(None)) && !self.pending_bridges.is_empty() {
            // A clock scoped to a sequence names no machine: a miss
            // relates every machine still waiting, then looks again.
            for m in std::mem::take(&mut self.pending_bridges) {
                self.bridge_machine(m);
            }
            let (p, visits) = self.find_path(key);
            self.steps += visits;
            self.paths.insert(key, p);
        }
        let Some(Some(path)) = self.paths.get(&key) else {
            return Err(ClockError::NoPath);
        };
        let mut value = ns;
        for hop in path.windows(2) {
            self.steps += 1;
            let list = self
                .edges
                .get(&(hop[0], hop[1]))
                .ok_or(ClockError::NoPath)?;
            // The last snapshot at or below the value (the latest of
            // equals), else the first.
            let (&(src, _), &dst) = list
                .range(..=(value, u64::MAX))
                .next_back()
                .or_else(|| list.iter().next())
                .ok_or(ClockError::NoPath)?;
            value = value
                .checked_sub(src)
                .and_then(|d| dst.checked_add(d))
                .ok_or(ClockError::Overflow)?;
        }
        Ok(value)
    }

    /// A remote machine (`machine` > 0) began sending packets: at its first
    /// conversion, unless snapshots (its `RemoteClockSync`) relate its
    /// BOOTTIME to the trace clock by then, it is related the way upstream
    /// relates a machine it has no sync for: through REALTIME when both
    /// machines' BOOTTIME reach their REALTIME (wall clocks agree across
    /// machines), else, when the trace clock is the host's BOOTTIME, by
    /// taking the two boot clocks as one (zero offset). Other pairs of
    /// clocks stay unrelated and their packets are lost.
    pub fn defer_machine_bridge(&mut self, machine: u32) {
        if machine != 0 && !self.pending_bridges.contains(&machine) {
            self.pending_bridges.push(machine);
        }
    }

    /// Relates `machine`'s BOOTTIME to the trace clock, if nothing does.
    fn bridge_machine(&mut self, machine: u32) {
        let boot = machine_clock(BOOTTIME, machine);
        if self.find_path_to(boot, self.trace_clock).0.is_some() {
            return;
        }
        let realtime = machine_clock(REALTIME, machine);
        let host_realtime = machine_clock(REALTIME, key_machine(self.trace_clock).unwrap_or(0));
        if realtime != host_realtime
            && self.find_path_to(boot, realtime).0.is_some()
            && (host_realtime == self.trace_clock
                || self
                    .find_path_to(host_realtime, self.trace_clock)
                    .0
                    .is_some())
        {
            self.link(realtime, host_realtime);
            return;
        }
        if self.trace_clock & 0xFFFF_FFFF == BOOTTIME && key_machine(self.trace_clock).is_some() {
            self.link(boot, self.trace_clock);
        }
    }

    /// Two clocks taken as one: a zero-offset edge each way.
    fn link(&mut self, a: u64, b: u64) {
        let arrival = self.snapshots.len() as u64;
        for (x, y) in [(a, b), (b, a)] {
            self.steps += 1;
            self.edges
                .entry((x, y))
                .or_default()
                .insert((0, arrival), 0);
            self.neighbours.entry(x).or_default().insert(y);
        }
        self.snapshots.push(vec![
            SnapshotClock { key: a, ns: 0 },
            SnapshotClock { key: b, ns: 0 },
        ]);
        self.paths.clear();
    }

    /// Whether a snapshot related `key` to another clock.
    pub fn knows(&self, key: u64) -> bool {
        self.neighbours.contains_key(&key)
    }

    /// Edges added, path searches' visits and conversions' hops so far:
    /// work the load counts.
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// The shortest path of snapshotted pairs from `key` to the trace
    /// clock (breadth first), and the clocks it visited.
    fn find_path(&self, key: u64) -> (Option<Vec<u64>>, u64) {
        self.find_path_to(key, self.trace_clock)
    }

    /// The shortest path of clocks from `key` to `target`, and the visits
    /// the search made.
    fn find_path_to(&self, key: u64, target: u64) -> (Option<Vec<u64>>, u64) {
        let mut visits = 0u64;
        let mut prev: HashMap<u64, u64> = HashMap::default();
        let mut queue = VecDeque::from([key]);
        let mut found = false;
        while let Some(c) = queue.pop_front() {
            if c == target {
                found = true;
                break;
            }
            if let Some(ns) = self.neighbours.get(&c) {
                visits += ns.len() as u64 + 1;
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
            return (None, visits);
        }
        let mut path = vec![target];
        while let Some(&p) = prev.get(path.last().unwrap_or(&key)) {
            path.push(p);
            if p == key {
                break;
            }
        }
        path.reverse();
        if path.len() > MAX_PATH_HOPS + 1 {
            return (None, visits);
        }
        (Some(path), visits)
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

    /// Snapshots that go back in time one after another, and a snapshot
    /// of too many clocks: the pairs stay ordered, and what is refused is
    /// refused whole.
    #[test]
    fn snapshots_back_in_time_convert_and_huge_ones_are_invalid() {
        let mut c = ClockTracker::default();
        for i in (0..1000i64).rev() {
            c.add_snapshot(&[
                (BOOTTIME, (i * 10 + 5) as u64, 1, false),
                (3, (i * 10) as u64, 1, false),
            ])
            .unwrap();
        }
        assert_eq!(c.trace_time(3, 42), Ok(47));
        assert_eq!(c.trace_time(3, 9_999), Ok(10_004));
        // Two edges a snapshot, one search of two visits, one hop per
        // conversion.
        assert_eq!(c.steps(), 2000 + 2 + 2);
        let many: Vec<(u64, u64, u64, bool)> = (0..=MAX_SNAPSHOT_CLOCKS as u64)
            .map(|id| (200 + id, 1, 1, false))
            .collect();
        assert!(c.add_snapshot(&many).is_none());
        assert!(c.add_snapshot(&many[1..]).is_some());
    }

    /// A clock reached through a chain of more than [`MAX_PATH_HOPS`]
    /// snapshots has no path; one hop shorter converts.
    #[test]
    fn paths_longer_than_the_hop_limit_are_no_paths() {
        let mut c = ClockTracker::default();
        let mut prev = BOOTTIME;
        for i in 0..MAX_PATH_HOPS as u64 + 1 {
            let id = 1000 + i;
            c.add_snapshot(&[(prev, 0, 1, false), (id, 0, 1, false)])
                .unwrap();
            prev = id;
        }
        assert_eq!(c.trace_time(prev - 1, 5), Ok(5));
        assert_eq!(c.trace_time(prev, 5), Err(ClockError::NoPath));
    }

    #[test]
    fn a_remote_machine_without_a_sync_meets_the_host_at_its_first_conversion() {
        let remote_boot = machine_clock(BOOTTIME, 1);
        let mut c = ClockTracker::default();
        assert_eq!(c.trace_time(remote_boot, 500), Err(ClockError::NoPath));
        // Registered: the boot clocks are taken as one.
        let mut c = ClockTracker::default();
        c.defer_machine_bridge(1);
        assert_eq!(c.trace_time(remote_boot, 500), Ok(500));
        // Both machines' wall clocks known: they meet through REALTIME.
        let mut c = ClockTracker::default();
        c.add_snapshot(&[(BOOTTIME, 1_000, 1, false), (REALTIME, 10_000, 1, false)])
            .unwrap();
        c.add_snapshot(&[
            (remote_boot, 50, 1, false),
            (machine_clock(REALTIME, 1), 10_100, 1, false),
        ])
        .unwrap();
        c.defer_machine_bridge(1);
        assert_eq!(c.trace_time(remote_boot, 50), Ok(1_100));
        // A trace clock other than BOOTTIME and no wall clock: unrelated.
        let mut c = ClockTracker::default();
        c.set_trace_clock(3);
        c.defer_machine_bridge(1);
        assert_eq!(c.trace_time(remote_boot, 5), Err(ClockError::NoPath));
    }
}

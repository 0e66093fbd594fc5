//! Where an Instruments export's samples go on the trace's timeline.
//! xctrace's times are nanoseconds from the recording's start; a Perfetto
//! SDK recording alongside emits `dev.perfetto.clock_sync` signposts, each
//! carrying BOOTTIME's value at the signpost's time, so the export's
//! points-of-interest table relates the two clocks. As upstream reads
//! them: each signpost is a snapshot (the export's time, BOOTTIME), one
//! whose BOOTTIME value goes back from the last one kept is skipped, and a
//! time is moved by the snapshot nearest at or before it (the first one
//! for a time before all).
//!
//! A file on its own is its own timeline (upstream's trace-file clock
//! claims the trace clock): its times stay as they are. Only when another
//! trace of the same archive claimed BOOTTIME first are the times placed
//! through the signposts (and from BOOTTIME on to the trace clock); with
//! no signpost they stay as they are, as upstream's implicit zero-offset
//! edge leaves them.

use crate::parser::Parser;

/// The subsystem of the signposts that carry BOOTTIME.
pub const CLOCK_SYNC_SUBSYSTEM: &str = "dev.perfetto.clock_sync";

/// The export's clock-sync snapshots and where its times go.
#[derive(Debug, Default)]
pub struct ClockSync {
    /// (the export's time, BOOTTIME ns), in file order.
    snapshots: Vec<(i64, i64)>,
    /// BOOTTIME's value of the last snapshot kept.
    latest: u64,
    /// The clock key of the BOOTTIME the times are placed on, when
    /// another trace claimed the trace clock.
    boottime: Option<u64>,
    /// `snapshots` sorted by the export's time (done once, when the first
    /// time is placed).
    sorted: bool,
}

impl ClockSync {
    /// A clock-sync signpost at the export's time `ts` with BOOTTIME's
    /// value `boottime`; skipped when BOOTTIME went back.
    pub fn add(&mut self, ts: i64, boottime: u64) {
        if self.latest > boottime {
            return;
        }
        self.latest = boottime;
        let boot = i64::try_from(boottime).unwrap_or(i64::MAX);
        self.snapshots.push((ts, boot));
        self.sorted = false;
    }

    /// The snapshots kept, in file order.
    pub fn snapshots(&self) -> &[(i64, i64)] {
        &self.snapshots
    }

    /// The trace clock is another trace's: times go on BOOTTIME (the
    /// tracker's clock `key`) through the snapshots.
    pub fn place_on_boottime(&mut self, key: u64) {
        self.boottime = Some(key);
    }

    /// The trace time of the export's time `ts`.
    pub fn trace_time(&mut self, p: &mut Parser, ts: i64) -> i64 {
        let Some(key) = self.boottime else {
            return ts;
        };
        if !self.sorted {
            self.snapshots.sort_by_key(|&(t, _)| t);
            self.sorted = true;
        }
        let at = self.snapshots.partition_point(|&(t, _)| t <= ts);
        let Some(&(t, boot)) = self.snapshots.get(at.saturating_sub(1)) else {
            return ts;
        };
        let on_boottime = boot.saturating_add(ts.saturating_sub(t));
        p.clocks.trace_time(key, on_boottime).unwrap_or(on_boottime)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::{BOOTTIME, machine_clock};

    /// Alone, the times stay; on BOOTTIME, each moves by the snapshot at
    /// or before it (the first for earlier times), and a snapshot whose
    /// BOOTTIME went back is skipped.
    #[test]
    fn times_move_by_the_snapshot_at_or_before_them() {
        let mut p = Parser::new(crate::storage::Storage::default());
        let mut s = ClockSync::default();
        s.add(100, 5_000);
        s.add(200, 4_000);
        s.add(300, 9_000);
        assert_eq!(s.snapshots(), &[(100, 5_000), (300, 9_000)]);
        assert_eq!(s.trace_time(&mut p, 150), 150);
        s.place_on_boottime(machine_clock(BOOTTIME, 0));
        assert_eq!(s.trace_time(&mut p, 150), 5_050);
        assert_eq!(s.trace_time(&mut p, 300), 9_000);
        assert_eq!(s.trace_time(&mut p, 310), 9_010);
        assert_eq!(s.trace_time(&mut p, 40), 4_940);
        let mut none = ClockSync::default();
        none.place_on_boottime(machine_clock(BOOTTIME, 0));
        assert_eq!(none.trace_time(&mut p, 40), 40);
    }
}

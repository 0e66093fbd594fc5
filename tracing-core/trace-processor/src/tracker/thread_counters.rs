//! Process counters that a thread reports (ftrace's `rss_stat` and
//! `oom_score_adj_update` name a thread, not its process): the value is
//! stored when it arrives, with the thread as its `utid` arg, and its track
//! is chosen at the end of the trace, once later packets (a process tree,
//! a fork) may have told which process the thread belongs to. A thread
//! whose process is still unknown then gets the thread fallback track, as
//! upstream does: the value is kept, not dropped.

use crate::storage::Storage;
use crate::storage::args::{ArgSetBuilder, ArgValue};
use crate::storage::rows::CounterRow;
use crate::tracker::tracks::{EventType, TrackSpec, TrackTracker};

/// What a thread's counter measures for its process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProcessCounter {
    /// A memory counter: `mem.<key>` (`rss.file`, `rss.anon`, `swap`, ...).
    Memory(&'static str),
    /// The process's OOM score adjustment.
    OomScoreAdj,
    /// A memory event statistic (`mm_event_record`): `mem.mm.<type>.<metric>`.
    MmEvent(&'static str, &'static str),
}

/// A value whose track waits for the end of the trace.
#[derive(Debug, Clone, Copy)]
struct Pending {
    /// The `counter` row.
    row: usize,
    utid: u32,
    counter: ProcessCounter,
    /// The machine of the packet that carried it.
    machine: u32,
}

/// The values waiting for their tracks.
#[derive(Debug, Default)]
pub struct ThreadCounters {
    pending: Vec<Pending>,
}

impl ThreadCounters {
    /// Stores `value` at `ts`, reported by thread `utid` for its process,
    /// on the machine `machine`.
    pub fn push(
        &mut self,
        s: &mut Storage,
        machine: u32,
        ts: i64,
        value: f64,
        utid: u32,
        counter: ProcessCounter,
    ) {
        let key = s.strings.intern("utid");
        let mut args = ArgSetBuilder::default();
        args.add(key, key, ArgValue::Uint(u64::from(utid)));
        let arg_set_id = s.args.add_set(&args);
        s.counters.push(CounterRow {
            ts,
            // Set by `resolve`.
            track_id: u32::MAX,
            value,
            arg_set_id: arg_set_id.into(),
        });
        self.pending.push(Pending {
            row: s.counters.len() - 1,
            utid,
            counter,
            machine,
        });
    }

    /// Gives every stored value its track: its thread's process's, or the
    /// thread's own fallback track when the process is still unknown.
    pub fn resolve(&mut self, s: &mut Storage, tracks: &mut TrackTracker, machine_now: u32) {
        for pending in std::mem::take(&mut self.pending) {
            let upid = s.threads.get(pending.utid as usize).and_then(|t| t.upid);
            tracks.set_machine(pending.machine);
            let track = match (pending.counter, upid) {
                (ProcessCounter::Memory(key), Some(upid)) => {
                    tracks.process_counter(s, &format!("mem.{key}"), "process_memory", Some(upid))
                }
                (ProcessCounter::OomScoreAdj, Some(upid)) => {
                    tracks.process_counter(s, "oom_score_adj", "oom_score_adj", Some(upid))
                }
                (ProcessCounter::Memory(key), None) => {
                    let name = format!("mem.{key}");
                    let key = s.strings.intern(key);
                    let mut spec = TrackSpec::new(
                        Some(&name),
                        "process_memory_thread_fallback",
                        EventType::Counter,
                    );
                    spec.utid = Some(pending.utid);
                    spec.dimensions = vec![("process_memory_key", ArgValue::String(key))];
                    tracks.interned_counter(s, &spec)
                }
                (ProcessCounter::MmEvent(ty, metric), upid) => {
                    let name = format!("mem.mm.{ty}.{metric}");
                    let (ty, metric) = (s.strings.intern(ty), s.strings.intern(metric));
                    let classification = match upid {
                        Some(_) => "mm_event",
                        None => "mm_event_thread_fallback",
                    };
                    let mut spec = TrackSpec::new(Some(&name), classification, EventType::Counter);
                    spec.upid = upid;
                    spec.utid = upid.is_none().then_some(pending.utid);
                    spec.dimensions = vec![
                        ("mm_event_type", ArgValue::String(ty)),
                        ("mm_event_metric", ArgValue::String(metric)),
                    ];
                    tracks.interned_counter(s, &spec)
                }
                (ProcessCounter::OomScoreAdj, None) => {
                    let mut spec = TrackSpec::new(
                        Some("oom_score_adj"),
                        "oom_score_adj_thread_fallback",
                        EventType::Counter,
                    );
                    spec.utid = Some(pending.utid);
                    tracks.interned_counter(s, &spec)
                }
            };
            if let Some(r) = s.counters.get_mut(pending.row) {
                r.track_id = track;
            }
        }
        tracks.set_machine(machine_now);
    }
}

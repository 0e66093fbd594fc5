//! Tracks: a new row of `track` with its dimensions (utid, upid, ...) as an
//! arg set, so the track kinds (`thread_track`, `process_counter_track`,
//! ...) select on them as upstream's views do; the implicit thread track of
//! each thread is made once.

use crate::hash::HashMap;

use crate::storage::Storage;
use crate::storage::args::{ArgSetBuilder, ArgValue};
use crate::storage::rows::TrackRow;

/// What kind of events a track holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventType {
    /// Slices.
    Slice,
    /// Counter values.
    Counter,
    /// States.
    State,
}

impl EventType {
    fn as_str(self) -> &'static str {
        match self {
            EventType::Slice => "slice",
            EventType::Counter => "counter",
            EventType::State => "state",
        }
    }
}

/// A track to create.
#[derive(Debug, Clone)]
pub struct TrackSpec<'a> {
    /// Name (None for NULL).
    pub name: Option<&'a str>,
    /// Classification, the `type` column.
    pub classification: &'a str,
    /// What it holds.
    pub event_type: EventType,
    /// Thread dimension.
    pub utid: Option<u32>,
    /// Process dimension.
    pub upid: Option<u32>,
    /// Other integer dimensions (key, value).
    pub dimensions: Vec<(&'a str, ArgValue)>,
    /// Parent track.
    pub parent_id: Option<u32>,
    /// A counter's unit.
    pub unit: Option<&'a str>,
    /// Source args.
    pub source_args: Vec<(&'a str, ArgValue)>,
}

impl<'a> TrackSpec<'a> {
    /// A spec with only the required parts.
    pub fn new(name: Option<&'a str>, classification: &'a str, event_type: EventType) -> Self {
        TrackSpec {
            name,
            classification,
            event_type,
            utid: None,
            upid: None,
            dimensions: Vec::new(),
            parent_id: None,
            unit: None,
            source_args: Vec::new(),
        }
    }
}

/// Makes tracks.
#[derive(Debug, Default)]
pub struct TrackTracker {
    thread_tracks: HashMap<u32, u32>,
    process_tracks: HashMap<u32, u32>,
    counters: HashMap<(String, String, Option<u32>), u32>,
    /// The machine of the packet being parsed (0: the host).
    machine: u32,
}

impl TrackTracker {
    /// Makes the next tracks for `machine` (0: the host).
    pub fn set_machine(&mut self, machine: u32) {
        self.machine = machine;
    }

    /// The machine the next tracks are made for.
    pub fn machine(&self) -> u32 {
        self.machine
    }

    /// Creates a track.
    pub fn create(&mut self, storage: &mut Storage, spec: &TrackSpec<'_>) -> u32 {
        let mut dims = ArgSetBuilder::default();
        let add = |storage: &mut Storage, b: &mut ArgSetBuilder, k: &str, v: ArgValue| {
            let k = storage.strings.intern(k);
            b.add(k, k, v);
        };
        if let Some(u) = spec.utid {
            add(storage, &mut dims, "utid", ArgValue::Int(i64::from(u)));
        }
        if let Some(u) = spec.upid {
            add(storage, &mut dims, "upid", ArgValue::Int(i64::from(u)));
        }
        for (k, v) in &spec.dimensions {
            add(storage, &mut dims, k, *v);
            // A track of a host CPU makes the CPU's `cpu` row, as upstream
            // marks a CPU present when a track names it (upstream's CPU
            // numbers stop at 4096).
            if let (0, "cpu", ArgValue::Int(cpu @ 0..4096)) = (self.machine, *k, *v) {
                crate::tracker::profiler_samples::ucpu(storage, cpu as u32);
            }
        }
        let mut src = ArgSetBuilder::default();
        for (k, v) in &spec.source_args {
            add(storage, &mut src, k, *v);
        }
        let row = TrackRow {
            name: storage.strings.intern_opt(spec.name),
            classification: storage.strings.intern(spec.classification),
            dimension_arg_set_id: storage.args.add_set(&dims),
            parent_id: spec.parent_id,
            source_arg_set_id: storage.args.add_set(&src),
            // Every row names its machine; the host is machine 0 (upstream
            // has enforced that since early 2026).
            machine_id: Some(self.machine),
            event_type: storage.strings.intern(spec.event_type.as_str()),
            counter_unit: storage.strings.intern_opt(spec.unit),
            utid: spec.utid,
            upid: spec.upid,
            track_group_id: None,
        };
        let id = u32::try_from(storage.tracks.len()).unwrap_or(u32::MAX);
        storage.tracks.push(row);
        id
    }

    /// The one counter track with this name and classification for a
    /// process (or globally, without one).
    pub fn process_counter(
        &mut self,
        storage: &mut Storage,
        name: &str,
        classification: &str,
        upid: Option<u32>,
    ) -> u32 {
        let key = (
            format!("{}|{name}", self.machine),
            classification.to_owned(),
            upid,
        );
        if let Some(id) = self.counters.get(&key) {
            return *id;
        }
        let mut spec = TrackSpec::new(Some(name), classification, EventType::Counter);
        spec.upid = upid;
        let id = self.create(storage, &spec);
        self.counters.insert(key, id);
        id
    }

    /// The one counter track of this spec (name, classification, scope and
    /// dimensions), made on first use.
    pub fn interned_counter(&mut self, storage: &mut Storage, spec: &TrackSpec<'_>) -> u32 {
        let key = (
            format!(
                "{}|{:?}|{:?}|{:?}",
                self.machine, spec.name, spec.dimensions, spec.utid
            ),
            spec.classification.to_owned(),
            spec.upid,
        );
        if let Some(id) = self.counters.get(&key) {
            return *id;
        }
        let id = self.create(storage, spec);
        self.counters.insert(key, id);
        id
    }

    /// The default slice track of a thread, as upstream's track tracker
    /// interns it: one per thread, shared by every importer that puts a
    /// thread's slices on it (atrace marks, syscalls, Chrome JSON, a track
    /// event's root thread track), so that their begins and ends meet on
    /// one slice stack.
    pub fn thread_track(&mut self, storage: &mut Storage, utid: u32) -> u32 {
        if let Some(id) = self.thread_tracks.get(&utid) {
            return *id;
        }
        let mut spec = TrackSpec::new(None, "thread", EventType::Slice);
        spec.utid = Some(utid);
        let id = self.create(storage, &spec);
        self.thread_tracks.insert(utid, id);
        id
    }

    /// Records `id` as the default track of a thread.
    pub fn set_thread_track(&mut self, utid: u32, id: u32) {
        self.thread_tracks.entry(utid).or_insert(id);
    }

    /// Records `id` as the default track of a process.
    pub fn set_process_track(&mut self, upid: u32, id: u32) {
        self.process_tracks.entry(upid).or_insert(id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A track naming a host CPU makes the CPU's `cpu` row (machine 0),
    /// as upstream marks a CPU present; a CPU past upstream's 4096 or of
    /// another machine makes none here.
    #[test]
    fn a_host_cpu_track_makes_its_cpu_row() {
        let mut storage = Storage::default();
        let mut tracks = TrackTracker::default();
        let mut spec = TrackSpec::new(Some("irq"), "cpu_irq", EventType::Slice);
        spec.dimensions.push(("cpu", ArgValue::Int(2)));
        tracks.create(&mut storage, &spec);
        assert_eq!(storage.cpus.len(), 3);
        assert_eq!(storage.cpus[2].cpu, Some(2));
        assert_eq!(storage.cpus[2].machine, 0);
        assert_eq!(storage.cpus[0].cpu, None);
        let mut far = TrackSpec::new(Some("irq"), "cpu_irq", EventType::Slice);
        far.dimensions.push(("cpu", ArgValue::Int(1 << 40)));
        tracks.create(&mut storage, &far);
        tracks.set_machine(1);
        tracks.create(&mut storage, &spec);
        assert_eq!(storage.cpus.len(), 3);
    }
}

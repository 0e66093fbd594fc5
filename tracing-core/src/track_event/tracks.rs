//! The tracks events go on: the user's named, counter, process and thread
//! tracks ([`TrackSpec`], described once per sequence by their
//! `TrackDescriptor`), and the writing thread's own ([`ThreadTrack`]).

use zerotrace_protos::protos::TracePacket;

/// A track of the user's: a named track (for async slices, with a parent)
/// or a counter track. Declare it as a `static`; its descriptor is written
/// once per sequence before the first event on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TrackSpec {
    /// Its uuid (unique in the trace).
    pub uuid: u64,
    /// Its name.
    pub name: &'static str,
    /// The parent track's uuid (e.g. a process track), if any.
    pub parent: Option<u64>,
    /// For a counter track: its unit (`CounterDescriptor.Unit`: 1 time in
    /// ns, 2 count, 3 size in bytes) and unit name.
    pub counter: Option<(i32, &'static str)>,
    /// For a process track: the pid and the process name.
    pub process: Option<(i32, &'static str)>,
    /// For a thread track: the pid, the tid and the thread name.
    pub thread: Option<(i32, i64, &'static str)>,
}

impl TrackSpec {
    /// A named track (e.g. for async slices) under `parent`.
    pub const fn named(uuid: u64, name: &'static str, parent: Option<u64>) -> TrackSpec {
        TrackSpec {
            uuid,
            name,
            parent,
            counter: None,
            process: None,
            thread: None,
        }
    }

    /// A counter track with a unit (`CounterDescriptor.Unit`) and unit name.
    pub const fn counter(
        uuid: u64,
        name: &'static str,
        parent: Option<u64>,
        unit: i32,
        unit_name: &'static str,
    ) -> TrackSpec {
        TrackSpec {
            counter: Some((unit, unit_name)),
            ..TrackSpec::named(uuid, name, parent)
        }
    }

    /// A process track (`name` may be empty: the UI then shows the process name).
    pub const fn process(
        uuid: u64,
        name: &'static str,
        pid: i32,
        process_name: &'static str,
    ) -> TrackSpec {
        TrackSpec {
            process: Some((pid, process_name)),
            ..TrackSpec::named(uuid, name, None)
        }
    }

    /// A thread track of another thread than the writer's.
    pub const fn thread(
        uuid: u64,
        parent: Option<u64>,
        pid: i32,
        tid: i64,
        thread_name: &'static str,
    ) -> TrackSpec {
        TrackSpec {
            thread: Some((pid, tid, thread_name)),
            ..TrackSpec::named(uuid, "", parent)
        }
    }
}

/// Writes `track`'s descriptor into packet `p`.
pub(super) fn write_descriptor(p: &mut TracePacket<'_>, track: &TrackSpec) {
    let mut d = p.begin_track_descriptor();
    d.set_uuid(track.uuid);
    if !track.name.is_empty() {
        d.set_name(track.name);
    }
    if let Some(parent) = track.parent {
        d.set_parent_uuid(parent);
    }
    if let Some((pid, name)) = track.process {
        let mut pr = d.begin_process();
        pr.set_pid(pid);
        if !name.is_empty() {
            pr.set_process_name(name);
        }
    }
    if let Some((pid, tid, name)) = track.thread {
        d.begin_thread()
            .set_pid(pid)
            .set_tid(tid)
            .set_thread_name(name);
    }
    if let Some((unit, unit_name)) = track.counter {
        let mut c = d.begin_counter();
        if unit != 0 {
            c.set_unit_raw(unit);
        }
        if !unit_name.is_empty() {
            c.set_unit_name(unit_name);
        }
    }
}

/// The thread this sequence writes for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ThreadTrack {
    /// Track uuid.
    pub uuid: u64,
    /// Process id.
    pub pid: i32,
    /// Thread id.
    pub tid: i64,
}

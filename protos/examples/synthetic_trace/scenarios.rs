//! The four synthetic TrackEvent scenarios of Perfetto's "writing TrackEvent
//! protos synthetically" guide (perfetto.dev/docs/reference/synthetic-track-event),
//! written into one `Trace` through the generated writers only.
//!
//! Shared by the `synthetic_trace` example (which saves the bytes to a file)
//! and by the interop tests (which decode them with upstream `protoc` and with
//! our generated decoders), so both look at the very same trace.
//!
//! Every value is the guide's, as written: uuids, pids (the sync and the
//! async scenario both use pid 1234, in separate process tracks), tids,
//! names, timestamps, the sequence id, and the flow's three `flow_ids`.

use protozero::{HeapWriter, WriteError};
use zerotrace_protos::protos::{Trace, TrackEvent, track_event::Type};

/// `trusted_packet_sequence_id` of every event packet, as in the guide.
const SEQUENCE_ID: u32 = 3_903_809;

/// Pid of the async-slices process, as in the guide.
const ASYNC_PID: i32 = 1234;

/// Builds the whole trace: sync slices, async slices, a flow, a counter.
pub fn synthetic_trace() -> Result<Vec<u8>, WriteError> {
    let mut writer = HeapWriter::new();
    {
        let mut trace = Trace::from_message(writer.root());
        write_sync_slices(&mut trace);
        write_async_slices(&mut trace);
        write_flow(&mut trace);
        write_counter(&mut trace);
    }
    writer.finish()
}

/// Appends one event packet at `timestamp` on the shared sequence; `fill`
/// writes the event's own fields.
fn event(trace: &mut Trace<'_>, timestamp: u64, fill: impl FnOnce(&mut TrackEvent<'_>)) {
    let mut packet = trace.add_packet();
    packet
        .set_timestamp(timestamp)
        .set_trusted_packet_sequence_id(SEQUENCE_ID);
    fill(&mut packet.begin_track_event());
}

/// A slice-begin event named `name` on track `track`.
fn begin(trace: &mut Trace<'_>, timestamp: u64, track: u64, name: &str) {
    event(trace, timestamp, |e| {
        e.set_type(Type::SliceBegin)
            .set_track_uuid(track)
            .set_name(name);
    });
}

/// A slice-end event on track `track` (closes its innermost open slice).
fn end(trace: &mut Trace<'_>, timestamp: u64, track: u64) {
    event(trace, timestamp, |e| {
        e.set_type(Type::SliceEnd).set_track_uuid(track);
    });
}

/// A track for a process: its descriptor names the process.
fn process_track(trace: &mut Trace<'_>, uuid: u64, track_name: Option<&str>, pid: i32, name: &str) {
    let mut packet = trace.add_packet();
    let mut track = packet.begin_track_descriptor();
    track.set_uuid(uuid);
    if let Some(track_name) = track_name {
        track.set_name(track_name);
    }
    track.begin_process().set_pid(pid).set_process_name(name);
}

/// A track for a thread, optionally under a parent (process) track.
fn thread_track(
    trace: &mut Trace<'_>,
    uuid: u64,
    parent: Option<u64>,
    ids: (i32, i64),
    name: &str,
) {
    let mut packet = trace.add_packet();
    let mut track = packet.begin_track_descriptor();
    track.set_uuid(uuid);
    if let Some(parent) = parent {
        track.set_parent_uuid(parent);
    }
    track
        .begin_thread()
        .set_pid(ids.0)
        .set_tid(ids.1)
        .set_thread_name(name);
}

/// Thread-scoped slices: two nested slices and an instant on one thread.
fn write_sync_slices(trace: &mut Trace<'_>) {
    const PROCESS: u64 = 894_893_984;
    const THREAD: u64 = 49_083_589_894;
    process_track(trace, PROCESS, None, 1234, "My process name");
    thread_track(trace, THREAD, Some(PROCESS), (1234, 5678), "My thread name");
    begin(trace, 200, THREAD, "My special parent");
    begin(trace, 250, THREAD, "My special child");
    event(trace, 285, |e| {
        e.set_type(Type::Instant).set_track_uuid(THREAD);
    });
    end(trace, 290, THREAD);
    end(trace, 300, THREAD);
}

/// Process-scoped slices on two same-named tracks whose slices overlap
/// without nesting, which is why they need two tracks.
fn write_async_slices(trace: &mut Trace<'_>) {
    const FIRST: u64 = 48_948;
    const SECOND: u64 = 2_390_190_934;
    const TRACK_NAME: &str = "My special track";
    process_track(trace, FIRST, Some(TRACK_NAME), ASYNC_PID, "My process name");
    begin(trace, 200, FIRST, "My special parent A");
    begin(trace, 250, FIRST, "My special child");
    end(trace, 290, FIRST);
    end(trace, 300, FIRST);
    {
        let mut packet = trace.add_packet();
        packet
            .begin_track_descriptor()
            .set_uuid(SECOND)
            .set_name(TRACK_NAME)
            .set_parent_uuid(FIRST);
    }
    begin(trace, 230, SECOND, "My special parent A");
    begin(trace, 260, SECOND, "My special child");
    end(trace, 270, SECOND);
    end(trace, 295, SECOND);
}

/// One flow: main thread -> background thread -> main thread.
fn write_flow(trace: &mut Trace<'_>) {
    const MAIN: u64 = 93_094;
    const BACKGROUND: u64 = 40_489_498;
    const FLOW: u64 = 1_055_895_987;
    thread_track(trace, MAIN, None, (100, 100), "Main thread");
    event(trace, 200, |e| {
        e.set_type(Type::SliceBegin)
            .set_track_uuid(MAIN)
            .set_name("Request generation")
            .add_flow_ids(FLOW);
    });
    end(trace, 300, MAIN);
    event(trace, 400, |e| {
        e.set_type(Type::SliceBegin)
            .set_track_uuid(MAIN)
            .set_name("Process background result")
            .add_flow_ids(FLOW);
    });
    end(trace, 500, MAIN);
    thread_track(trace, BACKGROUND, None, (100, 101), "Background thread");
    event(trace, 310, |e| {
        e.set_type(Type::SliceBegin)
            .set_track_uuid(BACKGROUND)
            .set_name("Background work")
            .add_flow_ids(FLOW);
    });
    end(trace, 385, BACKGROUND);
}

/// A counter track under a process, with four samples.
fn write_counter(trace: &mut Trace<'_>) {
    const PROCESS: u64 = 1388;
    const COUNTER: u64 = 4_489_498;
    process_track(trace, PROCESS, None, 1024, "MySpecialProcess");
    {
        let mut packet = trace.add_packet();
        let mut track = packet.begin_track_descriptor();
        track
            .set_uuid(COUNTER)
            .set_parent_uuid(PROCESS)
            .set_name("My special counter");
        // An empty CounterDescriptor is what makes this a counter track.
        track.begin_counter();
    }
    for (timestamp, value) in [(200, 34_567), (250, 67_890), (300, 12_345), (400, 12_345)] {
        event(trace, timestamp, |e| {
            e.set_type(Type::Counter)
                .set_track_uuid(COUNTER)
                .set_counter_value(value);
        });
    }
}

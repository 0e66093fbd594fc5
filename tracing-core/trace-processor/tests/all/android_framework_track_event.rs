//! Android's framework TrackEvents about process lifecycles (process
//! starts and binder deaths, `FrameworksBaseTrackEvent` extensions) into
//! `__intrinsic_android_track_event_process` and the process table.

use zerotrace_trace_processor::{TraceProcessor, Value};

use crate::common;
use common::{i, packet, rows, s, trace};

/// `TrackEvent`'s extension fields.
const PROCESS_START_EVENT: u32 = 2010;
const BINDER_DIED_EVENT: u32 = 2013;

/// A thread track (uuid 2) of pid and tid 100.
fn thread_track() -> Vec<u8> {
    packet(|p| {
        p.set_timestamp(1);
        p.set_trusted_packet_sequence_id(1);
        p.set_incremental_state_cleared(true);
        let mut d = p.message().begin_nested(60);
        d.append_uint64(1, 2);
        let mut t = d.begin_nested(4);
        t.append_int32(1, 100);
        t.append_int32(2, 100);
    })
}

/// An instant TrackEvent at `ts` on the thread's track carrying extension
/// `field` with `body` written by `fill`.
fn instant(ts: u64, field: u32, fill: impl FnOnce(&mut protozero::Message<'_>)) -> Vec<u8> {
    packet(|p| {
        p.set_timestamp(ts);
        p.set_trusted_packet_sequence_id(1);
        let mut ev = p.message().begin_nested(11);
        ev.append_int32(9, 3);
        ev.append_uint64(11, 2);
        let mut ext = ev.begin_nested(field);
        fill(&mut ext);
    })
}

/// An extension descriptor declaring `.com.android.internal.TriggerType`
/// with value 4 named `TRIGGER_TYPE_JOB`.
fn trigger_type_enum() -> Vec<u8> {
    packet(|p| {
        p.set_timestamp(2);
        p.set_trusted_packet_sequence_id(1);
        let mut ext = p.message().begin_nested(72);
        let mut set = ext.begin_nested(1);
        let mut file = set.begin_nested(1);
        file.append_string(2, "com.android.internal");
        let mut e = file.begin_nested(5);
        e.append_string(1, "TriggerType");
        let mut v = e.begin_nested(2);
        v.append_string(1, "TRIGGER_TYPE_JOB");
        v.append_int32(2, 4);
    })
}

#[test]
fn process_starts_and_binder_deaths_make_one_row_per_process() {
    let t = trace(&[
        thread_track(),
        trigger_type_enum(),
        instant(2_000, PROCESS_START_EVENT, |m| {
            m.append_int32(1, 10_001);
            m.append_int32(2, 100);
            m.append_string(3, "com.example.app");
            m.append_int32(7, 11);
            m.append_int32(8, 4);
            m.append_int64(10, 42);
            m.append_int32(11, 10_002);
        }),
        // A second start keeps the first start's time.
        instant(3_000, PROCESS_START_EVENT, |m| {
            m.append_int32(2, 100);
        }),
        instant(5_000, BINDER_DIED_EVENT, |m| {
            m.append_int32(2, 100);
        }),
    ]);
    let tp = TraceProcessor::from_bytes(&t).expect("trace");
    assert_eq!(
        rows(
            &tp,
            "SELECT p.pid, p.name, p.uid, p.android_appid, t.start_seq_id, t.package_uid, \
             t.caller_uid, t.fw_start_ts, t.fw_end_ts, t.trigger_type, t.hosting_type \
             FROM __intrinsic_android_track_event_process t JOIN process p USING (upid)"
        ),
        vec![vec![
            i(100),
            s("com.example.app"),
            i(10_001),
            i(10_001),
            i(42),
            i(10_002),
            Value::Null,
            i(2_000),
            i(5_000),
            // Declared by the trace: by name; not declared: by number.
            s("TRIGGER_TYPE_JOB"),
            s("11"),
        ]]
    );
    assert_eq!(
        rows(&tp, "SELECT end_ts FROM thread WHERE tid = 100"),
        vec![vec![i(5_000)]]
    );
}

//! Zip and tar archives of several traces (issue 65 item 1): every member
//! loads as a trace of its own format onto one timeline, protobuf members
//! first (their clock snapshots place the others), a manifest's machines
//! and clock rules apply, and `trace_file` lists the files in the order
//! they were read.

use std::io::{Cursor, Write};

use crate::common;

use common::{i, packet, rows, s, trace};
use zerotrace_trace_processor::{TraceProcessor, Value};

/// A TrackEvent slice `name` on track 7 of sequence 1, from `begin` to
/// `end` (BOOTTIME ns), with the track's descriptor.
fn proto_slice(name: &str, begin: u64, end: u64) -> Vec<Vec<u8>> {
    let descriptor = packet(|p| {
        p.message().append_uint32(10, 1);
        p.message().begin_nested(60).append_uint64(1, 7);
    });
    let event = |ts: u64, kind: i32, name: Option<&str>| {
        packet(|p| {
            p.set_timestamp(ts);
            p.message().append_uint32(10, 1);
            let mut te = p.message().begin_nested(11);
            te.append_int32(9, kind);
            te.append_uint64(11, 7);
            if let Some(n) = name {
                te.append_string(23, n);
            }
        })
    };
    vec![descriptor, event(begin, 1, Some(name)), event(end, 2, None)]
}

/// A clock snapshot: each (builtin clock id, value).
fn snapshot(clocks: &[(u32, u64)]) -> Vec<u8> {
    packet(|p| {
        let mut snap = p.message().begin_nested(6);
        for &(id, value) in clocks {
            let mut c = snap.begin_nested(1);
            c.append_uint32(1, id);
            c.append_uint64(2, value);
        }
    })
}

/// A systrace text with one atrace slice `name` of pid 200 from 2.0 s to
/// 2.25 s (its clock is MONOTONIC).
const SYSTRACE: &str = "# tracer: nop\n#\n\
    \x20 worker-200 (  200) [000] ...1  2.000000: tracing_mark_write: B|200|sys_work\n\
    \x20 worker-200 (  200) [000] ...1  2.250000: tracing_mark_write: E|200\n";

/// A zip of (name, bytes, deflated).
fn zip(members: &[(&str, &[u8], bool)]) -> Vec<u8> {
    let mut w = zip::ZipWriter::new(Cursor::new(Vec::new()));
    for (name, bytes, deflated) in members {
        let method = if *deflated {
            zip::CompressionMethod::Deflated
        } else {
            zip::CompressionMethod::Stored
        };
        let options = zip::write::SimpleFileOptions::default().compression_method(method);
        w.start_file(*name, options).unwrap();
        w.write_all(bytes).unwrap();
    }
    w.finish().unwrap().into_inner()
}

/// A tar of (name, bytes).
fn tar(members: &[(&str, &[u8])]) -> Vec<u8> {
    let mut b = tar::Builder::new(Vec::new());
    for (name, bytes) in members {
        let mut h = tar::Header::new_ustar();
        h.set_size(bytes.len() as u64);
        h.set_mode(0o644);
        h.set_cksum();
        b.append_data(&mut h, name, *bytes).unwrap();
    }
    b.into_inner().unwrap()
}

fn load(bytes: &[u8]) -> TraceProcessor {
    TraceProcessor::from_bytes(bytes).expect("the archive loads")
}

#[test]
fn a_zip_of_a_protobuf_and_a_systrace_trace_is_one_timeline() {
    // BOOTTIME runs 0.5 s ahead of MONOTONIC: the systrace member's times
    // (MONOTONIC) reach the trace clock through the protobuf member's
    // snapshot, which is read first although it comes last in the zip.
    let mut packets = vec![snapshot(&[(6, 1_000_000_000), (3, 500_000_000)])];
    packets.extend(proto_slice("proto_work", 1_100_000_000, 1_200_000_000));
    let pb = trace(&packets);
    let gz = {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(SYSTRACE.as_bytes()).unwrap();
        e.finish().unwrap()
    };
    let archive = zip(&[
        ("b/app.systrace.gz", &gz, false),
        (".DS_Store", b"\x00\x01junk", false),
        ("a/trace.pb", &pb, true),
    ]);
    let tp = load(&archive);
    assert_eq!(
        rows(&tp, "SELECT name, ts, dur FROM slice ORDER BY ts"),
        vec![
            vec![s("proto_work"), i(1_100_000_000), i(100_000_000)],
            vec![s("sys_work"), i(2_500_000_000), i(250_000_000)],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT id, parent_id, name, trace_type, processing_order, is_container \
             FROM trace_file ORDER BY processing_order"
        ),
        vec![
            vec![i(0), Value::Null, Value::Null, s("zip"), i(0), i(1)],
            vec![i(2), i(0), s("a/trace.pb"), s("proto"), i(1), i(0)],
            vec![i(1), i(0), s("b/app.systrace.gz"), s("gzip"), i(2), i(1)],
            vec![i(3), i(1), s(""), s("systrace"), i(3), i(0)],
        ]
    );
    // A member's size is its bytes as read out of the archive.
    assert_eq!(
        rows(&tp, "SELECT size FROM trace_file WHERE name = 'a/trace.pb'"),
        vec![vec![i(pb.len() as i64)]]
    );
}

#[test]
fn a_manifest_names_machines_and_pins_a_clockless_member_to_another_files_clock() {
    // The manifest comes last in the tar but is read first; app.json has
    // no clock of its own and is pinned 500 ns after phone.pb's BOOTTIME.
    let manifest = br#"{"perfetto_manifest": {"version": 1,
        "files": [
          {"path": "phone.pb", "machine": {"name": "phone"}},
          {"path": "app.json", "machine": {"name": "server"},
           "clocks": {"offset_ns": 500, "sync_to": {"file": "phone.pb", "clock": "BOOTTIME"}}}],
        "attributes": {"run": 42}}}"#;
    let pb = trace(&proto_slice("phone_work", 1_100_000_000, 1_200_000_000));
    let json = br#"{"traceEvents": [{"pid": 5, "tid": 5, "ts": 3000, "dur": 10, "ph": "X", "name": "app_work"}]}"#;
    let tp = load(&tar(&[
        ("app.json", json),
        ("phone.pb", &pb),
        ("meta.json", manifest),
    ]));
    assert_eq!(
        rows(
            &tp,
            "SELECT s.name, s.ts, m.name FROM slice s JOIN track t ON s.track_id = t.id \
             JOIN machine m ON t.machine_id = m.id ORDER BY s.ts"
        ),
        vec![
            vec![s("app_work"), i(3_000_500), s("server")],
            vec![s("phone_work"), i(1_100_000_000), s("phone")],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT name, trace_type FROM trace_file ORDER BY processing_order"
        ),
        vec![
            vec![Value::Null, s("tar")],
            vec![s("meta.json"), s("perfetto_manifest")],
            vec![s("phone.pb"), s("proto")],
            vec![s("app.json"), s("json")],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT int_value FROM metadata WHERE name = 'manifest_attribute.run'"
        ),
        vec![vec![i(42)]]
    );
}

#[test]
fn a_manifests_trace_time_picks_the_timeline_and_realtime_places_another_machine() {
    // Two machines' traces, each relating its BOOTTIME to REALTIME: the
    // server's slice is placed through REALTIME (assumed equal across
    // machines) on the phone's BOOTTIME, the trace clock the first
    // protobuf member claims; a manifest's trace_time names the clock.
    let phone = {
        let mut p = vec![snapshot(&[(6, 1_000_000_000), (1, 50_000_000_000)])];
        p.extend(proto_slice("phone_work", 1_100_000_000, 1_200_000_000));
        trace(&p)
    };
    let server = {
        let mut p = vec![snapshot(&[(6, 7_000_000_000), (1, 51_000_000_000)])];
        p.extend(proto_slice("server_work", 7_100_000_000, 7_200_000_000));
        trace(&p)
    };
    let manifest = br#"{"perfetto_manifest": {"version": 1, "files": [
          {"path": "a.pb", "machine": {"name": "phone"}},
          {"path": "b.pb", "machine": {"name": "server"}}]}}"#;
    let tp = load(&zip(&[
        ("b.pb", &server, false),
        ("a.pb", &phone, false),
        ("m.json", manifest, false),
    ]));
    assert_eq!(
        rows(&tp, "SELECT name, ts FROM slice ORDER BY ts"),
        vec![
            vec![s("phone_work"), i(1_100_000_000)],
            vec![s("server_work"), i(2_100_000_000)],
        ]
    );
    let with_time =
        br#"{"perfetto_manifest": {"version": 1, "trace_time": {"clock": "REALTIME"}}}"#;
    let tp = load(&zip(&[
        ("a.pb", &phone, false),
        ("m.json", with_time, false),
    ]));
    assert_eq!(
        rows(
            &tp,
            "SELECT (SELECT int_value FROM metadata WHERE name = 'trace_time_clock_id'), \
             (SELECT ts FROM slice)"
        ),
        vec![vec![i(1), i(50_100_000_000)]]
    );
}

#[test]
fn hostile_archives_get_typed_errors() {
    let err = |bytes: &[u8]| match TraceProcessor::from_bytes(bytes) {
        Ok(_) => panic!("loaded"),
        Err(e) => e.to_string(),
    };
    // A zip's magic with no archive behind it.
    let mut broken = b"PK\x03\x04".to_vec();
    broken.extend_from_slice(&[0xff; 200]);
    assert!(err(&broken).contains("archive"), "{}", err(&broken));
    // An archive inside the archive.
    let inner = zip(&[("t.pb", &trace(&[]), false)]);
    let nested = zip(&[("inner.zip", &inner, false)]);
    assert!(err(&nested).contains("nested"), "{}", err(&nested));
    // A member of no known format.
    let unknown = tar(&[("x.bin", b"\x89PNG\r\n\x1a\n and more bytes")]);
    assert!(err(&unknown).contains("x.bin"), "{}", err(&unknown));
    // A tar member claiming more bytes than the archive has.
    let mut short = tar(&[("t.json", br#"{"traceEvents": []}"#)]);
    short.truncate(520);
    let e = err(&short);
    assert!(e.contains("archive"), "{e}");
    // Two manifests.
    let m = br#"{"perfetto_manifest": {"version": 1}}"#;
    let two = zip(&[("m1.json", m, false), ("m2.json", m, false)]);
    assert!(err(&two).contains("multiple"), "{}", err(&two));
}

#[test]
fn two_traces_from_one_embedded_machine_share_one_machine_row() {
    // Every packet of both traces names machine 7: it is adopted onto the
    // host's row, once for both files.
    let of_machine_7 = |name: &str| {
        let packets: Vec<Vec<u8>> = proto_slice(name, 1_000, 2_000)
            .into_iter()
            .map(|p| {
                let mut with_machine = p;
                with_machine.extend(packet(|q| q.message().append_uint32(98, 7)));
                with_machine
            })
            .collect();
        trace(&packets)
    };
    let tp = load(&zip(&[
        ("a.pb", &of_machine_7("a_work"), false),
        ("b.pb", &of_machine_7("b_work"), false),
    ]));
    assert_eq!(
        rows(&tp, "SELECT raw_id, count(*) FROM machine GROUP BY raw_id"),
        vec![vec![i(7), i(1)]]
    );
    assert_eq!(rows(&tp, "SELECT count(*) FROM slice"), vec![vec![i(2)]]);
}

#[test]
fn pins_along_a_long_chain_of_references_add_their_offsets_and_a_circle_pins_nothing() {
    // app.json → c0 → c1 → … → c59 → phone.pb's BOOTTIME, 10 ns per step;
    // mid.json joins the chain half way (its pin reuses the chain's tail,
    // resolved once); lost.json refers into a circle and is not moved.
    const N: usize = 60;
    let mut files = vec![
        r#"{"path": "phone.pb"}"#.to_owned(),
        r#"{"path": "app.json", "clocks": {"offset_ns": 500, "sync_to": {"file": "c0"}}}"#
            .to_owned(),
        r#"{"path": "mid.json", "clocks": {"offset_ns": 7, "sync_to": {"file": "c30"}}}"#
            .to_owned(),
        r#"{"path": "lost.json", "clocks": {"offset_ns": 1, "sync_to": {"file": "x0"}}}"#
            .to_owned(),
        r#"{"path": "x0", "clocks": {"offset_ns": 1, "sync_to": {"file": "x1"}}}"#.to_owned(),
        r#"{"path": "x1", "clocks": {"offset_ns": 1, "sync_to": {"file": "x0"}}}"#.to_owned(),
    ];
    for k in 0..N {
        let to = if k + 1 == N {
            r#"{"file": "phone.pb", "clock": "BOOTTIME"}"#.to_owned()
        } else {
            format!(r#"{{"file": "c{}"}}"#, k + 1)
        };
        files.push(format!(
            r#"{{"path": "c{k}", "clocks": {{"offset_ns": 10, "sync_to": {to}}}}}"#
        ));
    }
    let manifest = format!(
        r#"{{"perfetto_manifest": {{"version": 1, "files": [{}]}}}}"#,
        files.join(",")
    );
    let pb = trace(&proto_slice("phone_work", 1_100_000_000, 1_200_000_000));
    let json = |name: &str| {
        format!(
            r#"{{"traceEvents": [{{"pid": 5, "tid": 5, "ts": 3000, "dur": 10, "ph": "X", "name": "{name}"}}]}}"#
        )
    };
    let (app, mid, lost) = (json("app_work"), json("mid_work"), json("lost_work"));
    let tp = load(&tar(&[
        ("phone.pb", &pb),
        ("app.json", app.as_bytes()),
        ("mid.json", mid.as_bytes()),
        ("lost.json", lost.as_bytes()),
        ("meta.json", manifest.as_bytes()),
    ]));
    assert_eq!(
        rows(
            &tp,
            "SELECT name, ts FROM slice WHERE name GLOB '*_work' ORDER BY name"
        ),
        vec![
            vec![s("app_work"), i(3_000_000 + 500 + 10 * N as i64)],
            vec![s("lost_work"), i(3_000_000)],
            vec![s("mid_work"), i(3_000_000 + 7 + 10 * (N as i64 - 30))],
            vec![s("phone_work"), i(1_100_000_000)],
        ]
    );
}

//! `zerotrace sql`: a trace written with zerotrace-protos' writers answers
//! `-Q` and `-q` in trace_processor_shell's CSV; bad SQL and a bad trace
//! are errors with their exit codes.

use std::path::PathBuf;
use std::process::Command;

use zerotrace_protos::protos::{TracePacket, track_event};

fn zerotrace() -> Command {
    Command::new(env!("CARGO_BIN_EXE_zerotrace"))
}

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("zerotrace-sql-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn packet(f: impl FnOnce(&mut TracePacket<'_>)) -> Vec<u8> {
    let mut w = protozero::HeapWriter::new();
    {
        let mut p = TracePacket::from_message(w.root());
        f(&mut p);
    }
    let p = w.finish().unwrap();
    let mut out = vec![0x0a];
    let mut n = p.len();
    loop {
        let b = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            out.push(b);
            break;
        }
        out.push(b | 0x80);
    }
    out.extend_from_slice(&p);
    out
}

fn trace() -> Vec<u8> {
    let mut t = packet(|p| {
        p.set_trusted_packet_sequence_id(1);
        p.set_sequence_flags(1);
        let mut td = p.begin_track_descriptor();
        td.set_uuid(1);
        td.set_name("main");
    });
    for (ts, ty) in [
        (100, track_event::Type::SliceBegin),
        (350, track_event::Type::SliceEnd),
    ] {
        t.extend(packet(|p| {
            p.set_trusted_packet_sequence_id(1);
            p.set_timestamp(ts);
            let mut e = p.begin_track_event();
            e.set_track_uuid(1);
            e.set_type(ty);
            if ts == 100 {
                e.set_name("work");
            }
        }));
    }
    t
}

#[test]
fn answers_like_trace_processor_shell() {
    let d = dir("ok");
    let path = d.join("t.pftrace");
    std::fs::write(&path, trace()).unwrap();
    let out = zerotrace()
        .args(["sql"])
        .arg(&path)
        .args([
            "-Q",
            "SELECT 1; SELECT name, dur, ts * 0.5 AS half, NULL AS n FROM slice",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "\"name\",\"dur\",\"half\",\"n\"\n\"work\",250,50.000000,\"[NULL]\"\n"
    );
    let q = d.join("q.sql");
    std::fs::write(&q, "SELECT count(*) AS c FROM track").unwrap();
    let out = zerotrace()
        .arg("sql")
        .arg(&path)
        .arg("-q")
        .arg(&q)
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "\"c\"\n1\n");
}

#[test]
fn bad_sql_and_bad_traces_are_errors() {
    let d = dir("bad");
    let path = d.join("t.pftrace");
    std::fs::write(&path, trace()).unwrap();
    let out = zerotrace()
        .arg("sql")
        .arg(&path)
        .args(["-Q", "SELEC 1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("SQL error"));
    let bad = d.join("bad.pftrace");
    std::fs::write(&bad, [0x0f, 0xff, 0xff]).unwrap();
    let out = zerotrace()
        .arg("sql")
        .arg(&bad)
        .args(["-Q", "SELECT 1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(5));
    let out = zerotrace().arg("sql").arg(&path).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
}

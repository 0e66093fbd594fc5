//! A second oracle for exact nanoseconds: the fixture's raw pages, wrapped
//! in a trace.dat (version 6) file with their `header_page` and `format`
//! files, decoded by Debian's `trace-cmd report -t`, and compared with our
//! parse event by event: CPU, timestamp to the nanosecond, pid, event name,
//! `print`'s text and sched_switch's comms, pids and priorities.
//! Ignored by default: it needs `trace-cmd` (`apt-get install trace-cmd`).

mod ftrace_common;

use ftrace_common::{Recording, fixture_dir};
use std::process::Command;
use zerotrace_probes::ftrace::Value;

/// The kernel's `events/header_event` text (the same on every kernel with
/// this ring-buffer format); trace.dat carries it, trace-cmd reads it.
const HEADER_EVENT: &str = "# compressed entry header\n\ttype_len    :    5 bits\n\ttime_delta  :   27 bits\n\tarray       :   32 bits\n\n\tpadding     : type == 29\n\ttime_extend : type == 30\n\ttime_stamp : type == 31\n\tdata max type_len  == 28\n";

/// A trace.dat version 6 file holding the recording's pages.
fn trace_dat(rec: &Recording) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(b"\x17\x08\x44tracing6\0");
    out.extend_from_slice(&[0, 8]); // little-endian, 8-byte long
    out.extend_from_slice(&(rec.subbuf_size as u32).to_le_bytes());
    for (name, text) in [
        ("header_page", rec.header_page.as_str()),
        ("header_event", HEADER_EVENT),
    ] {
        out.extend_from_slice(name.as_bytes());
        out.push(0);
        out.extend_from_slice(&(text.len() as u64).to_le_bytes());
        out.extend_from_slice(text.as_bytes());
    }
    let (ftrace, others): (Vec<_>, Vec<_>) = rec
        .formats
        .iter()
        .partition(|(ev, _)| ev.starts_with("ftrace/"));
    out.extend_from_slice(&(ftrace.len() as u32).to_le_bytes());
    for (_, text) in &ftrace {
        out.extend_from_slice(&(text.len() as u64).to_le_bytes());
        out.extend_from_slice(text.as_bytes());
    }
    let mut systems: Vec<(&str, Vec<&str>)> = Vec::new();
    for (ev, text) in &others {
        let group = ev.split('/').next().unwrap_or("");
        match systems.iter_mut().find(|(g, _)| *g == group) {
            Some((_, v)) => v.push(text),
            None => systems.push((group, vec![text])),
        }
    }
    out.extend_from_slice(&(systems.len() as u32).to_le_bytes());
    for (group, texts) in &systems {
        out.extend_from_slice(group.as_bytes());
        out.push(0);
        out.extend_from_slice(&(texts.len() as u32).to_le_bytes());
        for t in texts {
            out.extend_from_slice(&(t.len() as u64).to_le_bytes());
            out.extend_from_slice(t.as_bytes());
        }
    }
    out.extend_from_slice(&0u32.to_le_bytes()); // kallsyms
    out.extend_from_slice(&0u32.to_le_bytes()); // printk formats
    out.extend_from_slice(&(rec.cmdlines.len() as u64).to_le_bytes());
    out.extend_from_slice(rec.cmdlines.as_bytes());
    out.extend_from_slice(&(rec.raw.len() as u32).to_le_bytes());
    out.extend_from_slice(b"options  \0");
    out.extend_from_slice(&0u16.to_le_bytes());
    out.extend_from_slice(b"flyrecord\0");
    let table = out.len();
    out.resize(table + 16 * rec.raw.len(), 0);
    for (cpu, raw) in rec.raw.iter().enumerate() {
        let pad = (rec.subbuf_size - out.len() % rec.subbuf_size) % rec.subbuf_size;
        out.resize(out.len() + pad, 0);
        let at = table + 16 * cpu;
        let offset = out.len() as u64;
        out[at..at + 8].copy_from_slice(&offset.to_le_bytes());
        out[at + 8..at + 16].copy_from_slice(&(raw.len() as u64).to_le_bytes());
        out.extend_from_slice(raw);
    }
    out
}

/// One line of `trace-cmd report -t`.
#[derive(Debug)]
struct Line {
    pid: i64,
    cpu: usize,
    ts: u64,
    name: String,
    fields: String,
}

fn parse_report(text: &str) -> Vec<Line> {
    text.lines()
        .filter(|l| l.contains(" [") && !l.contains("EVENTS DROPPED"))
        .map(|line| {
            let open = line.find(" [").expect("[");
            let close = open + line[open..].find(']').expect("]");
            let task = line[..open].trim();
            let pid = task[task.rfind('-').expect("-") + 1..]
                .parse()
                .expect("pid");
            let cpu = line[open + 2..close].parse().expect("cpu");
            let (ts, rest) = line[close + 1..].trim_start().split_once(": ").expect("ts");
            let (secs, nsecs) = ts.split_once('.').expect("secs.nsecs");
            let ts = secs.parse::<u64>().expect("secs") * 1_000_000_000
                + nsecs.parse::<u64>().expect("ns");
            let (name, fields) = rest.split_once(':').expect("name");
            Line {
                pid,
                cpu,
                ts,
                name: name.to_owned(),
                fields: fields.trim().to_owned(),
            }
        })
        .collect()
}

fn text(v: Value<'_>) -> String {
    String::from_utf8_lossy(v.as_bytes().expect("bytes")).into_owned()
}

#[test]
#[ignore = "needs trace-cmd installed"]
fn trace_cmd_reads_the_fixture_pages_as_we_do() {
    check(&fixture_dir());
}

#[test]
#[ignore = "needs trace-cmd installed"]
fn trace_cmd_reads_the_overflow_pages_as_we_do() {
    check(&fixture_dir().join("overflow"));
}

/// Compares our parse of the recording in `dir` with trace-cmd's.
fn check(dir: &std::path::Path) {
    let rec = Recording::load(dir).expect("fixtures");
    let tmp_name = format!(
        "zt-tracecmd-{}-{}",
        std::process::id(),
        dir.file_name().and_then(|n| n.to_str()).unwrap_or("x")
    );
    let dir = std::env::temp_dir().join(tmp_name);
    std::fs::create_dir_all(&dir).expect("tmp");
    let dat = dir.join("fixture.dat");
    std::fs::write(&dat, trace_dat(&rec)).expect("write trace.dat");
    let out = Command::new("trace-cmd")
        .args(["report", "-t", "-i"])
        .arg(&dat)
        .output();
    let _ = std::fs::remove_dir_all(&dir);
    let out = match out {
        Ok(o) if o.status.success() => o,
        Ok(o) => panic!("trace-cmd failed: {}", String::from_utf8_lossy(&o.stderr)),
        Err(e) => panic!("trace-cmd not runnable: {e}"),
    };
    let lines = parse_report(&String::from_utf8_lossy(&out.stdout));
    let (table, layout) = rec.layout();
    let mut n = 0;
    for (cpu, raw) in rec.raw.iter().enumerate() {
        let want: Vec<&Line> = lines.iter().filter(|l| l.cpu == cpu).collect();
        let mut i = 0;
        for page in layout.pages(raw) {
            for r in page.expect("page").records() {
                let r = r.expect("record");
                let ev = table.decode(&r).expect("decode");
                let w = want
                    .get(i)
                    .unwrap_or_else(|| panic!("cpu{cpu}: trace-cmd has fewer"));
                i += 1;
                let ctx = format!("cpu{cpu} #{i}: {w:?}");
                assert_eq!(r.timestamp, w.ts, "{ctx}");
                assert_eq!(ev.pid().expect("pid"), w.pid, "{ctx}");
                assert_eq!(ev.name(), w.name, "{ctx}");
                match ev.name() {
                    "print" => {
                        let buf = text(ev.field("buf").expect("buf"));
                        let shown = w.fields.split_once(": ").map_or("", |x| x.1);
                        assert_eq!(buf.trim_end_matches('\n'), shown, "{ctx}");
                    }
                    "sched_switch" => {
                        let f = |n: &str| ev.field(n).expect("field");
                        let prev = format!(
                            "{}:{} [{}]",
                            text(f("prev_comm")),
                            f("prev_pid").as_i64().expect("int"),
                            f("prev_prio").as_i64().expect("int")
                        );
                        let next = format!(
                            "==> {}:{} [{}]",
                            text(f("next_comm")),
                            f("next_pid").as_i64().expect("int"),
                            f("next_prio").as_i64().expect("int")
                        );
                        assert!(
                            w.fields.starts_with(&prev) && w.fields.ends_with(&next),
                            "{ctx}: {prev} … {next}"
                        );
                    }
                    _ => {}
                }
                n += 1;
            }
        }
        assert_eq!(i, want.len(), "cpu{cpu} count");
    }
    assert_eq!(n, lines.len());
    println!("{n} events match trace-cmd to the nanosecond");
}

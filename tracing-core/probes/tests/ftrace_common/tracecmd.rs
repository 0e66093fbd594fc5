//! Debian's `trace-cmd` as an oracle: raw pages with their `header_page`
//! and `format` files wrapped in a trace.dat (version 6) file, and its
//! `report -t` lines (nanosecond timestamps) parsed back.

use std::process::Command;

use super::Recording;

/// The kernel's `events/header_event` text (the same on every kernel with
/// this ring-buffer format); trace.dat carries it, trace-cmd reads it.
const HEADER_EVENT: &str = "# compressed entry header\n\ttype_len    :    5 bits\n\ttime_delta  :   27 bits\n\tarray       :   32 bits\n\n\tpadding     : type == 29\n\ttime_extend : type == 30\n\ttime_stamp : type == 31\n\tdata max type_len  == 28\n";

/// A trace.dat version 6 file holding the recording's pages.
pub fn trace_dat(rec: &Recording) -> Vec<u8> {
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
pub struct Line {
    /// The task's pid.
    pub pid: i64,
    /// The CPU.
    pub cpu: usize,
    /// The timestamp, ns.
    pub ts: u64,
    /// The event name.
    pub name: String,
    /// The rest of the line.
    pub fields: String,
}

pub fn parse_report(text: &str) -> Vec<Line> {
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

/// `trace-cmd report -t` of `rec`'s pages; `Err` when trace-cmd cannot be
/// run at all (not installed), a panic when it fails on our file.
pub fn report(rec: &Recording, tag: &str) -> Result<Vec<Line>, String> {
    let dir = std::env::temp_dir().join(format!("zt-tracecmd-{}-{tag}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("tmp");
    let dat = dir.join("pages.dat");
    std::fs::write(&dat, trace_dat(rec)).expect("write trace.dat");
    let out = Command::new("trace-cmd")
        .args(["report", "-t", "-i"])
        .arg(&dat)
        .output();
    let _ = std::fs::remove_dir_all(&dir);
    match out {
        Ok(o) if o.status.success() => Ok(parse_report(&String::from_utf8_lossy(&o.stdout))),
        Ok(o) => panic!("trace-cmd failed: {}", String::from_utf8_lossy(&o.stderr)),
        Err(e) => Err(format!("trace-cmd cannot be run: {e}")),
    }
}

/// Whether trace-cmd tests must run (`ZEROTRACE_REQUIRE_TRACE_CMD=1`, as
/// CI sets it), else they may say they did not and pass.
pub fn required() -> bool {
    std::env::var("ZEROTRACE_REQUIRE_TRACE_CMD").is_ok_and(|v| v == "1")
}

/// [`report`], or `None` after saying in one line that `test` did not run
/// (a failure instead where [`required`]).
pub fn report_or_skip(rec: &Recording, tag: &str, test: &str) -> Option<Vec<Line>> {
    match report(rec, tag) {
        Ok(l) => Some(l),
        Err(why) => {
            assert!(!required(), "ZEROTRACE_REQUIRE_TRACE_CMD=1 but {why}");
            println!("{test} did not run: {why}");
            None
        }
    }
}

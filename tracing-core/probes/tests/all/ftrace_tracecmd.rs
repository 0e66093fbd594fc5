//! A second oracle for exact nanoseconds: the fixture's raw pages, wrapped
//! in a trace.dat (version 6) file with their `header_page` and `format`
//! files, decoded by Debian's `trace-cmd report -t`, and compared with our
//! parse event by event: CPU, timestamp to the nanosecond, pid, event name,
//! `print`'s text and sched_switch's comms, pids and priorities.
//! Without `trace-cmd` (`apt-get install trace-cmd`) it says so in one
//! line and passes, unless `ZEROTRACE_REQUIRE_TRACE_CMD=1` (CI).

use crate::ftrace_common;

use ftrace_common::{Recording, fixture_dir, tracecmd};
use zerotrace_probes::ftrace::Value;

fn text(v: Value<'_>) -> String {
    String::from_utf8_lossy(v.as_bytes().expect("bytes")).into_owned()
}

#[test]
fn trace_cmd_reads_the_fixture_pages_as_we_do() {
    check(&fixture_dir());
}

#[test]
fn trace_cmd_reads_the_overflow_pages_as_we_do() {
    check(&fixture_dir().join("overflow"));
}

/// Compares our parse of the recording in `dir` with trace-cmd's.
fn check(dir: &std::path::Path) {
    let rec = Recording::load(dir).expect("fixtures");
    let tag = dir.file_name().and_then(|n| n.to_str()).unwrap_or("x");
    let Some(lines) = tracecmd::report_or_skip(&rec, tag, "ftrace_tracecmd") else {
        return;
    };
    let (table, layout) = rec.layout();
    let mut n = 0;
    for (cpu, raw) in rec.raw.iter().enumerate() {
        let want: Vec<&tracecmd::Line> = lines.iter().filter(|l| l.cpu == cpu).collect();
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

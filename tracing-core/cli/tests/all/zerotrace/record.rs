//! `zerotrace record`: configs from text, files and stdin, what it names
//! (unserved data sources, refused fields), Ctrl-C, the progress line and
//! the output path.

use super::*;

#[test]
fn record_with_a_text_config_keeps_unserved_data_source_configs_unchanged() {
    let d = dir("record-txt");
    let daemon = Daemon::start(&d);
    let cfg = d.join("system.pbtxt");
    std::fs::write(&cfg, UNSERVED_CONFIG).unwrap();
    let out = d.join("trace.pftrace");
    let o = zerotrace()
        .args([
            "--consumer-socket",
            daemon.socket(),
            "record",
            "--txt",
            "-c",
        ])
        .arg(&cfg)
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).is_empty(), "nothing on stdout: {}", stdout(&o));
    // Every field of it is one the probes implement: nothing to warn of.
    assert!(!stderr(&o).contains("not supported"), "{}", stderr(&o));
    let st = zerotrace().arg("stats").arg(&out).output().unwrap();
    assert!(
        stdout(&st).contains("setup errors: none recorded"),
        "{}",
        stdout(&st)
    );
    // A field the probes refuse is said before the session, and `stats`
    // says it from the trace's own config.
    std::fs::write(
        &cfg,
        "buffers { size_kb: 256 } duration_ms: 200 data_sources { config { name: \
         \"linux.sys_stats\" sys_stats_config { gpufreq_period_ms: 100 } } }",
    )
    .unwrap();
    let refused = d.join("refused.pftrace");
    let o = zerotrace()
        .args([
            "--consumer-socket",
            daemon.socket(),
            "record",
            "--txt",
            "-c",
        ])
        .arg(&cfg)
        .arg("-o")
        .arg(&refused)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(
            "warning: linux.sys_stats: SysStatsConfig.gpufreq_period_ms: not supported by these \
             probes"
        ),
        "{}",
        stderr(&o)
    );
    let st = zerotrace().arg("stats").arg(&refused).output().unwrap();
    assert!(
        stdout(&st).contains("setup errors: 1")
            && stdout(&st).contains("linux.sys_stats: SysStatsConfig.gpufreq_period_ms"),
        "{}",
        stdout(&st)
    );
    let trace = std::fs::read(&out).unwrap();
    let ours = trace_config_of(&trace);
    let want = protoc_encode(UNSERVED_CONFIG);
    // Field for field (as messages) and byte for byte.
    let desc = zerotrace_cli::schema::trace_config();
    let a = DynamicMessage::decode(desc.clone(), ours.as_slice()).unwrap();
    let b = DynamicMessage::decode(desc, want.as_slice()).unwrap();
    assert_eq!(a, b);
    assert_eq!(ours, want);
    assert_eq!(a.encode_to_vec(), want);
}

#[test]
fn record_light_config_and_query() {
    let d = dir("record-light");
    let daemon = Daemon::start(&d);
    let out = d.join("light.pftrace");
    let o = zerotrace()
        .args([
            "--consumer-socket",
            daemon.socket(),
            "record",
            "-t",
            "300ms",
            "-b",
            "2mb",
        ])
        .args(["--ds", "my.source", "render*"])
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let cfg = trace_config_of(&std::fs::read(&out).unwrap());
    let text =
        zerotrace_cli::text_config::to_text(zerotrace_cli::schema::trace_config(), &cfg).unwrap();
    for want in [
        "size_kb: 2048",
        "fill_policy: RING_BUFFER",
        "duration_ms: 300",
        "name: \"track_event\"",
        "enabled_categories: [\"render*\"]",
        "name: \"my.source\"",
    ] {
        assert!(text.contains(want), "{want} in\n{text}");
    }
    let q = zerotrace()
        .args(["--consumer-socket", daemon.socket(), "query"])
        .output()
        .unwrap();
    assert!(q.status.success(), "{}", stderr(&q));
    assert!(stdout(&q).contains("PRODUCERS"), "{}", stdout(&q));
    let q = zerotrace()
        .args(["--consumer-socket", daemon.socket(), "query", "--json"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&q.stdout).unwrap();
    assert_eq!(v["supportsTracingSessions"], true, "{v}");
}

#[test]
fn ctrl_c_stops_the_session_and_still_writes_the_file() {
    let d = dir("record-sigint");
    let daemon = Daemon::start(&d);
    let out = d.join("interrupted.pftrace");
    let child = zerotrace()
        .args(["--consumer-socket", daemon.socket(), "record", "-t", "60s"])
        .arg("-o")
        .arg(&out)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(500));
    let pid = rustix::process::Pid::from_raw(child.id() as i32).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::INT).unwrap();
    let start = Instant::now();
    let o = child.wait_with_output().unwrap();
    assert!(start.elapsed() < Duration::from_secs(20));
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("interrupted"), "{}", stderr(&o));
    let trace = std::fs::read(&out).unwrap();
    assert!(!trace_config_of(&trace).is_empty());
}

/// A `linux.perf` field the probes refuse reaches the person who asked:
/// `record` says it before the session, `stats` from the trace's config.
#[test]
fn record_and_stats_name_a_refused_linux_perf_field() {
    let d = dir("perf-refusal");
    let daemon = Daemon::start(&d);
    let cfg = d.join("perf.pbtxt");
    std::fs::write(
        &cfg,
        "buffers { size_kb: 256 } duration_ms: 200 data_sources { config { name: \
         \"linux.perf\" perf_event_config { timebase { poll_period_ms: 5 } \
         remote_descriptor_timeout_ms: 100 } } }",
    )
    .unwrap();
    let out = d.join("perf.pftrace");
    let o = zerotrace()
        .args([
            "--consumer-socket",
            daemon.socket(),
            "record",
            "--txt",
            "-c",
        ])
        .arg(&cfg)
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let want = "linux.perf: PerfEventConfig.timebase.poll_period_ms: not supported by these probes";
    assert!(
        stderr(&o).contains(&format!("warning: {want}")),
        "{}",
        stderr(&o)
    );
    // Kept as upstream on Linux keeps it: not a refusal.
    assert!(
        !stderr(&o).contains("remote_descriptor_timeout_ms"),
        "{}",
        stderr(&o)
    );
    let st = zerotrace().arg("stats").arg(&out).output().unwrap();
    assert!(
        stdout(&st).contains("setup errors: 1") && stdout(&st).contains(want),
        "{}",
        stdout(&st)
    );
}

#[test]
fn progress_line_on_a_terminal_only() {
    use rustix::pty::{OpenptFlags, grantpt, openpt, ptsname, unlockpt};
    let d = dir("progress");
    let daemon = Daemon::start(&d);
    // A pseudo-terminal for the recorder's stderr.
    let master = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY).unwrap();
    grantpt(&master).unwrap();
    unlockpt(&master).unwrap();
    let name = ptsname(&master, Vec::new()).unwrap();
    let slave = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(name.to_str().unwrap())
        .unwrap();
    let reader = std::thread::spawn(move || {
        let mut all = Vec::new();
        let mut buf = [0u8; 4096];
        // Ends with EIO once every slave side is closed.
        while let Ok(n) = rustix::io::read(&master, &mut buf) {
            if n == 0 {
                break;
            }
            all.extend_from_slice(&buf[..n]);
        }
        String::from_utf8_lossy(&all).into_owned()
    });
    let out = d.join("tty.pftrace");
    let mut child = zerotrace()
        .args([
            "--consumer-socket",
            daemon.socket(),
            "record",
            "-t",
            "1500ms",
            "-o",
        ])
        .arg(&out)
        .stderr(slave)
        .spawn()
        .unwrap();
    assert!(child.wait().unwrap().success());
    let shown = reader.join().unwrap();
    assert!(
        shown.contains("received") && shown.contains("% full"),
        "{shown:?}"
    );
    assert!(shown.contains(" lost"), "{shown:?}");
    // On a pipe: no progress line, only the summary.
    let o = zerotrace()
        .args([
            "--consumer-socket",
            daemon.socket(),
            "record",
            "-t",
            "600ms",
            "-o",
        ])
        .arg(d.join("pipe.pftrace"))
        .output()
        .unwrap();
    let e = stderr(&o);
    assert!(!e.contains("% full") && !e.contains('\r'), "{e}");
    // The summary: what nothing serves, the file, packets per data source.
    let said: Vec<&str> = e.lines().filter(|l| l.starts_with("zerotrace: ")).collect();
    assert_eq!(said.len(), 3, "{e}");
    assert!(said[1].starts_with("zerotrace: wrote "), "{e}");
}

#[test]
fn record_config_from_stdin_and_into_a_file_by_size() {
    use std::io::Write;
    let d = dir("stdin");
    let daemon = Daemon::start(&d);
    let mut child = zerotrace()
        .args([
            "--consumer-socket",
            daemon.socket(),
            "record",
            "--txt",
            "-c",
            "-",
            "-o",
            "-",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"buffers { size_kb: 256 } duration_ms: 200")
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let cfg = trace_config_of(&o.stdout);
    let text =
        zerotrace_cli::text_config::to_text(zerotrace_cli::schema::trace_config(), &cfg).unwrap();
    assert!(text.contains("duration_ms: 200"), "{text}");
    // -s: the service writes into the file while recording.
    let out = d.join("sized.pftrace");
    let o = zerotrace()
        .args([
            "--consumer-socket",
            daemon.socket(),
            "record",
            "-t",
            "300ms",
            "-s",
            "1mb",
            "-o",
        ])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("the service wrote"), "{}", stderr(&o));
    let cfg = trace_config_of(&std::fs::read(&out).unwrap());
    let text =
        zerotrace_cli::text_config::to_text(zerotrace_cli::schema::trace_config(), &cfg).unwrap();
    assert!(
        text.contains("write_into_file: true") && text.contains("max_file_size_bytes: 1048576"),
        "{text}"
    );
}

#[test]
fn an_output_path_that_exists_is_refused_and_kept() {
    let d = dir("output-path");
    let daemon = Daemon::start(&d);
    let existing = d.join("existing.pftrace");
    std::fs::write(&existing, b"keep").unwrap();
    let cfg = d.join("c.pbtxt");
    std::fs::write(
        &cfg,
        format!(
            "buffers {{ size_kb: 64 }} duration_ms: 200 write_into_file: true output_path: {:?}",
            existing.to_str().unwrap()
        ),
    )
    .unwrap();
    let o = zerotrace()
        .args([
            "--consumer-socket",
            daemon.socket(),
            "record",
            "--txt",
            "-c",
        ])
        .arg(&cfg)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    assert!(stderr(&o).contains("does not overwrite"), "{}", stderr(&o));
    assert_eq!(std::fs::read(&existing).unwrap(), b"keep");
    // A new path: the service creates it, and record says so.
    let fresh = d.join("fresh.pftrace");
    std::fs::write(
        &cfg,
        format!(
            "buffers {{ size_kb: 64 }} duration_ms: 200 write_into_file: true output_path: {:?}",
            fresh.to_str().unwrap()
        ),
    )
    .unwrap();
    let o = zerotrace()
        .args([
            "--consumer-socket",
            daemon.socket(),
            "record",
            "--txt",
            "-c",
        ])
        .arg(&cfg)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!("bytes to {}", fresh.display())),
        "{}",
        stderr(&o)
    );
    assert!(!trace_config_of(&std::fs::read(&fresh).unwrap()).is_empty());
}

#[test]
fn record_names_unserved_data_sources_and_counts_packets_per_data_source() {
    let d = dir("record-report");
    let daemon = Daemon::start(&d);
    let out = d.join("t.pftrace");
    let o = zerotrace()
        .args([
            "--consumer-socket",
            daemon.socket(),
            "record",
            "-t",
            "300ms",
            "--ds",
            "linux.ftrace",
            "-o",
        ])
        .arg(&out)
        .output()
        .unwrap();
    let e = stderr(&o);
    assert!(o.status.success(), "{e}");
    assert!(
        e.contains("no connected producer serves track_event, linux.ftrace"),
        "{e}"
    );
    assert!(e.contains("packets per data source"), "{e}");
    let line = |name: &str| {
        e.lines()
            .find(|l| l.trim_start().starts_with(name))
            .unwrap_or_else(|| panic!("no {name} line in {e}"))
            .to_owned()
    };
    let count = |l: String| -> u64 {
        l.split_whitespace()
            .find_map(|w| w.parse().ok())
            .expect("a count")
    };
    assert_eq!(count(line("linux.ftrace")), 0);
    assert_eq!(count(line("track_event")), 0);
    let service = count(line("(the tracing service)"));
    let trace = std::fs::read(&out).unwrap();
    let all = protozero::Decoder::new(&trace).count() as u64;
    assert_eq!(service, all, "every packet is the service's here");
}

//! The `zerotrace` binary, run as a subprocess: every command, and every
//! error path with its exit code and one clear line.

use crate::support::zerotrace;
use crate::tp_support;
use crate::upstream;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};
use upstream::upstream_root;

use prost::Message;
use prost_reflect::DynamicMessage;
use zerotrace_protos::protos::TracePacketDecoder;

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A private directory for one test.
fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("zt-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A `zerotraced` on sockets in `dir`, killed on drop.
struct Daemon {
    child: Child,
    consumer: PathBuf,
}

impl Daemon {
    fn start(dir: &Path) -> Daemon {
        let (p, c) = (dir.join("p"), dir.join("c"));
        let child = Command::new(env!("CARGO_BIN_EXE_zerotraced"))
            .arg("--producer-socket")
            .arg(&p)
            .arg("--consumer-socket")
            .arg(&c)
            .arg("--quiet")
            .spawn()
            .unwrap();
        let start = Instant::now();
        while !c.exists() {
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "zerotraced did not start"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        Daemon { child, consumer: c }
    }

    fn socket(&self) -> &str {
        self.consumer.to_str().unwrap()
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The `trace_config` packet of a trace, encoded.
fn trace_config_of(trace: &[u8]) -> Vec<u8> {
    for f in protozero::Decoder::new(trace) {
        let p = TracePacketDecoder::new(f.unwrap().as_bytes().unwrap());
        if let Some(c) = p.trace_config_bytes() {
            return c.to_vec();
        }
    }
    panic!("no trace_config packet");
}

/// `protoc --encode=perfetto.protos.TraceConfig` of `text`, upstream schema.
fn protoc_encode(text: &str) -> Vec<u8> {
    let proto = "protos/perfetto/config/trace_config.proto";
    upstream::protoc_encode(&upstream_root(), proto, "perfetto.protos.TraceConfig", text)
        .expect("protoc --encode")
}

const UNSERVED_CONFIG: &str = r#"
# Data sources no producer serves here: they must pass through unchanged.
buffers { size_kb: 2048 fill_policy: RING_BUFFER }
buffers: { size_kb: 512, fill_policy: DISCARD }
data_sources {
  config {
    name: "linux.ftrace"
    target_buffer: 0
    ftrace_config {
      ftrace_events: ["sched/sched_switch", "sched/sched_wakeup", "power/cpu_frequency"]
      atrace_categories: "gfx"
      buffer_size_kb: 0x800
      drain_period_ms: 250
    }
  }
}
data_sources {
  config {
    name: "linux.process_stats"
    target_buffer: 1
    process_stats_config {
      scan_all_processes_on_start: true
      proc_stats_poll_ms: 1000
      quirks: [DISABLE_ON_DEMAND]
    }
  }
}
duration_ms: 400
flush_period_ms: 30000
incremental_state_config { clear_period_ms: 5000 }
"#;

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

#[test]
fn demo_then_dump_stats_and_convert() {
    let d = dir("demo");
    let out = d.join("demo.pftrace");
    let o = zerotrace()
        .arg("demo")
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let said = stdout(&o);
    assert!(said.contains("slices") && said.contains("flows"), "{said}");

    let o = zerotrace().arg("stats").arg(&out).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let s = stdout(&o);
    assert!(s.contains("track_event") && s.contains("buffers:"), "{s}");
    assert!(s.contains("data losses: none"), "{s}");

    let o = zerotrace().arg("dump").arg(&out).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let s = stdout(&o);
    assert!(s.contains("track_event {"), "named fields");
    assert!(s.contains("name_iid 1 = \""), "interned names resolved");
    assert!(
        s.contains("# name_iid") && s.contains("\"frame\""),
        "resolved frame"
    );

    let o = zerotrace()
        .args(["convert", "--json"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let events = v["traceEvents"].as_array().unwrap();
    let count = |ph: &str| events.iter().filter(|e| e["ph"] == ph).count();
    assert_eq!(count("B"), count("E"));
    assert!(count("B") > 100 && count("C") > 10, "{}", events.len());
    assert_eq!(count("s"), count("f"), "every flow starts and ends");
    assert!(
        events
            .iter()
            .any(|e| e["name"] == "frame" && e["args"]["worker"].is_number())
    );

    // The trace processor over the same trace: no loss, and per slice name
    // the count and total duration `convert --json` gives (B/E paired per
    // thread; its times are µs with three decimals, so exact in ns).
    let tp = tp_support::load(&std::fs::read(&out).unwrap());
    tp_support::assert_no_unexplained_stats(&tp, &[]);
    let mut json: std::collections::BTreeMap<String, (i64, i64)> = Default::default();
    let mut open: std::collections::HashMap<(i64, i64), Vec<(String, i64)>> = Default::default();
    let ns = |e: &serde_json::Value| (e["ts"].as_f64().unwrap_or(0.0) * 1000.0).round() as i64;
    let mut sorted: Vec<&serde_json::Value> = events.iter().collect();
    sorted.sort_by_key(|e| ns(e));
    for e in sorted {
        let key = (
            e["pid"].as_i64().unwrap_or(0),
            e["tid"].as_i64().unwrap_or(0),
        );
        match e["ph"].as_str() {
            Some("B") => open
                .entry(key)
                .or_default()
                .push((e["name"].as_str().unwrap_or("").to_owned(), ns(e))),
            Some("E") => {
                let (name, start) = open.get_mut(&key).and_then(Vec::pop).expect("paired");
                let t = json.entry(name).or_default();
                t.0 += 1;
                t.1 += ns(e) - start;
            }
            Some("i" | "I") => {
                json.entry(e["name"].as_str().unwrap_or("").to_owned())
                    .or_default()
                    .0 += 1;
            }
            _ => {}
        }
    }
    let tp_slices: std::collections::BTreeMap<String, (i64, i64)> = tp_support::rows(
        &tp,
        "SELECT name, COUNT(*), SUM(dur) FROM slice GROUP BY name",
    )
    .into_iter()
    .map(|r| match (&r[0], &r[1], &r[2]) {
        (
            zerotrace_trace_processor::Value::Text(n),
            zerotrace_trace_processor::Value::Int(c),
            zerotrace_trace_processor::Value::Int(d),
        ) => (n.clone(), (*c, *d)),
        other => panic!("{other:?}"),
    })
    .collect();
    assert_eq!(tp_slices, json, "slices per name: count, total duration");
}

#[test]
fn dump_names_the_fields_of_the_genuine_trace() {
    let genuine =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/vectors/genuine-session.pftrace");
    let o = zerotrace().arg("dump").arg(&genuine).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let s = stdout(&o);
    for want in [
        "trace_config {",
        "clock_snapshot {",
        "track_event {",
        "trusted_packet_sequence_id:",
    ] {
        assert!(s.contains(want), "{want}");
    }
    // A trace of Perfetto's own service and SDK loads without a loss, and
    // its TrackEvents count the same in the trace processor as in dump.
    let tp = tp_support::load(&std::fs::read(&genuine).unwrap());
    tp_support::assert_no_unexplained_stats(&tp, &[]);
    // Each event but a slice's end makes a row.
    let events = s.matches("track_event {").count() as i64
        - s.matches("type: TYPE_SLICE_END").count() as i64;
    let counted = tp_support::rows(
        &tp,
        "SELECT (SELECT COUNT(*) FROM slice) + (SELECT COUNT(*) FROM counter c \
         JOIN counter_track t ON c.track_id = t.id WHERE t.type = 'counter')",
    );
    assert!(events > 0);
    assert_eq!(
        counted,
        vec![vec![zerotrace_trace_processor::Value::Int(events)]],
        "one slice or counter value per begin, instant and counter event"
    );
}

#[test]
fn errors_say_what_to_do_with_their_exit_codes() {
    let d = dir("errors");
    // No service: exit 2, names the socket and zerotraced.
    let missing = d.join("no-such-socket");
    let o = zerotrace()
        .arg("--consumer-socket")
        .arg(&missing)
        .args(["record", "-t", "1s", "-o"])
        .arg(d.join("x"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(
        e.contains(missing.to_str().unwrap()) && e.contains("zerotraced"),
        "{e}"
    );
    assert_eq!(e.lines().count(), 1, "one line: {e}");

    // A bad text config: exit 1, FILE:LINE:COL, the line and a caret.
    let cfg = d.join("bad.pbtxt");
    std::fs::write(
        &cfg,
        "buffers { size_kb: 64 }\ndata_sources { config { nmae: \"x\" } }\n",
    )
    .unwrap();
    let o = zerotrace()
        .args(["record", "--txt", "-c"])
        .arg(&cfg)
        .args(["-o", "-"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    let first = format!("zerotrace: {}:2:25 error: ", cfg.display());
    assert!(e.starts_with(&first), "{e}");
    assert!(
        e.contains("data_sources { config { nmae: \"x\" } }\n"),
        "{e}"
    );
    assert!(
        e.trim_end().ends_with(&format!("{}^", " ".repeat(24))),
        "{e}"
    );

    // Unwritable output: exit 4 once the session is recorded.
    let daemon = Daemon::start(&d);
    let o = zerotrace()
        .args([
            "--consumer-socket",
            daemon.socket(),
            "record",
            "-t",
            "100ms",
            "-o",
        ])
        .arg(d.join("no/such/dir/t.pftrace"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    assert!(stderr(&o).contains("no/such/dir"), "{}", stderr(&o));

    // --no-clobber with an existing file: exit 4, nothing recorded.
    let existing = d.join("existing.pftrace");
    std::fs::write(&existing, b"keep").unwrap();
    let o = zerotrace()
        .args([
            "--consumer-socket",
            daemon.socket(),
            "record",
            "--no-clobber",
            "-o",
        ])
        .arg(&existing)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(4));
    assert_eq!(std::fs::read(&existing).unwrap(), b"keep");

    // A file that is not a trace: exit 5.
    let junk = d.join("junk");
    std::fs::write(&junk, [0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f]).unwrap();
    let o = zerotrace().arg("stats").arg(&junk).output().unwrap();
    assert_eq!(o.status.code(), Some(5), "{}", stderr(&o));

    // A missing trace file: exit 4.
    let o = zerotrace()
        .arg("dump")
        .arg(d.join("missing"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(4));
}

#[test]
fn detach_attach_and_background() {
    let d = dir("detach");
    let daemon = Daemon::start(&d);
    let o = zerotrace()
        .args([
            "--consumer-socket",
            daemon.socket(),
            "record",
            "-t",
            "600ms",
            "--detach",
            "k",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("--attach k"), "{}", stderr(&o));
    let out = d.join("attached.pftrace");
    let o = zerotrace()
        .args([
            "--consumer-socket",
            daemon.socket(),
            "record",
            "--attach",
            "k",
            "-o",
        ])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!trace_config_of(&std::fs::read(&out).unwrap()).is_empty());

    // --background: prints the recorder's pid and returns at once.
    let bg = d.join("background.pftrace");
    let start = Instant::now();
    let o = zerotrace()
        .args([
            "--consumer-socket",
            daemon.socket(),
            "record",
            "-t",
            "2s",
            "--background",
            "-o",
        ])
        .arg(&bg)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!bg.exists(), "returned before the recording ended");
    let pid: u32 = stdout(&o).trim().parse().expect("a pid");
    assert!(pid > 0);
    while !bg.exists() || std::fs::read(&bg).unwrap().is_empty() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "the background recorder wrote nothing"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
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

/// `protoc --encode=perfetto.protos.Trace` of `text`, upstream schema.
fn protoc_encode_trace(text: &str) -> Vec<u8> {
    let proto = "protos/perfetto/trace/trace.proto";
    upstream::protoc_encode(&upstream_root(), proto, "perfetto.protos.Trace", text)
        .expect("protoc --encode")
}

/// `stats` lists the ftrace setup errors a trace's `ftrace_stats` name
/// (unknown and failed events, refused fields, atrace errors), each once.
#[test]
fn stats_names_the_ftrace_setup_errors() {
    let d = dir("setup-errors");
    let trace = protoc_encode_trace(
        r#"
        packet {
          trusted_packet_sequence_id: 3
          ftrace_stats {
            phase: START_OF_TRACE
            unknown_ftrace_events: "nosuch/event"
            failed_ftrace_events: "kmem/kmalloc"
            failed_ftrace_events: "FtraceConfig.kprobe_events: not supported by these probes, recorded without it"
            atrace_errors: "atrace is Android-only"
          }
        }
        packet {
          trusted_packet_sequence_id: 3
          ftrace_stats {
            phase: END_OF_TRACE
            unknown_ftrace_events: "nosuch/event"
            failed_ftrace_events: "kmem/kmalloc"
          }
        }
        "#,
    );
    let path = d.join("t.pftrace");
    std::fs::write(&path, trace).unwrap();
    let o = zerotrace().arg("stats").arg(&path).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    for want in [
        "setup errors: 4",
        "unknown ftrace event nosuch/event",
        "ftrace event kmem/kmalloc could not be enabled",
        "FtraceConfig.kprobe_events: not supported",
        "atrace: atrace is Android-only",
    ] {
        assert!(out.contains(want), "{want} in\n{out}");
    }
    // A trace without any: said too.
    let o = zerotrace()
        .args(["demo", "-o"])
        .arg(d.join("demo.pftrace"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let o = zerotrace()
        .arg("stats")
        .arg(d.join("demo.pftrace"))
        .output()
        .unwrap();
    assert!(
        stdout(&o).contains("setup errors: none recorded"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn dump_and_stats_name_packets_of_data_sources_we_do_not_model() {
    let d = dir("unmodeled");
    let trace = protoc_encode_trace(
        r#"
        packet {
          trusted_packet_sequence_id: 7
          ftrace_events {
            cpu: 2
            event { timestamp: 1000 pid: 42 sched_switch { prev_comm: "worker" prev_pid: 42 next_comm: "idle" next_pid: 0 } }
          }
        }
        packet {
          trusted_packet_sequence_id: 8
          timestamp: 2000
          process_tree { processes { pid: 42 ppid: 1 cmdline: "worker" } }
        }
        packet {
          trusted_packet_sequence_id: 8
          timestamp: 3000
          process_stats { processes { pid: 42 vm_rss_kb: 1024 } }
        }
        "#,
    );
    let path = d.join("unmodeled.pftrace");
    std::fs::write(&path, &trace).unwrap();
    let o = zerotrace().arg("dump").arg(&path).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let s = stdout(&o);
    for want in [
        "ftrace_events {",
        "sched_switch {",
        "prev_comm: \"worker\"",
        "process_tree {",
        "cmdline: [\"worker\"]",
        "process_stats {",
        "vm_rss_kb: 1024",
    ] {
        assert!(s.contains(want), "{want} in\n{s}");
    }
    let o = zerotrace().arg("stats").arg(&path).output().unwrap();
    let s = stdout(&o);
    for want in ["ftrace_events", "process_tree", "process_stats"] {
        assert!(s.contains(want), "{want} in\n{s}");
    }
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
fn a_closed_pipe_ends_output_quietly() {
    use std::io::{BufRead, BufReader};
    let genuine =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/vectors/genuine-session.pftrace");
    for cmd in ["dump", "stats"] {
        let mut child = zerotrace()
            .arg(cmd)
            .arg(&genuine)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut first = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut first)
            .unwrap();
        // The reader goes away after one line.
        let o = child.wait_with_output().unwrap();
        assert!(o.status.success(), "{cmd}: {}", stderr(&o));
        assert!(!stderr(&o).contains("panicked"), "{cmd}: {}", stderr(&o));
    }
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
fn options_that_would_be_dropped_are_errors() {
    let d = dir("dropped-options");
    let cfg = d.join("c.pbtxt");
    std::fs::write(&cfg, "buffers { size_kb: 64 } duration_ms: 100").unwrap();
    // No service: each of these must fail as a usage error (exit 1) before
    // the service is asked for anything (exit 2).
    let missing = d.join("no-such-socket");
    let run = |args: &[&str]| {
        let o = zerotrace()
            .arg("--consumer-socket")
            .arg(&missing)
            .arg("record")
            .args(args)
            .output()
            .unwrap();
        (o.status.code(), stderr(&o))
    };
    let c = cfg.to_str().unwrap();
    let out = d.join("t.pftrace");
    let out = out.to_str().unwrap();
    for (args, says) in [
        (vec!["-c", c, "--txt", "-t", "5s", "-o", out], "-t/--time"),
        (
            vec!["-c", c, "--txt", "-b", "1mb", "-o", out],
            "-b/--buffer",
        ),
        (vec!["-c", c, "--txt", "-s", "1mb", "-o", out], "-s/--size"),
        (vec!["-c", c, "--txt", "--ds", "x", "-o", out], "--ds"),
        (vec!["-c", c, "--txt", "cat*", "-o", out], "categories"),
        (vec!["--txt", "-t", "1s", "-o", out], "no -c"),
        (
            vec!["-t", "1s", "--detach", "k", "-o", out],
            "nothing would write",
        ),
        (
            vec!["--attach", "k", "-t", "1s"],
            "--attach takes no config",
        ),
        (vec!["-t", "1s", "--background", "-o", "-"], "-o FILE"),
        (
            vec!["-t", "1s", "--background", "--detach", "k", "-o", out],
            "cannot be combined",
        ),
    ] {
        let (code, e) = run(&args);
        assert_eq!(code, Some(1), "{args:?}: {e}");
        assert!(e.contains(says), "{args:?}: {e}");
        assert_eq!(e.lines().count(), 1, "one line: {e}");
    }
    assert!(!Path::new(out).exists());

    // The global --consumer-socket on a command that connects to nothing
    // would be ignored: a usage error too.
    let trace = d.join("some.pftrace");
    std::fs::write(&trace, b"").unwrap();
    for cmd in [
        vec!["dump", trace.to_str().unwrap()],
        vec!["stats", trace.to_str().unwrap()],
        vec!["convert", trace.to_str().unwrap()],
        vec!["demo", "-o", out],
    ] {
        let o = zerotrace()
            .arg("--consumer-socket")
            .arg(&missing)
            .args(&cmd)
            .output()
            .unwrap();
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{cmd:?}: {e}");
        assert!(e.contains("does not connect"), "{cmd:?}: {e}");
    }
    assert!(!Path::new(out).exists());
}

#[test]
fn background_returns_once_the_session_runs_and_fails_in_the_foreground() {
    let d = dir("background-fails");
    let daemon = Daemon::start(&d);
    let run = |args: &[&str]| {
        let start = Instant::now();
        let o = zerotrace()
            .args([
                "--consumer-socket",
                daemon.socket(),
                "record",
                "--background",
            ])
            .args(args)
            .output()
            .unwrap();
        (o, start.elapsed())
    };
    let out = d.join("bg.pftrace");
    let out = out.to_str().unwrap();
    // A config that does not parse: the child's usage error, in the
    // foreground, with its exit code.
    let bad = d.join("bad.pbtxt");
    std::fs::write(&bad, "buffers { size_kb: 64 } no_such_field: 1").unwrap();
    let (o, _) = run(&["-c", bad.to_str().unwrap(), "--txt", "-o", out]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("no_such_field"), "{}", stderr(&o));
    assert!(stdout(&o).is_empty(), "no pid for a recorder that failed");
    // A session the service refuses (no buffers): exit 3, the reason said.
    let refused = d.join("refused.pbtxt");
    std::fs::write(
        &refused,
        "duration_ms: 5000 data_sources { config { name: \"track_event\" } }",
    )
    .unwrap();
    let (o, _) = run(&["-c", refused.to_str().unwrap(), "--txt", "-o", out]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(stderr(&o).contains("no buffers"), "{}", stderr(&o));
    assert!(stdout(&o).is_empty());
    // A service that is not there: exit 2.
    let o = zerotrace()
        .args(["--consumer-socket"])
        .arg(d.join("nobody"))
        .args(["record", "--background", "-t", "1s", "-o", out])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(!Path::new(out).exists());
    // A good one: the pid once the session is listed by the service, and
    // the recorder goes on after the parent returned (it ends by SIGTERM
    // and still writes the file).
    let (o, _) = run(&["-t", "60s", "-o", out]);
    assert!(o.status.success(), "{}", stderr(&o));
    let pid: i32 = stdout(&o).trim().parse().expect("a pid");
    let q = zerotrace()
        .args(["--consumer-socket", daemon.socket(), "query"])
        .output()
        .unwrap();
    assert!(
        stdout(&q).contains("(1 started)"),
        "the session runs once the parent returned:\n{}",
        stdout(&q)
    );
    assert!(!Path::new(out).exists());
    let _ = Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status();
    let start = Instant::now();
    while std::fs::metadata(out).map_or(true, |m| m.len() == 0) {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "the background recorder wrote nothing after SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn attach_with_no_clobber_keeps_an_existing_file() {
    let d = dir("attach-no-clobber");
    let daemon = Daemon::start(&d);
    let o = zerotrace()
        .args([
            "--consumer-socket",
            daemon.socket(),
            "record",
            "-t",
            "400ms",
            "--detach",
            "nc",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let out = d.join("kept.pftrace");
    std::fs::write(&out, b"precious").unwrap();
    let attach = |no_clobber: bool| {
        let mut c = zerotrace();
        c.args([
            "--consumer-socket",
            daemon.socket(),
            "record",
            "--attach",
            "nc",
            "-o",
        ])
        .arg(&out);
        if no_clobber {
            c.arg("--no-clobber");
        }
        c.output().unwrap()
    };
    let o = attach(true);
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    assert!(stderr(&o).contains("--no-clobber"), "{}", stderr(&o));
    assert_eq!(std::fs::read(&out).unwrap(), b"precious");
    // The session stayed detached: attaching without --no-clobber gets it.
    let o = attach(false);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!trace_config_of(&std::fs::read(&out).unwrap()).is_empty());
}

#[test]
fn attach_waits_for_a_session_the_service_writes_and_says_where() {
    let d = dir("attach-file");
    let daemon = Daemon::start(&d);
    let out = d.join("by-service.pftrace");
    let o = zerotrace()
        .env("XDG_RUNTIME_DIR", &d)
        .args([
            "--consumer-socket",
            daemon.socket(),
            "record",
            "-t",
            "700ms",
            "-s",
            "1mb",
            "--detach",
            "filekey",
            "-o",
        ])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let o = zerotrace()
        .env("XDG_RUNTIME_DIR", &d)
        .args([
            "--consumer-socket",
            daemon.socket(),
            "record",
            "--attach",
            "filekey",
        ])
        .output()
        .unwrap();
    let e = stderr(&o);
    assert!(o.status.success(), "{e}");
    let canonical = std::fs::canonicalize(&out).unwrap();
    assert!(
        e.contains(&format!(
            "the service writes it into {}",
            canonical.display()
        )),
        "{e}"
    );
    assert!(e.contains("the service wrote"), "waited for the end: {e}");
    assert!(!trace_config_of(&std::fs::read(&out).unwrap()).is_empty());

    // A session read back at its end, attached without -o: refused, and
    // left detached for a later attach with -o.
    let o = zerotrace()
        .args([
            "--consumer-socket",
            daemon.socket(),
            "record",
            "-t",
            "700ms",
            "--detach",
            "ringkey",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let o = zerotrace()
        .args([
            "--consumer-socket",
            daemon.socket(),
            "record",
            "--attach",
            "ringkey",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("stays detached"), "{}", stderr(&o));
    let ring = d.join("ring.pftrace");
    let o = zerotrace()
        .args([
            "--consumer-socket",
            daemon.socket(),
            "record",
            "--attach",
            "ringkey",
            "-o",
        ])
        .arg(&ring)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!trace_config_of(&std::fs::read(&ring).unwrap()).is_empty());
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

/// A trace whose TrackEvents (with dict and array annotations) sit in a
/// `compressed_packets` packet, as the service writes with deflate.
fn compressed_trace() -> Vec<u8> {
    use std::io::Write;
    use zerotrace_protos::protos::TracePacket;
    let packet = |f: &dyn Fn(&mut TracePacket<'_>)| {
        let mut w = protozero::HeapWriter::new();
        {
            let mut p = TracePacket::from_message(w.root());
            p.set_trusted_packet_sequence_id(2);
            f(&mut p);
        }
        w.finish().unwrap()
    };
    let record = |out: &mut Vec<u8>, p: &[u8]| {
        let mut w = protozero::HeapWriter::new();
        w.root().append_bytes(1, p);
        out.extend(w.finish().unwrap());
    };
    let descriptor = packet(&|p| {
        let mut d = p.begin_track_descriptor();
        d.set_uuid(7);
        d.begin_thread()
            .set_pid(10)
            .set_tid(11)
            .set_thread_name("main");
    });
    let begin = packet(&|p| {
        p.set_timestamp(1_000);
        let mut e = p.begin_track_event();
        e.set_type_raw(1).set_track_uuid(7).set_name("work");
        {
            let mut d = e.add_debug_annotations();
            d.set_name("d");
            d.add_dict_entries().set_name("a").set_int_value(1);
            let mut b = d.add_dict_entries();
            b.set_name("b");
            b.add_array_values().set_string_value("x");
            b.add_array_values().set_bool_value(true);
        }
        let mut a = e.add_debug_annotations();
        a.set_name("arr");
        a.add_array_values().set_int_value(1);
        a.add_array_values().set_int_value(2);
    });
    let end = packet(&|p| {
        p.set_timestamp(2_000);
        p.begin_track_event().set_type_raw(2).set_track_uuid(7);
    });
    let mut inner = Vec::new();
    record(&mut inner, &begin);
    record(&mut inner, &end);
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    z.write_all(&inner).unwrap();
    let zlib = z.finish().unwrap();
    let compressed = packet(&|p| {
        p.set_compressed_packets(&zlib);
    });
    let mut trace = Vec::new();
    record(&mut trace, &descriptor);
    record(&mut trace, &compressed);
    trace
}

#[test]
fn dump_stats_and_convert_inflate_compressed_packets() {
    let d = dir("compressed");
    let path = d.join("compressed.pftrace");
    std::fs::write(&path, compressed_trace()).unwrap();

    let o = zerotrace().arg("dump").arg(&path).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let s = stdout(&o);
    assert!(s.contains("name: \"work\""), "{s}");
    assert!(!s.contains("compressed_packets"), "{s}");

    let o = zerotrace().arg("stats").arg(&path).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let s = stdout(&o);
    assert!(s.contains(": 3 packets"), "{s}");
    assert!(s.contains("track_event 2"), "{s}");

    // No --json: JSON is the only format.
    let o = zerotrace().arg("convert").arg(&path).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let events = v["traceEvents"].as_array().unwrap();
    let begin = events
        .iter()
        .find(|e| e["ph"] == "B")
        .unwrap_or_else(|| panic!("a slice in {v}"));
    assert_eq!(begin["name"], "work");
    assert_eq!(begin["tid"], 11);
    assert_eq!(
        begin["args"]["d"],
        serde_json::json!({"a": 1, "b": ["x", true]})
    );
    assert_eq!(begin["args"]["arr"], serde_json::json!([1, 2]));
    assert_eq!(events.iter().filter(|e| e["ph"] == "E").count(), 1);
}

//! The tracefs controller, the session machine and the per-CPU readers,
//! against a fake tracefs tree (no root needed) and against the running
//! kernel in a dedicated instance (removed afterwards, also on failure):
//! two merged sessions record, their pages are read and decoded, and the
//! instance is left exactly as it was. Where tracefs cannot be had the live
//! test says so in one line and passes, unless `ZEROTRACE_REQUIRE_TRACEFS=1`.
//! (Its own test binary, not a module of `all/`: it records from the kernel,
//! which other tests' work beside it would disturb.)

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use zerotrace_probes::ftrace::config::{EventCatalog, FtraceOptions, category_tracepoints};
use zerotrace_probes::ftrace::cpu_reader::{CpuReader, CpuStats};
use zerotrace_probes::ftrace::session::{BufferSize, SessionWants};
use zerotrace_probes::ftrace::tracefs::{
    Controller, Instance, TracefsError, find_or_mount, read_bounded,
};
use zerotrace_probes::ftrace::{EventFormat, FormatTable, HeaderPage, PageLayout};

fn ev(g: &str, n: &str) -> (String, String) {
    (g.to_owned(), n.to_owned())
}

fn wants(events: &[(&str, &str)], kb: u32) -> SessionWants {
    SessionWants {
        events: events.iter().map(|(g, n)| ev(g, n)).collect(),
        buffer_size_kb: kb,
        buffer_percent: None,
        mono_raw_clock: false,
        drain_period_ms: 100,
        preserve_buffer: false,
        syscalls: None,
    }
}

/// A directory removed when dropped.
struct TempTree(PathBuf);

impl Drop for TempTree {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

fn put(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
    fs::write(p, text).expect("write");
}

/// Files are overwritten in place (no truncation), as tracefs files are
/// written; what counts is what the write put at the start.
fn starts(root: &Path, rel: &str, want: &str) {
    let got = fs::read_to_string(root.join(rel)).expect("read");
    assert!(got.starts_with(want), "{rel}: {got:?}, want {want:?}");
}

#[test]
fn a_fake_tree_drives_the_controller() {
    let root = std::env::temp_dir().join(format!("zt-fake-tracefs-{}", std::process::id()));
    let _guard = TempTree(root.clone());
    let fmt = "name: sched_switch\nID: 1\nformat:\n\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n";
    put(&root, "tracing_on", "1\n");
    put(&root, "set_event", "irq:irq_handler_entry\n");
    put(&root, "buffer_size_kb", "7 (expanded: 1408)\n");
    put(&root, "trace_clock", "[local] global boot\n");
    put(&root, "buffer_percent", "50\n");
    put(&root, "current_tracer", "nop\n");
    put(&root, "trace", "");
    put(&root, "buffer_subbuf_size_kb", "8\n");
    put(&root, "events/sched/sched_switch/format", fmt);
    put(&root, "events/sched/sched_switch/enable", "0\n");
    put(&root, "events/irq/irq_handler_entry/format", fmt);
    put(&root, "events/irq/irq_handler_entry/enable", "1\n");
    put(&root, "events/ftrace/print/format", fmt);
    put(
        &root,
        "per_cpu/cpu0/stats",
        "entries: 1\noverrun: 2\ncommit overrun: 0\nbytes: 3\n",
    );
    put(&root, "per_cpu/cpu1/stats", "entries: 1\n");

    assert!(matches!(
        Instance::open(&root, Some("nosuch")),
        Err(TracefsError::NoInstance(_))
    ));
    let inst = Instance::open(&root, None).expect("open");
    assert_eq!(inst.subbuf_size().expect("subbuf"), 8192);
    assert_eq!(inst.cpus().expect("cpus"), vec![0, 1]);
    assert!(inst.has_event("sched", "sched_switch"));
    assert!(!inst.has_event("sched", "nosuch"));
    assert_eq!(inst.group_of("print").as_deref(), Some("ftrace"));
    assert_eq!(inst.group_events("irq"), vec!["irq_handler_entry"]);
    let st = inst.state().expect("state");
    assert_eq!(st.buffer_size, BufferSize::Uniform(1408));
    assert_eq!(st.clock, "local");
    assert_eq!(CpuStats::read(inst.dir(), 0).expect("stats").overrun, 2);
    assert!(CpuStats::read(inst.dir(), 1).is_err(), "truncated stats");

    let mut c = Controller::new(inst);
    let r = c
        .start(
            1,
            wants(&[("sched", "sched_switch"), ("ftrace", "print")], 4096),
        )
        .expect("start");
    assert!(r.failed_events.is_empty());
    starts(&root, "events/sched/sched_switch/enable", "1");
    starts(&root, "events/irq/irq_handler_entry/enable", "0");
    starts(&root, "trace_clock", "boot");
    starts(&root, "buffer_size_kb", "4096");
    starts(&root, "tracing_on", "1");
    // A second session with an event whose enable file is missing: reported.
    let r = c
        .start(2, wants(&[("sched", "nosuch")], 1))
        .expect("start 2");
    assert_eq!(r.failed_events, vec!["sched/nosuch"]);
    c.stop(2).expect("stop 2");
    c.stop(1).expect("stop 1");
    starts(&root, "events/sched/sched_switch/enable", "0");
    starts(&root, "events/irq/irq_handler_entry/enable", "1");
    starts(&root, "trace_clock", "local");
    starts(&root, "buffer_size_kb", "1408");
    starts(&root, "tracing_on", "1");
    assert!(c.stop(1).is_err());

    // Whole sub-buffers into the caller's buffer, a short one zero-padded.
    let raw: Vec<u8> = (0..8192 * 2 + 100).map(|i| (i % 251) as u8 + 1).collect();
    put(&root, "per_cpu/cpu0/trace_pipe_raw", "");
    fs::write(root.join("per_cpu/cpu0/trace_pipe_raw"), &raw).expect("raw");
    let mut r = CpuReader::open(&root, 0, 8192).expect("reader");
    assert!(
        r.read_pages(&mut [0u8; 100]).is_err(),
        "buffer below a sub-buffer"
    );
    let mut buf = vec![0xffu8; 8192 * 4];
    assert_eq!(r.read_pages(&mut buf).expect("read"), 8192 * 3);
    assert_eq!(&buf[..raw.len()], &raw[..]);
    assert!(buf[raw.len()..8192 * 3].iter().all(|&b| b == 0), "padded");
    assert_eq!(r.read_pages(&mut buf).expect("read"), 0, "drained");
    assert!(CpuReader::open(&root, 9, 8192).is_err());

    // Reads are bounded.
    put(&root, "big", &"x".repeat(5000));
    assert!(matches!(
        read_bounded(&root.join("big"), 4096),
        Err(TracefsError::TooLarge { cap: 4096, .. })
    ));
    assert_eq!(
        read_bounded(&root.join("big"), 5000).expect("fits").len(),
        5000
    );

    // A start whose setup write fails is undone: no session, state back.
    // (`trace` as a directory: truncating it fails, also for root.)
    fs::remove_file(root.join("trace")).expect("rm trace");
    fs::create_dir(root.join("trace")).expect("mkdir trace");
    let mut c = Controller::new(Instance::open(&root, None).expect("open"));
    assert!(
        c.start(4, wants(&[("sched", "sched_switch")], 4096))
            .is_err()
    );
    assert!(c.sessions().is_idle());
    starts(&root, "events/sched/sched_switch/enable", "0");
    starts(&root, "events/irq/irq_handler_entry/enable", "1");
    starts(&root, "tracing_on", "1");
    fs::remove_dir(root.join("trace")).expect("rmdir trace");
    put(&root, "trace", "");

    // Another tracer in use: refused.
    put(&root, "current_tracer", "function\n");
    let mut c = Controller::new(Instance::open(&root, None).expect("open"));
    assert!(matches!(
        c.start(3, wants(&[], 4)),
        Err(TracefsError::TracerInUse(_))
    ));
}

/// Our own instance, removed when dropped (also on panic).
struct OwnInstance(PathBuf);

impl Drop for OwnInstance {
    fn drop(&mut self) {
        let _ = fs::write(self.0.join("tracing_on"), "0");
        let _ = fs::write(self.0.join("events/enable"), "0");
        if let Err(e) = fs::remove_dir(&self.0) {
            eprintln!("could not remove {}: {e}", self.0.display());
        }
    }
}

#[test]
fn live_merged_sessions_record_and_restore_the_instance() {
    let required = std::env::var("ZEROTRACE_REQUIRE_TRACEFS").is_ok_and(|v| v == "1");
    let root = match find_or_mount() {
        Ok(r) => r,
        Err(why) => {
            assert!(!required, "ZEROTRACE_REQUIRE_TRACEFS=1 but: {why}");
            println!("ftrace_tracefs live test did not run: {why}");
            return;
        }
    };
    let name = format!("zt-tracefs-{}", std::process::id());
    let dir = root.join("instances").join(&name);
    if let Err(why) = fs::create_dir(&dir) {
        assert!(
            !required,
            "ZEROTRACE_REQUIRE_TRACEFS=1 but mkdir failed: {why}"
        );
        println!(
            "ftrace_tracefs live test did not run: mkdir {}: {why}",
            dir.display()
        );
        return;
    }
    let _own = OwnInstance(dir.clone());
    let top_before = Instance::open(&root, None)
        .expect("top")
        .state()
        .expect("top state");
    // A prior state of our own to be restored.
    fs::write(dir.join("events/irq/irq_handler_entry/enable"), "1").expect("enable irq");
    fs::write(dir.join("trace_clock"), "local").expect("clock");
    fs::write(dir.join("tracing_on"), "0").expect("tracing_on");
    let inst = Instance::open(&root, Some(&name)).expect("open");
    let before = inst.state().expect("state");
    assert_eq!(before.clock, "local");

    // Session 1 from a config, resolved against this kernel's events.
    let cfg = {
        let mut w = protozero::HeapWriter::new();
        {
            let mut c = zerotrace_protos::protos::FtraceConfig::from_message(w.root());
            c.add_ftrace_events("sched/sched_switch")
                .add_ftrace_events("sched_waking")
                .add_ftrace_events("nosuchgroup/nosuchevent")
                .set_buffer_size_kb(1024)
                .set_instance_name(&name);
        }
        w.finish().expect("config")
    };
    let opts = FtraceOptions::from_config(&cfg).expect("options");
    let inst_cfg = Instance::open(&root, opts.instance_name.as_deref()).expect("by name");
    let sel = opts.resolve(&inst_cfg, &|_, _| true);
    assert_eq!(sel.unknown, vec!["nosuchgroup/nosuchevent"]);
    let one = opts.session_wants(&sel, None);
    assert_eq!(
        one.events,
        [ev("sched", "sched_switch"), ev("sched", "sched_waking")]
            .into_iter()
            .collect::<BTreeSet<_>>()
    );
    // Atrace categories resolve to this kernel's tracepoints.
    let sched = category_tracepoints("sched", &inst_cfg);
    assert!(sched.contains(&ev("sched", "sched_switch")), "{sched:?}");
    assert!(!category_tracepoints("workq", &inst_cfg).is_empty());

    let mut c = Controller::new(inst.clone());
    c.start(1, one).expect("start 1");
    c.start(
        2,
        wants(&[("sched", "sched_switch"), ("ftrace", "print")], 64),
    )
    .expect("start 2");
    let during = inst.state().expect("state");
    assert_eq!(during.clock, "boot");
    assert!(during.tracing_on);
    assert_eq!(
        during.enabled_events,
        [ev("sched", "sched_switch"), ev("sched", "sched_waking")]
            .into_iter()
            .collect::<BTreeSet<_>>()
    );

    // Activity: markers and threads that sleep and wake.
    for i in 0..5 {
        fs::write(dir.join("trace_marker"), format!("zt-tracefs {i}")).expect("marker");
        std::thread::spawn(|| std::thread::sleep(std::time::Duration::from_millis(2)))
            .join()
            .expect("join");
    }

    // Read and decode every CPU's pages.
    let subbuf = inst.subbuf_size().expect("subbuf");
    let header = HeaderPage::parse(&inst.header_page().expect("header_page")).expect("header");
    let mut table = FormatTable::new();
    for (g, n) in [
        ("sched", "sched_switch"),
        ("sched", "sched_waking"),
        ("ftrace", "print"),
    ] {
        let f = EventFormat::parse(&inst.format(g, n).expect("format")).expect("parse format");
        table.insert(f).expect("insert");
    }
    let layout = PageLayout::new(&header, subbuf, table.common_type().expect("common_type"))
        .expect("layout");
    let mut buf = vec![0u8; subbuf * 16];
    let (mut switches, mut markers, mut pages) = (0, 0, 0);
    let cpus = inst.cpus().expect("cpus");
    for &cpu in &cpus {
        let stats = CpuStats::read(inst.dir(), cpu).expect("stats");
        assert_eq!(stats.overrun, 0, "cpu{cpu}: {stats:?}");
        let mut r = CpuReader::open(inst.dir(), cpu, subbuf).expect("open reader");
        loop {
            let n = r.read_pages(&mut buf).expect("read");
            if n == 0 {
                break;
            }
            for page in layout.pages(&buf[..n]) {
                pages += 1;
                for rec in page.expect("page").records() {
                    let e = table.decode(&rec.expect("record")).expect("decode");
                    match e.name() {
                        "sched_switch" => switches += 1,
                        "print" => {
                            let b = e.field("buf").expect("buf");
                            if b.as_bytes().is_some_and(|b| b.starts_with(b"zt-tracefs")) {
                                markers += 1;
                            }
                        }
                        _ => {}
                    }
                }
            }
        }
    }
    println!(
        "{} cpus, {pages} pages, {switches} sched_switch, {markers} markers",
        cpus.len()
    );
    assert!(switches > 0);
    assert_eq!(markers, 5);

    c.stop(1).expect("stop 1");
    let mid = inst.state().expect("state");
    assert_eq!(
        mid.enabled_events,
        [ev("sched", "sched_switch")]
            .into_iter()
            .collect::<BTreeSet<_>>(),
        "session 1's own event is gone, the shared one stays"
    );
    c.stop(2).expect("stop 2");
    assert_eq!(inst.state().expect("state"), before, "instance restored");
    let top_after = Instance::open(&root, None)
        .expect("top")
        .state()
        .expect("top state");
    assert_eq!(top_after, top_before, "top-level instance untouched");
}

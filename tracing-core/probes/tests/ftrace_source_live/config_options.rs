//! The config's options as the kernel sees them: a refused field, the
//! drain threshold, a preserved buffer, print filters and named syscalls.

use super::*;

/// A refused `FtraceConfig` field does not stop the rest: the session
/// records its events, and the trace's first `ftrace_stats` names the
/// field among `failed_ftrace_events`, where Perfetto's importer shows
/// ftrace setup errors.
#[test]
fn a_refused_field_is_named_in_the_trace_and_the_rest_records() {
    let Some(root) = live_tracefs("ftrace_source_live") else {
        return;
    };
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let name = format!("zt-refused-{}", std::process::id());
    let inst = Instance::create(&root, &name).expect("instance");
    let (ctx, _log) = context();
    let cfg = ds_config("linux.ftrace", |m| {
        let mut c = FtraceConfig::from_message(m.begin_nested(data_source_field::FTRACE_CONFIG));
        c.add_ftrace_events("ftrace/print");
        c.set_buffer_size_kb(512)
            .set_instance_name(&name)
            .set_enable_function_graph(true);
    });
    let mut probe = FtraceSource::at(&root)
        .create(&cfg, &ctx)
        .expect("accepted without the refused field");
    let mut sink = BufferSink::default();
    probe.start(now(), &mut sink);
    inst.write("trace_marker", "zt-refused").expect("marker");
    probe.stop(now(), &mut sink);
    let st = stats(&sink.packets);
    let start = FtraceStatsDecoder::new(&st[0]);
    let failed: Vec<&str> = start.failed_ftrace_events().collect();
    assert_eq!(
        failed,
        [zerotrace_probes::ftrace::config::refusal("enable_function_graph").as_str()]
    );
    let back = read_back(&bundles(&sink.packets));
    assert!(
        back.iter()
            .any(|b| b.fields.as_deref() == Some("zt-refused")),
        "the rest recorded"
    );
}

/// `drain_buffer_percent`: a burst many times the buffer, written faster
/// than the drain period reads, is read as each CPU's buffer passes the
/// watermark (the probe wakes its driver), and nothing is overrun. With
/// the period alone (10 s here) the same burst overruns.
#[test]
fn drain_buffer_percent_reads_a_burst_without_overruns() {
    let Some(root) = live_tracefs("ftrace_source_live") else {
        return;
    };
    let release = rustix::system::uname()
        .release()
        .to_string_lossy()
        .into_owned();
    if !zerotrace_probes::ftrace::watermark::poll_supported(&release) {
        assert!(
            std::env::var("ZEROTRACE_REQUIRE_TRACEFS").is_err(),
            "Linux {release}: buffer_percent wake-ups need 6.9"
        );
        println!("drain_buffer_percent did not run: Linux {release} is older than 6.9");
        return;
    }
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let name = format!("zt-burst-{}", std::process::id());
    let inst = Instance::create(&root, &name).expect("instance");
    let (mut ctx, log) = context();
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    let tx = Mutex::new(tx);
    ctx.wake = Arc::new(move || {
        let _ = tx.lock().unwrap().send(());
    });
    let cfg = ds_config("linux.ftrace", |m| {
        let mut c = FtraceConfig::from_message(m.begin_nested(data_source_field::FTRACE_CONFIG));
        c.add_ftrace_events("ftrace/print");
        c.set_buffer_size_kb(128)
            .set_drain_period_ms(10_000)
            .set_drain_buffer_percent(20)
            .set_instance_name(&name);
    });
    let mut probe = FtraceSource::at(&root)
        .create(&cfg, &ctx)
        .expect("config accepted");
    let mut sink = BufferSink::default();
    probe.start(now(), &mut sink);
    assert_eq!(
        inst.read("buffer_percent").expect("buffer_percent").trim(),
        "20"
    );
    const MARKERS: usize = 10_000;
    let path = root.join("instances").join(&name).join("trace_marker");
    let writer = std::thread::spawn(move || {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new().write(true).open(path).unwrap();
        let pad = "p".repeat(180);
        for i in 0..MARKERS {
            f.write_all(format!("zt-burst {i:06} {pad}").as_bytes())
                .unwrap();
            if i % 20 == 19 {
                std::thread::sleep(std::time::Duration::from_millis(2));
            }
        }
    });
    // The probes' thread, by hand: poll at the deadline or when woken.
    let mut wakes = 0;
    while !writer.is_finished() {
        let wait = probe
            .next_deadline()
            .map_or(100_000_000, |d| d.saturating_sub(now()))
            .min(100_000_000);
        if rx
            .recv_timeout(std::time::Duration::from_nanos(wait))
            .is_ok()
        {
            wakes += 1;
        }
        if probe.next_deadline().is_some_and(|d| d <= now()) {
            probe.poll(now(), &mut sink);
        }
    }
    writer.join().unwrap();
    probe.stop(now(), &mut sink);
    let st = stats(&sink.packets);
    let end = FtraceStatsDecoder::new(st.last().expect("stats"));
    let overrun: u64 = end.cpu_stats().map(|c| c.overrun().unwrap_or(0)).sum();
    let back = read_back(&bundles(&sink.packets));
    let got = back
        .iter()
        .filter(|b| {
            b.fields
                .as_deref()
                .is_some_and(|f| f.starts_with("zt-burst "))
        })
        .count();
    println!("drain_buffer_percent: {wakes} wake-ups, {got} markers, overrun {overrun}");
    assert!(
        wakes > 5,
        "woken by the watermark: {wakes}; {:?}",
        log.lock().unwrap()
    );
    assert_eq!(overrun, 0, "nothing overrun");
    assert_eq!(got, MARKERS, "every marker read");
}

/// `preserve_ftrace_buffer`: what the instance's ring buffer held before
/// the session started (a marker written while nobody recorded) is read
/// into the trace, as the kernel's own text of the buffer shows it, and
/// the start's `ftrace_stats` says the buffer was kept; without it the
/// start clears the buffer.
#[test]
fn preserve_ftrace_buffer_keeps_what_the_buffer_held() {
    let Some(root) = live_tracefs("ftrace_source_live") else {
        return;
    };
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    for preserve in [true, false] {
        let name = format!("zt-preserve-{preserve}-{}", std::process::id());
        let inst = Instance::create(&root, &name).expect("instance");
        inst.write("tracing_on", "1").expect("tracing_on");
        inst.write("trace_marker", "zt-before").expect("marker");
        let (ctx, _log) = context();
        let cfg = ds_config("linux.ftrace", |m| {
            let mut c =
                FtraceConfig::from_message(m.begin_nested(data_source_field::FTRACE_CONFIG));
            c.add_ftrace_events("ftrace/print");
            c.set_instance_name(&name)
                .set_preserve_ftrace_buffer(preserve);
        });
        let mut probe = FtraceSource::at(&root)
            .create(&cfg, &ctx)
            .expect("accepted");
        let mut sink = BufferSink::default();
        probe.start(now(), &mut sink);
        inst.write("trace_marker", "zt-after").expect("marker");
        let text = inst.read("trace").expect("trace");
        probe.stop(now(), &mut sink);
        let st = stats(&sink.packets);
        assert_eq!(
            FtraceStatsDecoder::new(&st[0]).preserve_ftrace_buffer(),
            preserve.then_some(true)
        );
        let back = read_back(&bundles(&sink.packets));
        let ours: Vec<&str> = back
            .iter()
            .filter_map(|b| b.fields.as_deref())
            .filter(|f| f.starts_with("zt-"))
            .collect();
        let theirs: Vec<&str> = ["zt-before", "zt-after"]
            .into_iter()
            .filter(|m| text.contains(&format!(": {m}")))
            .collect();
        assert_eq!(
            ours, theirs,
            "as the kernel's text (preserve: {preserve})\n{text}"
        );
        let want: &[&str] = if preserve {
            &["zt-before", "zt-after"]
        } else {
            &["zt-after"]
        };
        assert_eq!(ours, want, "preserve: {preserve}");
    }
}

/// `print_filter`: of the `trace_marker` messages the kernel's own text of
/// the buffer holds, the trace keeps exactly those the rules allow (first
/// matching rule decides; no match keeps), atrace-style `B|PID|...` rules
/// included.
#[test]
fn print_filter_keeps_what_the_rules_allow_of_the_kernels_text() {
    let Some(root) = live_tracefs("ftrace_source_live") else {
        return;
    };
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let name = format!("zt-printf-{}", std::process::id());
    let inst = Instance::create(&root, &name).expect("instance");
    let (ctx, _log) = context();
    let cfg = ds_config("linux.ftrace", |m| {
        let mut c = FtraceConfig::from_message(m.begin_nested(data_source_field::FTRACE_CONFIG));
        c.add_ftrace_events("ftrace/print");
        c.set_instance_name(&name);
        let mut f = c.begin_print_filter();
        f.add_rules().set_prefix("zt-drop").set_allow(false);
        {
            let mut r = f.add_rules();
            r.begin_atrace_msg().set_type("B").set_prefix("keep");
            r.set_allow(true);
        }
        f.add_rules().set_prefix("B|").set_allow(false);
    });
    let mut probe = FtraceSource::at(&root)
        .create(&cfg, &ctx)
        .expect("accepted");
    let mut sink = BufferSink::default();
    probe.start(now(), &mut sink);
    let sent = [
        "zt-drop 1",
        "zt-keep 2",
        "B|123|keep me",
        "B|123|other",
        "E|123",
        "zt-drop-too 3",
    ];
    for m in sent {
        inst.write("trace_marker", m).expect("marker");
    }
    let text = inst.read("trace").expect("trace");
    probe.stop(now(), &mut sink);
    // Every message is in the kernel's buffer...
    for m in sent {
        assert!(text.contains(&format!(": {m}")), "{m} in\n{text}");
    }
    // ... and the trace keeps those the rules allow, in order.
    let ours: Vec<&str> = read_back(&bundles(&sink.packets))
        .iter()
        .filter_map(|b| b.fields.clone())
        .map(|f| sent.into_iter().find(|m| *m == f).expect("a sent message"))
        .collect();
    assert_eq!(ours, ["zt-keep 2", "B|123|keep me", "E|123"]);
}

/// `syscall_events`: the kernel records only the named syscalls
/// (`raw_syscalls` filtered by id), as its own text of the buffer shows,
/// and the trace holds exactly those records.
#[test]
fn syscall_events_record_only_the_named_syscalls() {
    let Some(root) = live_tracefs("ftrace_source_live") else {
        return;
    };
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let name = format!("zt-syscalls-{}", std::process::id());
    let inst = Instance::create(&root, &name).expect("instance");
    let (ctx, log) = context();
    let cfg = ds_config("linux.ftrace", |m| {
        let mut c = FtraceConfig::from_message(m.begin_nested(data_source_field::FTRACE_CONFIG));
        c.add_syscall_events("sys_getppid");
        c.set_instance_name(&name).set_buffer_size_kb(1024);
    });
    let mut probe = FtraceSource::at(&root)
        .create(&cfg, &ctx)
        .expect("accepted");
    let mut sink = BufferSink::default();
    probe.start(now(), &mut sink);
    let getppid = zerotrace_probes::ftrace::syscalls::syscall_id("sys_getppid").expect("getppid");
    assert_eq!(
        inst.read("events/raw_syscalls/sys_enter/filter")
            .expect("filter")
            .trim(),
        format!("id == {getppid}")
    );
    for _ in 0..5 {
        std::hint::black_box(std::os::unix::process::parent_id());
        std::hint::black_box(std::process::id());
    }
    inst.write("tracing_on", "0").expect("tracing_on");
    let text = inst.read("trace").expect("trace");
    probe.stop(now(), &mut sink);
    assert_eq!(probe.stats().read_errors, 0, "{:?}", log.lock().unwrap());
    // The kernel's text: every record is getppid's.
    let count = |what: &str| text.lines().filter(|l| l.contains(what)).count();
    let (enters, exits) = (count(" sys_enter: NR "), count(" sys_exit: NR "));
    assert!(enters >= 5 && exits >= 5, "{text}");
    assert_eq!(
        count(&format!(" sys_enter: NR {getppid} ")),
        enters,
        "{text}"
    );
    // Ours: the same records.
    let back = read_back(&bundles(&sink.packets));
    let ours = |n: &str| back.iter().filter(|b| b.name == n).count();
    assert_eq!((ours("sys_enter"), ours("sys_exit")), (enters, exits));
    // The instance is given back without a filter.
    assert_eq!(
        inst.read("events/raw_syscalls/sys_enter/filter")
            .expect("filter")
            .trim(),
        "none"
    );
}

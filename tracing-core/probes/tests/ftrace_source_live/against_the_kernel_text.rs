//! The probe's packets against the kernel's own account of the same buffer:
//! its text (typed and compact sched) and trace-cmd's reading of the raw
//! pages, and two sessions sharing one instance.

use super::*;

#[test]
fn typed_events_through_the_data_source_match_the_kernel_text() {
    let Some(root) = live_tracefs("ftrace_source_live") else {
        return;
    };
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let name = format!("zt-src-typed-{}", std::process::id());
    let taken = record(&root, &name, false);
    let (text, packets) = (&taken.text, &taken.packets);
    let rendered = compare(text, packets, false);
    assert_eq!(check_stats(packets), 0);
    println!("{rendered} events compared field by field");
    assert!(rendered > 300, "{rendered}");
    assert!(!root.join("instances").join(&name).exists());
}

#[test]
fn compact_sched_through_the_data_source_matches_the_kernel_text() {
    let Some(root) = live_tracefs("ftrace_source_live") else {
        return;
    };
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let name = format!("zt-src-compact-{}", std::process::id());
    let taken = record(&root, &name, true);
    let (text, packets) = (&taken.text, &taken.packets);
    let rendered = compare(text, packets, true);
    assert_eq!(check_stats(packets), 0);
    assert!(rendered > 300, "{rendered}");
    // The switches and wakings went into compact_sched.
    let back = read_back(&bundles(packets));
    assert!(
        back.iter()
            .any(|b| b.name == "sched_switch" && b.pid.is_none())
    );
}

/// The second oracle, for exact nanoseconds: the raw pages the probe read
/// (copied as read), decoded by Debian's `trace-cmd`, against the probe's
/// packets: every event's CPU, timestamp to the ns, pid, name, print text,
/// and sched_switch's comms, pids and priorities.
#[test]
fn packets_match_trace_cmd_on_the_pages_the_probe_read() {
    let Some(root) = live_tracefs("ftrace_source_live") else {
        return;
    };
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let name = format!("zt-src-tracecmd-{}", std::process::id());
    let taken = record(&root, &name, false);
    let Some(lines) = tracecmd::report_or_skip(&taken.layout, "source", "packets_match_trace_cmd")
    else {
        return;
    };
    let back = read_back(&bundles(&taken.packets));
    assert_eq!(back.len(), lines.len());
    let mut switches = 0;
    for cpu in 0..taken.layout.raw.len() {
        let ours = by_cpu(&back, cpu);
        let theirs: Vec<_> = lines.iter().filter(|l| l.cpu == cpu).collect();
        assert_eq!(ours.len(), theirs.len(), "cpu{cpu}");
        for (o, w) in ours.iter().zip(&theirs) {
            let ctx = format!("{o:?} vs {w:?}");
            assert_eq!(o.ts, w.ts, "{ctx}");
            assert_eq!(o.pid, Some(w.pid), "{ctx}");
            assert_eq!(o.name, w.name, "{ctx}");
            let fields = o.fields.as_deref().unwrap_or("");
            match o.name.as_str() {
                "print" => {
                    let shown = w.fields.split_once(": ").map_or("", |x| x.1);
                    assert_eq!(fields, shown, "{ctx}");
                }
                "sched_switch" => {
                    // Ours as the kernel's text prints it; trace-cmd's own
                    // form is `comm:pid [prio] S ==> comm:pid [prio]`.
                    // A value runs to the next key (a comm may hold spaces:
                    // rustc's `lto cgu.10` threads).
                    let kv = |k: &str, next: &str| {
                        let at = fields.find(&format!("{k}=")).expect(k) + k.len() + 1;
                        let rest = &fields[at..];
                        let end = rest.find(&format!(" {next}=")).unwrap_or(rest.len());
                        rest[..end].to_owned()
                    };
                    let prev = format!(
                        "{}:{} [{}]",
                        kv("prev_comm", "prev_pid"),
                        kv("prev_pid", "prev_prio"),
                        kv("prev_prio", "prev_state")
                    );
                    let next = format!(
                        "==> {}:{} [{}]",
                        kv("next_comm", "next_pid"),
                        kv("next_pid", "next_prio"),
                        kv("next_prio", "")
                    );
                    assert!(
                        w.fields.starts_with(&prev) && w.fields.ends_with(&next),
                        "{ctx}: {prev} … {next}"
                    );
                    switches += 1;
                }
                _ => {}
            }
        }
    }
    assert!(switches > 100, "{switches}");
    println!("{} events match trace-cmd to the nanosecond", back.len());
}

#[test]
fn two_sessions_on_one_instance_get_their_own_events_and_give_it_back() {
    let Some(root) = live_tracefs("ftrace_source_live") else {
        return;
    };
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let name = format!("zt-src-two-{}", std::process::id());
    let inst = Instance::create(&root, &name).expect("instance");
    inst.write("trace_clock", "local").expect("clock");
    inst.write("buffer_size_kb", "256").expect("size");
    let before_size = inst.read("buffer_size_kb").expect("size");
    let (ctx, log) = context();
    let source = FtraceSource::at(&root);
    let mut sched = source
        .create(&config(&name, &["sched/sched_switch"], false), &ctx)
        .expect("sched config");
    let mut marks = source
        .create(
            &config(&name, &["ftrace/print", "nosuchgroup/nosuchevent"], false),
            &ctx,
        )
        .expect("marker config");
    let (mut a, mut b) = (BufferSink::default(), BufferSink::default());
    sched.start(now(), &mut a);
    marks.start(now(), &mut b);
    for i in 0..20 {
        inst.write("trace_marker", &format!("zt-two {i}"))
            .expect("marker");
        std::thread::sleep(std::time::Duration::from_millis(2));
        if i % 5 == 4 {
            // Either session's drain reads for both.
            sched.poll(now(), &mut a);
            marks.poll(now(), &mut b);
        }
    }
    marks.stop(now(), &mut b);
    // One session left: the instance still records for it.
    assert_eq!(inst.read("tracing_on").expect("on").trim(), "1");
    assert_eq!(
        inst.read("events/sched/sched_switch/enable")
            .expect("enable")
            .trim(),
        "1"
    );
    std::thread::sleep(std::time::Duration::from_millis(20));
    sched.stop(now(), &mut a);
    drop((sched, marks));
    let log = log.lock().unwrap().clone();

    let a_back = read_back(&bundles(&a.packets));
    // Bundles are per CPU: the markers of a thread that moved between CPUs
    // come back in CPU order, so compare them in time order (the session's
    // clock is BOOTTIME, one clock for every CPU).
    let mut b_back = read_back(&bundles(&b.packets));
    b_back.sort_by_key(|e| e.ts);
    assert!(!a_back.is_empty(), "{log:?}");
    assert!(
        a_back.iter().all(|e| e.name == "sched_switch"),
        "{a_back:?}"
    );
    let texts: Vec<&str> = b_back
        .iter()
        .map(|e| {
            assert_eq!(e.name, "print");
            e.fields.as_deref().expect("print text")
        })
        .collect();
    let want: Vec<String> = (0..20).map(|i| format!("zt-two {i}")).collect();
    assert_eq!(texts, want, "{log:?}");
    let b_stats = stats(&b.packets);
    let start = FtraceStatsDecoder::new(&b_stats[0]);
    assert_eq!(
        start.unknown_ftrace_events().collect::<Vec<_>>(),
        ["nosuchgroup/nosuchevent"]
    );
    // Given back as the first session found it.
    assert!(inst.read("trace_clock").expect("clock").contains("[local]"));
    assert_eq!(inst.read("buffer_size_kb").expect("size"), before_size);
    assert_eq!(
        inst.read("events/sched/sched_switch/enable")
            .expect("enable")
            .trim(),
        "0"
    );
}

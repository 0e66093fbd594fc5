//! What the probe says where tracefs is missing (stats and log), and the
//! kernel symbols it names for workqueue functions.

use super::*;

/// No tracefs where the source looks: the start says so in an
/// `ftrace_stats` packet (every requested event failed) and in the log,
/// and nothing panics. Runs everywhere.
#[test]
fn without_tracefs_the_stats_and_the_log_say_so() {
    let (ctx, log) = context();
    let source = FtraceSource::at("/nonexistent/tracefs");
    let cfg = ds_config("linux.ftrace", |m| {
        let mut c = FtraceConfig::from_message(m.begin_nested(data_source_field::FTRACE_CONFIG));
        c.add_ftrace_events("sched/sched_switch")
            .add_ftrace_events("print");
    });
    let mut probe = source.create(&cfg, &ctx).expect("config accepted");
    let mut sink = BufferSink::default();
    probe.start(1, &mut sink);
    assert_eq!(probe.next_deadline(), None);
    probe.stop(2, &mut sink);
    let st = stats(&sink.packets);
    assert_eq!(st.len(), 1);
    let d = FtraceStatsDecoder::new(&st[0]);
    assert_eq!(d.phase(), Some(Phase::StartOfTrace));
    // Why, then every event asked for.
    let failed: Vec<&str> = d.failed_ftrace_events().collect();
    assert_eq!(failed.len(), 3, "{failed:?}");
    assert!(
        failed[0].starts_with("linux.ftrace not recording: "),
        "{failed:?}"
    );
    assert_eq!(failed[1..], ["sched/sched_switch", "print"]);
    let log = log.lock().unwrap();
    assert!(
        log.iter()
            .any(|l| l.starts_with("linux.ftrace: not recording")),
        "{log:?}"
    );
    drop(log);
    // A refused field does not stop the data source: the trace names it
    // (with the reason it records nothing here).
    let refused = ds_config("linux.ftrace", |m| {
        let mut c = FtraceConfig::from_message(m.begin_nested(data_source_field::FTRACE_CONFIG));
        c.set_enable_function_graph(true);
    });
    let mut probe = source.create(&refused, &ctx).expect("accepted");
    let mut sink = BufferSink::default();
    probe.start(1, &mut sink);
    probe.stop(2, &mut sink);
    let st = stats(&sink.packets);
    let failed: Vec<&str> = FtraceStatsDecoder::new(&st[0])
        .failed_ftrace_events()
        .collect();
    assert_eq!(
        failed[1],
        zerotrace_probes::ftrace::config::refusal("enable_function_graph")
    );
}

/// `symbolize_ksyms`: the workqueue functions the kernel ran come as
/// indices, each named by an `interned_data.kernel_symbols` entry of the
/// same sequence (never the address itself), the first such packet
/// clearing the sequence's incremental state; the end's stats count the
/// symbols parsed.
#[test]
fn symbolize_ksyms_names_the_workqueue_functions() {
    let Some(root) = live_tracefs("ftrace_source_live") else {
        return;
    };
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let name = format!("zt-src-ksyms-{}", std::process::id());
    let _inst = Instance::create(&root, &name).expect("instance");
    let (ctx, log) = context();
    let source = FtraceSource::at(&root);
    let cfg = ds_config("linux.ftrace", |m| {
        let mut c = FtraceConfig::from_message(m.begin_nested(data_source_field::FTRACE_CONFIG));
        c.add_ftrace_events("workqueue/workqueue_execute_start")
            .set_symbolize_ksyms(true)
            .set_instance_name(&name);
    });
    let mut probe = source.create(&cfg, &ctx).expect("config");
    let mut sink = BufferSink::default();
    probe.start(now(), &mut sink);
    for _ in 0..6 {
        // Writeback work items, besides the kernel's periodic ones.
        let _ = std::process::Command::new("sync").status();
        std::thread::sleep(std::time::Duration::from_millis(250));
        probe.poll(now(), &mut sink);
    }
    probe.stop(now(), &mut sink);
    let log = log.lock().unwrap().clone();

    let mut names = std::collections::HashMap::new();
    let mut used = Vec::new();
    let mut flags = Vec::new();
    for p in &sink.packets {
        let d = protozero::Decoder::new(p);
        let mut has_bundle = false;
        let mut packet_flags = None;
        for f in d {
            let f = f.expect("packet");
            match f.id {
                packet_field::FTRACE_EVENTS => {
                    has_bundle = true;
                    let b = FtraceEventBundleDecoder::new(f.as_bytes().expect("bundle"));
                    for ev in b.event() {
                        if let Some(w) = ev.workqueue_execute_start() {
                            used.push(w.function().expect("function"));
                        }
                    }
                }
                packet_field::INTERNED_DATA => {
                    for s in protozero::Decoder::new(f.as_bytes().expect("interned")) {
                        let s = s.expect("interned field");
                        assert_eq!(s.id, interned_data_field::KERNEL_SYMBOLS);
                        let mut iid = None;
                        let mut name = None;
                        for g in protozero::Decoder::new(s.as_bytes().expect("symbol")) {
                            let g = g.expect("symbol field");
                            match g.id {
                                interned_string_field::IID => iid = g.as_u64().ok(),
                                interned_string_field::STR => {
                                    name = Some(
                                        String::from_utf8(g.as_bytes().expect("str").to_vec())
                                            .expect("utf-8"),
                                    )
                                }
                                _ => {}
                            }
                        }
                        assert!(
                            names
                                .insert(iid.expect("iid"), name.expect("str"))
                                .is_none()
                        );
                    }
                }
                packet_field::SEQUENCE_FLAGS => packet_flags = f.as_u64().ok(),
                _ => {}
            }
        }
        if has_bundle {
            flags.push(packet_flags);
        }
    }
    assert!(!used.is_empty(), "no workqueue work ran: {log:?}");
    for iid in &used {
        let n = names
            .get(iid)
            .unwrap_or_else(|| panic!("index {iid} not named"));
        assert!(!n.is_empty() && !n.starts_with("0x"), "{n}");
        // An index, not a kernel address (KASLR is not disclosed).
        assert!(*iid < 1 << 32, "{iid:#x}");
    }
    // The first packet with symbols clears, later ones need the state.
    let first = flags.iter().position(|f| f.is_some()).expect("flags");
    assert_eq!(flags[first], Some(3));
    assert!(flags[first + 1..].iter().all(|f| *f == Some(2)));
    let st = stats(&sink.packets);
    let end = FtraceStatsDecoder::new(&st[1]);
    assert!(end.kernel_symbols_parsed().unwrap_or(0) > 1000);
    println!(
        "{} work items, {} symbols named: {:?}",
        used.len(),
        names.len(),
        names.values().take(3).collect::<Vec<_>>()
    );
}

//! Tests of the FtraceConfig decisions and their resolution against a fake
//! event catalog.

use super::*;
use protozero::HeapWriter;
use std::collections::BTreeMap;
use zerotrace_protos::protos::FtraceConfig;

/// A kernel with a few groups.
struct Fake(BTreeMap<&'static str, Vec<&'static str>>);

impl Fake {
    fn new() -> Self {
        let mut m = BTreeMap::new();
        m.insert(
            "sched",
            vec![
                "sched_switch",
                "sched_waking",
                "sched_wakeup",
                "sched_process_exit",
            ],
        );
        m.insert("task", vec!["task_newtask", "task_rename"]);
        m.insert("ftrace", vec!["print"]);
        m.insert(
            "workqueue",
            vec!["workqueue_execute_end", "workqueue_execute_start"],
        );
        m.insert("power", vec!["cpu_frequency", "cpu_idle"]);
        m.insert("kmem", vec!["rss_stat", "kmalloc"]);
        m.insert("irq", vec!["irq_handler_entry", "softirq_entry"]);
        m.insert("ipi", vec!["ipi_raise"]);
        Fake(m)
    }
}

impl EventCatalog for Fake {
    fn has_event(&self, group: &str, name: &str) -> bool {
        self.0.get(group).is_some_and(|v| v.contains(&name))
    }
    fn group_events(&self, group: &str) -> Vec<String> {
        let mut v: Vec<String> = self
            .0
            .get(group)
            .map(|v| v.iter().map(|s| (*s).to_owned()).collect())
            .unwrap_or_default();
        v.sort();
        v
    }
    fn group_of(&self, name: &str) -> Option<String> {
        self.0
            .iter()
            .find(|(_, v)| v.contains(&name))
            .map(|(g, _)| (*g).to_owned())
    }
}

fn config(f: impl FnOnce(&mut FtraceConfig<'_>)) -> Vec<u8> {
    let mut w = HeapWriter::new();
    {
        let mut c = FtraceConfig::from_message(w.root());
        f(&mut c);
    }
    w.finish().expect("finish")
}

fn ev(g: &str, n: &str) -> (String, String) {
    (g.to_owned(), n.to_owned())
}

#[test]
fn the_table_covers_the_upstream_schema() {
    assert!(FTRACE_CONFIG_SCHEMA.len() >= 26, "schema found");
    assert_eq!(undecided_fields(), Vec::<String>::new());
}

#[test]
fn every_refused_field_is_refused_by_name() {
    for (_, name, handling) in FTRACE_CONFIG_FIELDS {
        if *handling != Handling::Refused {
            continue;
        }
        let bytes = config(|c| match *name {
            "kprobe_events" => {
                c.add_kprobe_events();
            }
            "denser_generic_event_encoding" => {
                c.set_denser_generic_event_encoding(true);
            }
            "enable_function_graph" => {
                c.set_enable_function_graph(true);
            }
            "function_filters" => {
                c.add_function_filters("vfs_*");
            }
            "function_graph_roots" => {
                c.add_function_graph_roots("do_sys_open");
            }
            "debug_ftrace_abi" => {
                c.set_debug_ftrace_abi(true);
            }
            "function_graph_max_depth" => {
                c.set_function_graph_max_depth(3);
            }
            other => panic!("no test value for refused field {other}"),
        });
        let o = FtraceOptions::from_config(&bytes).expect(name);
        assert_eq!(o.refused, vec![*name], "{name}");
        assert!(refusal(name).contains(name));
    }
    // Kept fields are accepted.
    let bytes = config(|c| {
        c.add_atrace_apps("com.example")
            .add_atrace_categories_prefer_sdk("gfx")
            .set_ksyms_mem_policy_raw(2)
            .set_initialize_ksyms_synchronously_for_testing(true);
    });
    let o = FtraceOptions::from_config(&bytes).expect("kept fields accepted");
    assert_eq!(o.atrace_apps, vec!["com.example".to_owned()]);
}

#[test]
fn defaults_as_upstream() {
    let o = FtraceOptions::from_config(&[]).expect("empty config");
    assert!(o.compact_sched, "compact_sched on when unset");
    assert_eq!(o.drain_period_ms, DEFAULT_DRAIN_PERIOD_MS);
    assert_eq!(o.buffer_size_kb(None), DEFAULT_LOW_RAM_BUFFER_KB);
    assert_eq!(o.buffer_size_kb(Some(4 << 30)), DEFAULT_LOW_RAM_BUFFER_KB);
    assert_eq!(
        o.buffer_size_kb(Some(HIGH_RAM_BYTES)),
        DEFAULT_HIGH_RAM_BUFFER_KB
    );
    assert_eq!(o.instance_name, None);
    assert!(!o.symbolize_ksyms);

    let o = FtraceOptions::from_config(&config(|c| {
        c.begin_compact_sched().set_enabled(false);
    }))
    .expect("config");
    assert!(!o.compact_sched);
    // An empty CompactSchedConfig leaves it on.
    let o = FtraceOptions::from_config(&config(|c| {
        c.begin_compact_sched();
    }))
    .expect("config");
    assert!(o.compact_sched);
}

#[test]
fn drain_period_outside_the_range_is_the_default() {
    for (asked, got) in [
        (0, 100),
        (1, 1),
        (250, 250),
        (60_000, 60_000),
        (60_001, 100),
    ] {
        let o = FtraceOptions::from_config(&config(|c| {
            c.set_drain_period_ms(asked);
        }))
        .expect("config");
        assert_eq!(o.drain_period_ms, got, "asked {asked}");
    }
}

#[test]
fn buffer_size_lower_bound_and_cap() {
    let o = |kb, lb| {
        FtraceOptions::from_config(&config(|c| {
            c.set_buffer_size_kb(kb).set_buffer_size_lower_bound(lb);
        }))
        .expect("config")
    };
    assert_eq!(o(512, false).buffer_size_kb(None), 512);
    assert_eq!(o(512, true).buffer_size_kb(None), DEFAULT_LOW_RAM_BUFFER_KB);
    assert_eq!(
        o(512, true).buffer_size_kb(Some(16 << 30)),
        DEFAULT_HIGH_RAM_BUFFER_KB
    );
    assert_eq!(o(16_384, true).buffer_size_kb(None), 16_384);
    assert_eq!(o(1, false).buffer_size_kb(None), 4);
    assert_eq!(o(u32::MAX, false).buffer_size_kb(None), MAX_BUFFER_KB);
}

#[test]
fn event_names_are_validated_as_upstream() {
    for good in ["sched/sched_switch", "sched/*", "sched_switch", "a b/c"] {
        EventSpec::parse(good).unwrap_or_else(|e| panic!("{good}: {e}"));
    }
    for bad in [
        "",
        "/x",
        "x/",
        "a/b/c",
        "a*/b",
        "sched/sw*tch",
        "a\nb",
        "é/x",
    ] {
        assert!(EventSpec::parse(bad).is_err(), "{bad:?} accepted");
        let bytes = config(|c| {
            c.add_ftrace_events(bad);
        });
        if std::str::from_utf8(bad.as_bytes()).is_ok() {
            assert!(FtraceOptions::from_config(&bytes).is_err(), "{bad:?}");
        }
    }
    assert!(matches!(
        FtraceOptions::from_config(&config(|c| {
            c.add_atrace_categories("sch\x01ed");
        })),
        Err(FtraceConfigError::BadAtraceName(_))
    ));
}

#[test]
fn instance_name_checked_and_atrace_refused_there() {
    let o = FtraceOptions::from_config(&config(|c| {
        c.set_instance_name("mine");
    }))
    .expect("config");
    assert_eq!(o.instance_name.as_deref(), Some("mine"));
    for bad in ["..", "a/b", "."] {
        assert!(matches!(
            FtraceOptions::from_config(&config(|c| {
                c.set_instance_name(bad);
            })),
            Err(FtraceConfigError::BadInstanceName(_))
        ));
    }
    assert_eq!(
        FtraceOptions::from_config(&config(|c| {
            c.set_instance_name("mine").add_atrace_categories("sched");
        })),
        Err(FtraceConfigError::AtraceInSecondaryInstance)
    );
}

#[test]
fn resolves_events_groups_bare_names_and_categories() {
    let o = FtraceOptions::from_config(&config(|c| {
        c.add_ftrace_events("sched/sched_switch")
            .add_ftrace_events("task/*")
            .add_ftrace_events("cpu_idle")
            .add_ftrace_events("nosuch/event")
            .add_ftrace_events("nosuchgroup/*")
            .add_ftrace_events("nosuchname")
            .add_atrace_categories("workq")
            .add_atrace_categories("irq")
            .add_atrace_categories("not_a_category");
    }))
    .expect("config");
    let sel = o.resolve(&Fake::new(), &|_, _| true);
    let want: BTreeSet<_> = [
        ev("sched", "sched_switch"),
        ev("task", "task_newtask"),
        ev("task", "task_rename"),
        ev("power", "cpu_idle"),
        ev("ftrace", "print"),
        ev("workqueue", "workqueue_execute_end"),
        ev("workqueue", "workqueue_execute_start"),
        ev("irq", "irq_handler_entry"),
        ev("irq", "softirq_entry"),
        ev("ipi", "ipi_raise"),
    ]
    .into_iter()
    .collect();
    assert_eq!(sel.events, want);
    assert_eq!(
        sel.unknown,
        vec!["nosuch/event", "nosuchgroup/*", "nosuchname"]
    );
    assert!(sel.failed.is_empty());
    assert!(o.atrace_error().is_some());
    let w = o.session_wants(&sel, None);
    assert_eq!(w.events, sel.events);
    assert_eq!(w.buffer_size_kb, DEFAULT_LOW_RAM_BUFFER_KB);
    assert_eq!(w.drain_period_ms, DEFAULT_DRAIN_PERIOD_MS);
}

#[test]
fn sched_category_is_upstreams_list_on_this_kernel() {
    let o = FtraceOptions::from_config(&config(|c| {
        c.add_atrace_categories("sched")
            .add_atrace_categories("freq")
            .add_atrace_categories("idle");
    }))
    .expect("config");
    let sel = o.resolve(&Fake::new(), &|_, _| true);
    // sched_wakeup is deliberately not part of the category upstream.
    let want: BTreeSet<_> = [
        ev("sched", "sched_switch"),
        ev("sched", "sched_waking"),
        ev("sched", "sched_process_exit"),
        ev("task", "task_newtask"),
        ev("task", "task_rename"),
        ev("power", "cpu_frequency"),
        ev("power", "cpu_idle"),
        ev("ftrace", "print"),
    ]
    .into_iter()
    .collect();
    assert_eq!(sel.events, want);
    assert!(sel.unknown.is_empty(), "absent category events are silent");
    for c in [
        "sched",
        "freq",
        "idle",
        "irq",
        "workq",
        "disk",
        "mmc",
        "load",
        "sync",
        "memreclaim",
        "binder_driver",
    ] {
        assert!(atrace_category_names().any(|n| n == c), "{c}");
    }
}

#[test]
fn disable_generic_events_and_throttle_rss_stat() {
    let o = FtraceOptions::from_config(&config(|c| {
        c.add_ftrace_events("sched/sched_switch")
            .add_ftrace_events("kmem/kmalloc")
            .add_ftrace_events("kmem/rss_stat")
            .set_disable_generic_events(true)
            .set_throttle_rss_stat(true);
    }))
    .expect("config");
    let mut fake = Fake::new();
    let sel = o.resolve(&fake, &|g, _| g == "sched");
    assert_eq!(
        sel.events,
        [ev("sched", "sched_switch")].into_iter().collect()
    );
    // No synthetic event here: rss_stat is recorded unthrottled, and the
    // failed list says so (before the generic events left out).
    assert_eq!(sel.failed.len(), 3, "{:?}", sel.failed);
    assert!(sel.failed[0].starts_with("FtraceConfig.throttle_rss_stat: "));
    assert_eq!(sel.failed[1..], ["kmem/kmalloc", "kmem/rss_stat"]);

    // With the synthetic event present, rss_stat is swapped for it.
    fake.0.insert("synthetic", vec!["rss_stat_throttled"]);
    let sel = o.resolve(&fake, &|_, _| true);
    assert!(sel.events.contains(&ev("synthetic", "rss_stat_throttled")));
    assert!(!sel.events.contains(&ev("kmem", "rss_stat")));
    assert!(sel.failed.is_empty(), "{:?}", sel.failed);
}

//! The raw pages recorded on a real kernel (committed under
//! `tests/fixtures/ftrace/`) parsed by our page walker and format decoder
//! and checked event by event against the kernel's own text output of the
//! same buffer, so the parser is proven on any machine, tracefs or not.
//! `rerecord_fixtures` (ignored, root) records them again.

use crate::ftrace_common;

use ftrace_common::{Recording, Workload, compare, fixture_dir, record, record_workload};

#[test]
fn every_fixture_event_matches_the_kernel_text() {
    let rec = Recording::load(&fixture_dir()).expect("fixtures");
    let cmp = compare(&rec).unwrap_or_else(|e| panic!("{e}"));
    println!("kernel {}: {cmp:?}", rec.kernel);
    // The workload is in there: both ping-pong threads, the spawned
    // process, both markers, a generic (irq) event.
    assert!(cmp.prints >= 3, "{cmp:?}");
    for name in [
        "sched_switch",
        "sched_waking",
        "sched_wakeup_new",
        "sched_process_fork",
        "sched_process_exec",
        "sched_process_exit",
        "task_newtask",
        "print",
    ] {
        assert!(
            cmp.by_name.get(name).copied().unwrap_or(0) > 0,
            "no {name}: {cmp:?}"
        );
    }
    assert!(rec.text.contains("zt-ping") && rec.text.contains("zt-pong"));
    assert!(cmp.fields_rendered + cmp.prints == cmp.events || cmp.fields_rendered > 0);
}

/// The overflow fixture: the writer overwrote unread pages; the pages'
/// stored missed-events counts add up to the kernel's per-CPU `overrun`,
/// and what is left matches the text.
#[test]
fn overflow_fixture_counts_what_the_kernel_overwrote() {
    let rec = Recording::load(&fixture_dir().join("overflow")).expect("fixtures");
    let cmp = compare(&rec).unwrap_or_else(|e| panic!("{e}"));
    println!("{cmp:?}, overrun {}", rec.overrun);
    assert!(rec.overrun > 0);
    assert_eq!(cmp.missed_unknown, 0);
    assert_eq!(cmp.missed, rec.overrun);
    assert!(cmp.prints > 100, "{cmp:?}");
}

/// Re-records the fixtures on this machine (root, tracefs): run with
/// `cargo test -p zerotrace-probes --test all -- --ignored ftrace_fixture::`.
#[test]
#[ignore = "re-records the committed fixtures; needs root and tracefs"]
fn rerecord_fixtures() {
    let name = format!("zt-fixture-{}", std::process::id());
    let rec = record(&name).unwrap_or_else(|e| panic!("{e}"));
    let cmp = compare(&rec).unwrap_or_else(|e| panic!("fresh recording does not compare: {e}"));
    println!("{cmp:?}");
    let dir = fixture_dir();
    std::fs::create_dir_all(&dir).expect("mkdir");
    rec.save(&dir).expect("save");
    let rec = record_workload(&format!("{name}-overflow"), Workload::Overflow)
        .unwrap_or_else(|e| panic!("{e}"));
    let cmp = compare(&rec).unwrap_or_else(|e| panic!("fresh overflow does not compare: {e}"));
    assert_eq!(cmp.missed, rec.overrun, "{cmp:?}");
    let dir = dir.join("overflow");
    std::fs::create_dir_all(&dir).expect("mkdir");
    rec.save(&dir).expect("save");
}

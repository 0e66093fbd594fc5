//! The page parser against the running kernel: a known workload recorded
//! into a dedicated tracefs instance (removed afterwards, also on failure),
//! its raw pages parsed by us and checked event by event against the
//! kernel's text output of the same buffer. Where tracefs cannot be had it
//! says so in one line and passes, unless `ZEROTRACE_REQUIRE_TRACEFS=1`.
//! (Its own test binary, not a module of `all/`: it records from the kernel,
//! which other tests' work beside it would disturb.)

mod ftrace_common;

use ftrace_common::{Workload, compare, record, record_workload, tracefs};

#[test]
fn live_recording_matches_the_kernel_text() {
    let required = std::env::var("ZEROTRACE_REQUIRE_TRACEFS").is_ok_and(|v| v == "1");
    if let Err(why) = tracefs() {
        assert!(
            !required,
            "ZEROTRACE_REQUIRE_TRACEFS=1 but tracefs is unavailable: {why}"
        );
        println!("ftrace_live did not run: {why}");
        return;
    }
    let name = format!("zt-live-{}", std::process::id());
    let rec = match record(&name) {
        Ok(r) => r,
        Err(why) if !required && why.contains("Permission denied") => {
            println!("ftrace_live did not run: {why}");
            return;
        }
        Err(why) => panic!("recording failed: {why}"),
    };
    let cmp = compare(&rec).unwrap_or_else(|e| panic!("{e}"));
    println!("kernel {}: {cmp:?}", rec.kernel);
    assert!(cmp.prints >= 3, "{cmp:?}");
    assert!(
        cmp.by_name.get("sched_switch").copied().unwrap_or(0) > 0,
        "{cmp:?}"
    );
    assert!(
        !std::path::Path::new(ftrace_common::TRACEFS)
            .join("instances")
            .join(&name)
            .exists(),
        "instance left behind"
    );
}

/// An 8 KiB buffer overwritten by 2000 markers: the pages we read say how
/// many events were lost, and that is the kernel's own overrun count.
#[test]
fn live_overflow_counts_what_the_kernel_overwrote() {
    let required = std::env::var("ZEROTRACE_REQUIRE_TRACEFS").is_ok_and(|v| v == "1");
    if let Err(why) = tracefs() {
        assert!(
            !required,
            "ZEROTRACE_REQUIRE_TRACEFS=1 but tracefs is unavailable: {why}"
        );
        println!("ftrace_live overflow did not run: {why}");
        return;
    }
    let name = format!("zt-live-overflow-{}", std::process::id());
    let rec = match record_workload(&name, Workload::Overflow) {
        Ok(r) => r,
        Err(why) if !required && why.contains("Permission denied") => {
            println!("ftrace_live overflow did not run: {why}");
            return;
        }
        Err(why) => panic!("recording failed: {why}"),
    };
    let cmp = compare(&rec).unwrap_or_else(|e| panic!("{e}"));
    println!("{cmp:?}, overrun {}", rec.overrun);
    assert!(rec.overrun > 0, "nothing was overwritten");
    assert_eq!(cmp.missed_unknown, 0);
    assert_eq!(cmp.missed, rec.overrun);
}

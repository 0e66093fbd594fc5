use protozero::HeapWriter;

use super::*;
use zerotrace_protos::protos::{FollowerEvent, PerfEventConfig};

fn config(f: impl FnOnce(&mut PerfEventConfig<'_>)) -> Vec<u8> {
    let mut w = HeapWriter::new();
    {
        let mut c = PerfEventConfig::from_message(w.root());
        f(&mut c);
    }
    w.finish().unwrap()
}

/// Fields newer than the schema here, read by number: `modifiers`
/// (packed or not), a raw event's `pmu_name`, `ignore_open_failure`,
/// and `cpuid` refused by name.
#[test]
fn newer_fields_are_read_or_refused_by_name() {
    let bytes = config(|c| {
        {
            let mut tb = c.begin_timebase();
            tb.set_frequency(100);
            // modifiers: user space and kernel, unpacked.
            tb.message().append_varint(12, 1);
            tb.message().append_varint(12, 2);
        }
        {
            let mut f = c.add_followers();
            f.set_counter(Counter::SwPageFaults);
            // modifiers: user space only, packed.
            f.message().append_bytes(5, &[1]);
        }
        {
            let mut f = c.add_followers();
            let mut r = f.begin_raw_event();
            r.set_config(0xc0);
            // pmu_name.
            r.message().append_string(5, "software");
        }
        c.message().append_varint(21, 1);
        c.message().append_string(22, "GenuineIntel-6-55");
    });
    let o = PerfOptions::from_config(&bytes).unwrap();
    let m = |user, kernel, hypervisor| {
        Some(Modifiers {
            user,
            kernel,
            hypervisor,
        })
    };
    assert_eq!(o.timebase.modifiers, m(true, true, false));
    assert_eq!(o.followers[0].modifiers, m(true, false, false));
    assert_eq!(
        o.followers[1].kind,
        EventKind::Raw {
            kind: 0,
            pmu: Some("software".into()),
            config: 0xc0,
            config1: 0,
            config2: 0
        }
    );
    assert!(o.ignore_open_failure);
    assert_eq!(o.refused, ["cpuid"]);
    // Nothing said: the defaults.
    let plain = PerfOptions::from_config(&config(|c| {
        c.begin_timebase().set_frequency(100);
    }))
    .unwrap();
    assert_eq!(plain.timebase.modifiers, None);
    assert!(!plain.ignore_open_failure);
    // A raw event with both its type and a PMU name.
    let both = config(|c| {
        let mut tb = c.begin_timebase();
        let mut r = tb.begin_raw_event();
        r.set_type(4);
        r.message().append_string(5, "cpu");
    });
    assert_eq!(
        PerfOptions::from_config(&both),
        Err(PerfConfigError::RawTypeAndPmu)
    );
    // A modifier upstream does not name: left out, as upstream's
    // parser leaves it, and refused by name.
    let bad = config(|c| {
        let mut tb = c.begin_timebase();
        tb.message().append_varint(12, 9);
        tb.message().append_varint(12, 1);
    });
    let o = PerfOptions::from_config(&bad).unwrap();
    assert_eq!(o.timebase.modifiers, m(true, false, false));
    assert_eq!(o.refused, ["timebase.modifiers"]);
}

/// Every field the table refuses is refused by name when set; the one
/// it keeps is accepted without a word; fields newer than the table
/// are named by number.
#[test]
fn every_refused_field_is_refused_by_name() {
    use crate::perf::config_fields::{Handling, PERF_CONFIG_FIELDS};
    for &(message, _, name, handling, _) in PERF_CONFIG_FIELDS {
        if handling != Handling::Refused {
            continue;
        }
        let (bytes, said) = match (message, name) {
            ("PerfEventConfig", "cpuid") => (
                config(|c| {
                    c.message().append_string(22, "GenuineIntel-6-55");
                }),
                "cpuid",
            ),
            ("PerfEventConfig", "target_installed_by") => (
                config(|c| {
                    c.add_target_installed_by("com.android.vending");
                }),
                "target_installed_by",
            ),
            ("Timebase", "poll_period_ms") => (
                config(|c| {
                    c.begin_timebase().set_poll_period_ms(10);
                }),
                "timebase.poll_period_ms",
            ),
            other => panic!("no test value for refused field {other:?}"),
        };
        let o = PerfOptions::from_config(&bytes).unwrap();
        assert_eq!(o.refused, [said], "{message}.{name}");
        assert!(o.refusal_lines()[0].contains(name));
    }
    let kept = config(|c| {
        c.set_remote_descriptor_timeout_ms(250);
    });
    assert!(PerfOptions::from_config(&kept).unwrap().refused.is_empty());
    let newer = config(|c| {
        c.begin_timebase().message().append_varint(77, 1);
    });
    let o = PerfOptions::from_config(&newer).unwrap();
    assert_eq!(o.refused, ["Timebase.field 77"]);
    assert!(o.refusal_lines()[0].starts_with("PerfEventConfig.Timebase.field 77: "));
}

#[test]
fn an_empty_config_takes_upstreams_defaults() {
    let o = PerfOptions::from_config(&[]).unwrap();
    assert_eq!(o.timebase.kind, EventKind::Counter(Counter::SwCpuClock));
    assert_eq!(o.interval, Interval::Frequency(DEFAULT_FREQUENCY_HZ));
    assert_eq!(o.clock, PerfClock::Boottime);
    assert_eq!(o.callstacks, None, "no callstack_sampling: counts only");
    assert_eq!(
        (o.ring_buffer_pages, o.read_period_ms),
        (DEFAULT_RING_BUFFER_PAGES, DEFAULT_READ_PERIOD_MS)
    );
    assert!(o.refused.is_empty());
}

#[test]
fn the_off_cpu_config_reads_as_a_sched_switch_tracepoint_with_stacks() {
    let follower = {
        let mut w = HeapWriter::new();
        FollowerEvent::from_message(w.root())
            .set_counter(Counter::SwPageFaults)
            .set_name("faults");
        w.finish().unwrap()
    };
    let bytes = config(|c| {
        {
            let mut tb = c.begin_timebase();
            tb.set_period(1);
            tb.begin_tracepoint()
                .set_name("sched:sched_switch")
                .set_filter("prev_state != 0");
        }
        {
            let mut cs = c.begin_callstack_sampling();
            cs.set_kernel_frames(true);
            cs.begin_scope()
                .add_target_pid(42)
                .add_target_cmdline("/usr/bin/e*")
                .set_process_shard_count(4);
        }
        c.add_followers_raw(&follower);
        c.set_ring_buffer_pages(64)
            .add_target_cpu(1)
            .add_target_cpu(0);
    });
    let o = PerfOptions::from_config(&bytes).unwrap();
    assert_eq!(o.interval, Interval::Period(1));
    assert_eq!(
        o.timebase.kind,
        EventKind::Tracepoint {
            config_name: "sched:sched_switch".into(),
            group: "sched".into(),
            name: "sched_switch".into(),
            filter: Some("prev_state != 0".into())
        }
    );
    let cs = o.callstacks.unwrap();
    assert!(cs.kernel_frames);
    assert_eq!(cs.user_frames, UserFrames::Dwarf);
    assert_eq!(cs.scope.target_pids, [42]);
    assert_eq!(cs.scope.target_cmdlines, ["/usr/bin/e*"]);
    assert_eq!(cs.scope.process_shard_count, 4);
    assert_eq!(o.followers.len(), 1);
    assert_eq!(o.followers[0].name.as_deref(), Some("faults"));
    assert_eq!(o.target_cpus, [0, 1]);
    assert_eq!(o.ring_buffer_pages, 64);
}

#[test]
fn what_upstream_rejects_is_rejected_and_what_we_lack_is_refused_by_name() {
    let pages = config(|c| {
        c.set_ring_buffer_pages(3);
    });
    assert_eq!(
        PerfOptions::from_config(&pages),
        Err(PerfConfigError::RingBufferPages(3))
    );
    // The cap: taken at it, refused past it (a power of two or not).
    for (n, ok) in [
        (MAX_RING_BUFFER_PAGES, true),
        (MAX_RING_BUFFER_PAGES * 2, false),
        (u32::MAX, false),
    ] {
        let got = PerfOptions::from_config(&config(|c| {
            c.set_ring_buffer_pages(n);
        }));
        if ok {
            assert_eq!(got.map(|o| o.ring_buffer_pages), Ok(n));
        } else {
            assert_eq!(got, Err(PerfConfigError::RingBufferTooLarge(n)));
        }
    }
    let tp = config(|c| {
        c.begin_timebase()
            .begin_tracepoint()
            .set_name("sched_switch");
    });
    assert_eq!(
        PerfOptions::from_config(&tp),
        Err(PerfConfigError::TracepointName("sched_switch".into()))
    );
    let unknown = config(|c| {
        c.begin_timebase().set_counter_raw(99);
    });
    assert_eq!(
        PerfOptions::from_config(&unknown),
        Err(PerfConfigError::UnknownCounter(99))
    );
    let refused = config(|c| {
        c.begin_timebase().set_poll_period_ms(10);
        c.add_target_installed_by("com.android.vending");
    });
    let o = PerfOptions::from_config(&refused).unwrap();
    assert_eq!(
        o.refused,
        ["timebase.poll_period_ms", "target_installed_by"]
    );
    assert!(o.refusal_lines()[0].starts_with("PerfEventConfig.timebase.poll_period_ms: "));
}

/// BOOTTIME unless the config names a clock (the kernel's refusal of
/// it for an event is handled where the event is opened); a clock the
/// schema does not name is refused by name, not mapped to another.
#[test]
fn the_clock_is_boottime_unless_named_and_an_unknown_one_is_refused() {
    let clock = |n: Option<i32>, counter: Counter| {
        PerfOptions::from_config(&config(|c| {
            let mut tb = c.begin_timebase();
            tb.set_counter(counter);
            if let Some(n) = n {
                tb.set_timestamp_clock_raw(n);
            }
        }))
        .unwrap()
    };
    for counter in [Counter::SwCpuClock, Counter::HwCpuCycles] {
        let o = clock(None, counter);
        assert_eq!((o.clock, o.clock_explicit), (PerfClock::Boottime, false));
        let o = clock(Some(0), counter);
        assert_eq!((o.clock, o.clock_explicit), (PerfClock::Boottime, false));
    }
    for (n, c) in [
        (1, PerfClock::Realtime),
        (2, PerfClock::Monotonic),
        (3, PerfClock::MonotonicRaw),
        (4, PerfClock::Boottime),
    ] {
        let o = clock(Some(n), Counter::SwCpuClock);
        assert_eq!((o.clock, o.clock_explicit), (c, true));
        assert!(o.refused.is_empty());
    }
    let o = clock(Some(9), Counter::SwCpuClock);
    assert_eq!(o.refused, ["timebase.timestamp_clock"]);
    assert_eq!((o.clock, o.clock_explicit), (PerfClock::Boottime, false));
    assert!(o.refusal_lines()[0].contains("timestamp_clock"));
}

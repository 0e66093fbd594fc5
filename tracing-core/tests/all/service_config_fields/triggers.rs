//! Trigger configs and limits as Perfetto checks and applies them, and the
//! clone and bugreport arguments.

use super::*;

/// `max_per_24_h` counts hits of a trigger's name across sessions over a
/// sliding day; a hit reaching several sessions counts once.
#[test]
fn max_per_24_h_counts_across_sessions() {
    let (mut h, _world) = sleepy();
    let p = h.producer("p", 0);
    let a = h.consumer(1);
    h.enable(a, stop_on(&[("go", 1, 0.0)]));
    let b = h.consumer(2);
    h.enable(b, stop_on(&[("go", 1, 0.0)]));
    fire(&mut h, p, "go");
    assert_eq!(state_of(&h, a), SessionState::Stopped);
    assert_eq!(state_of(&h, b), SessionState::Stopped, "one hit for both");
    let limited = h.consumer(3);
    h.enable(limited, stop_on(&[("go", 1, 0.0)]));
    let other = h.consumer(4);
    h.enable(other, stop_on(&[("other", 1, 0.0)]));
    fire(&mut h, p, "go");
    assert_eq!(
        state_of(&h, limited),
        SessionState::Started,
        "a second hit in the day"
    );
    fire(&mut h, p, "other");
    assert_eq!(
        state_of(&h, other),
        SessionState::Stopped,
        "counted by name"
    );
    let unlimited = h.consumer(5);
    h.enable(unlimited, stop_on(&[("go", 0, 0.0)]));
    let two = h.consumer(6);
    h.enable(two, stop_on(&[("go", 2, 0.0)]));
    fire(&mut h, p, "go");
    assert_eq!(
        state_of(&h, unlimited),
        SessionState::Stopped,
        "0: no limit"
    );
    assert_eq!(
        state_of(&h, two),
        SessionState::Stopped,
        "the second hit of the day"
    );
    assert_eq!(state_of(&h, limited), SessionState::Started);
    let third = h.consumer(7);
    h.enable(third, stop_on(&[("go", 2, 0.0)]));
    fire(&mut h, p, "go");
    assert_eq!(
        state_of(&h, third),
        SessionState::Started,
        "two hits today already"
    );
    h.advance_ms(24 * 3600 * 1000);
    fire(&mut h, p, "go");
    assert_eq!(state_of(&h, limited), SessionState::Stopped, "a day later");
    assert_eq!(state_of(&h, third), SessionState::Stopped);
}

/// `skip_probability`: a hit is dropped when the environment's random
/// number in [0, 1) is under it; 0 draws no number.
#[test]
fn skip_probability_uses_the_random_source() {
    let (mut h, world) = sleepy();
    let p = h.producer("p", 0);
    let never = h.consumer(1);
    h.enable(never, stop_on(&[("never", 0, 0.0)]));
    world.randoms.borrow_mut().extend([0.3, 0.7]);
    fire(&mut h, p, "never");
    assert_eq!(state_of(&h, never), SessionState::Stopped);
    assert_eq!(world.randoms.borrow().len(), 2, "no number drawn");
    let c = h.consumer(2);
    h.enable(c, stop_on(&[("go", 0, 0.5)]));
    fire(&mut h, p, "go");
    assert_eq!(state_of(&h, c), SessionState::Started, "0.3 < 0.5: skipped");
    fire(&mut h, p, "go");
    assert_eq!(state_of(&h, c), SessionState::Stopped, "0.7: taken");
    let bad = h.consumer(3);
    let r = h.enable(bad, stop_on(&[("go", 0, 1.5)]));
    let err = enable_error(&mut h, bad, r).expect("refused");
    assert!(err.contains("skip_probability"), "{err}");
}

/// `use_clone_snapshot_if_available` on a STOP_TRACING config makes it a
/// CLONE_SNAPSHOT session: a trigger tells the consumer and the session
/// goes on. With another mode it is refused.
#[test]
fn use_clone_snapshot_if_available() {
    let (mut h, _world) = sleepy();
    let p = h.producer("p", 0);
    let cfg = |mode: i32| {
        config(&[(64, false)], &[], |c| {
            let mut t = c.begin_trigger_config();
            t.set_trigger_mode_raw(mode);
            t.set_use_clone_snapshot_if_available(true);
            t.set_trigger_timeout_ms(60_000);
            t.add_triggers().set_name("snap");
        })
    };
    let c = h.consumer(1);
    h.enable(c, cfg(2));
    let observe = h.ccall(c, ConsumerCall::ObserveEvents { types: vec![4] });
    fire(&mut h, p, "snap");
    assert_eq!(state_of(&h, c), SessionState::Started, "not stopped");
    let hits = h.replies(c, observe);
    assert_eq!(hits.len(), 1, "{hits:?}");
    let bad = h.consumer(2);
    let r = h.enable(bad, cfg(1));
    let err = enable_error(&mut h, bad, r).expect("refused");
    assert!(err.contains("use_clone_snapshot_if_available"), "{err}");
}

/// A bugreport clone (asked, or by the highest bugreport score) tells the
/// producers in the flush's CloneTarget; a plain clone does not.
#[test]
fn bugreport_clones_flush_with_the_bugreport_target() {
    let mut h = Harness::new();
    let p = h.producer("p", 1);
    h.register(p, "ds", false, false);
    let owner = h.consumer(1);
    h.enable(
        owner,
        config(&[(64, false)], &[("ds", 0)], |c| {
            c.set_bugreport_score(5);
        }),
    );
    let sid = h.svc.session_of(owner).unwrap().0;
    let flush_flags = |h: &mut Harness| {
        h.take_commands(p)
            .iter()
            .find_map(|c| {
                zerotrace_protos::protos::GetAsyncCommandResponseDecoder::new(c)
                    .flush()
                    .and_then(|f| f.flags())
            })
            .expect("a flush")
    };
    h.take_commands(p);
    for (session_id, for_bugreport, bugreport) in [
        (Some(sid), false, false),
        (Some(sid), true, true),
        (Some(u64::MAX), false, true),
    ] {
        let c = h.consumer(1);
        h.ccall(
            c,
            ConsumerCall::CloneSession(zerotrace_core::service::CloneArgs {
                session_id,
                for_bugreport,
                ..Default::default()
            }),
        );
        let flags = flush_flags(&mut h);
        assert_eq!(flags & 0xff, 3 | 1 << 4, "a clone flush by the service");
        assert_eq!(
            flags >> 8 & 0xf,
            bugreport as u64,
            "{session_id:?} {for_bugreport}"
        );
    }
}

/// Trigger configs are checked as Perfetto's service checks them.
#[test]
fn trigger_configs_are_checked_as_perfettos() {
    let trig = |extra: &dyn Fn(&mut TraceConfig<'_>), mode: i32, names: &[&str]| {
        let raw = config(&[(64, false)], &[], |c| {
            extra(c);
            let mut t = c.begin_trigger_config();
            t.set_trigger_mode_raw(mode);
            t.set_trigger_timeout_ms(10_000);
            for n in names {
                t.add_triggers().set_name(n);
            }
        });
        SessionConfig::parse(&raw, &Limits::default()).map_err(|e| e.to_string())
    };
    assert!(trig(&|_| {}, 2, &["a", "b"]).is_ok());
    let err = trig(&|_| {}, 2, &["a", "a"]).unwrap_err();
    assert!(err.contains("duplicate"), "{err}");
    let err = trig(
        &|c| {
            c.set_duration_ms(5);
        },
        1,
        &["a"],
    )
    .unwrap_err();
    assert!(err.contains("duration_ms"), "{err}");
    for mode in [2, 4] {
        let err = trig(
            &|c| {
                c.set_write_into_file(true);
            },
            mode,
            &["a"],
        )
        .unwrap_err();
        assert!(err.contains("write_into_file"), "{err}");
    }
    assert!(
        trig(
            &|c| {
                c.set_write_into_file(true);
            },
            1,
            &["a"]
        )
        .is_ok()
    );
    let long = config(&[(64, false)], &[], |c| {
        let mut t = c.begin_trigger_config();
        t.set_trigger_mode_raw(2);
        t.set_trigger_timeout_ms(8 * 24 * 3600 * 1000);
    });
    assert!(SessionConfig::parse(&long, &Limits::default()).is_err());
}

/// `bugreport_filename` takes only [a-zA-Z0-9-_.], as Perfetto's service.
#[test]
fn bugreport_filename_is_checked() {
    let named = |name: &str| {
        let raw = config(&[(64, false)], &[], |c| {
            c.set_bugreport_filename(name);
        });
        SessionConfig::parse(&raw, &Limits::default()).map_err(|e| e.to_string())
    };
    assert!(named("my-trace_1.pftrace").is_ok());
    let err = named("../etc/passwd").unwrap_err();
    assert!(err.contains("bugreport_filename"), "{err}");
}

/// A CLONE_SNAPSHOT trigger's hit reaches the consumer after the trigger's
/// stop delay, counted awake (MONOTONIC), as Perfetto's delayed task.
#[test]
fn clone_trigger_hits_wait_for_their_delay_awake() {
    let (mut h, world) = sleepy();
    let p = h.producer("p", 0);
    let c = h.consumer(1);
    h.enable(
        c,
        config(&[(64, false)], &[], |c| {
            let mut t = c.begin_trigger_config();
            t.set_trigger_mode_raw(4);
            t.set_trigger_timeout_ms(600_000);
            t.add_triggers().set_name("snap").set_stop_delay_ms(2_000);
        }),
    );
    let observe = h.ccall(c, ConsumerCall::ObserveEvents { types: vec![4] });
    h.pcall(
        p,
        ProducerCall::ActivateTriggers {
            names: vec!["snap".into()],
        },
    );
    h.advance_ms(1_000);
    assert!(h.replies(c, observe).is_empty(), "not yet");
    suspend(&mut h, &world, 10_000);
    assert!(h.replies(c, observe).is_empty(), "asleep");
    h.advance_ms(1_000);
    let hits = h.replies(c, observe);
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert_eq!(state_of(&h, c), SessionState::Started);
    // A hit still waiting when the session stops reaches its consumer.
    h.pcall(
        p,
        ProducerCall::ActivateTriggers {
            names: vec!["snap".into()],
        },
    );
    h.ccall(c, ConsumerCall::DisableTracing);
    assert_eq!(state_of(&h, c), SessionState::Stopped);
    h.advance_ms(2_000);
    assert_eq!(h.replies(c, observe).len(), 1, "after the stop");
}

/// Only the first STOP_TRACING trigger sets the stop (a later one with a
/// shorter delay does not hasten it), as Perfetto's service.
#[test]
fn the_first_stop_trigger_sets_the_stop() {
    let (mut h, _world) = sleepy();
    let p = h.producer("p", 0);
    let c = h.consumer(1);
    h.enable(
        c,
        config(&[(64, false)], &[], |c| {
            let mut t = c.begin_trigger_config();
            t.set_trigger_mode_raw(2);
            t.set_trigger_timeout_ms(600_000);
            t.add_triggers().set_name("slow").set_stop_delay_ms(10_000);
            t.add_triggers().set_name("fast").set_stop_delay_ms(1_000);
        }),
    );
    fire(&mut h, p, "slow");
    fire(&mut h, p, "fast");
    h.advance_ms(5_000);
    assert_eq!(state_of(&h, c), SessionState::Started);
    h.advance_ms(5_000);
    assert_eq!(state_of(&h, c), SessionState::Stopped);
}

/// A STOP_TRACING session that no trigger stopped ends at its trigger
/// timeout as at the end of a duration (Perfetto runs it as one): flushed,
/// then stopped.
#[test]
fn stop_trigger_timeout_flushes_then_stops() {
    let (mut h, _world) = sleepy();
    let p = h.producer("p", 0);
    h.register(p, "ds", false, false);
    let c = h.consumer(1);
    h.enable(
        c,
        config(&[(64, false)], &[("ds", 0)], |c| {
            let mut t = c.begin_trigger_config();
            t.set_trigger_mode_raw(2);
            t.set_trigger_timeout_ms(10_000);
            t.add_triggers().set_name("never");
        }),
    );
    h.take_commands(p);
    h.advance_ms(10_000);
    let kinds: Vec<&str> = h
        .take_commands(p)
        .iter()
        .filter_map(|c| {
            let d = zerotrace_protos::protos::GetAsyncCommandResponseDecoder::new(c);
            if d.has_flush() {
                Some("flush")
            } else if d.has_stop_data_source() {
                Some("stop")
            } else {
                None
            }
        })
        .collect();
    assert_eq!(kinds.first(), Some(&"flush"), "{kinds:?}");
    h.advance_ms(6_000);
    assert_eq!(state_of(&h, c), SessionState::Stopped);
}

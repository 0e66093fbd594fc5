//! Which clock each timer runs on: `duration_ms`, trigger delays and
//! timeouts, snapshots, and the suspend-clock preference handed to data
//! sources.

use super::*;

/// `duration_ms` counts time awake (MONOTONIC) unless the config prefers
/// the suspend clock (BOOTTIME).
#[test]
fn duration_runs_on_monotonic_unless_suspend_clock_is_preferred() {
    let (mut h, world) = sleepy();
    let awake = h.consumer(1);
    h.enable(
        awake,
        config(&[(64, false)], &[], |c| {
            c.set_duration_ms(10_000);
        }),
    );
    let boot = h.consumer(2);
    h.enable(
        boot,
        config(&[(64, false)], &[], |c| {
            c.set_duration_ms(10_000);
            c.set_prefer_suspend_clock_for_duration(true);
        }),
    );
    h.advance_ms(2_000);
    suspend(&mut h, &world, 20_000);
    assert_eq!(state_of(&h, awake), SessionState::Started, "slept through");
    assert_eq!(state_of(&h, boot), SessionState::Stopped, "sleep counts");
    h.advance_ms(7_900);
    assert_eq!(state_of(&h, awake), SessionState::Started, "9.9 s awake");
    h.advance_ms(200);
    assert_eq!(state_of(&h, awake), SessionState::Stopped, "10 s awake");
}

/// A STOP_TRACING trigger's stop delay runs on MONOTONIC, flag or not (as
/// Perfetto's: a plain delayed task); a START_TRACING trigger's stop delay
/// becomes the session's duration, and follows the flag.
#[test]
fn trigger_stop_delays_and_their_clocks() {
    let (mut h, world) = sleepy();
    let p = h.producer("p", 0);
    let stop = h.consumer(1);
    h.enable(stop, triggered(2, true));
    let start_awake = h.consumer(2);
    h.enable(start_awake, triggered(1, false));
    let start_boot = h.consumer(3);
    h.enable(start_boot, triggered(1, true));
    assert_eq!(state_of(&h, start_awake), SessionState::Configured);
    h.pcall(
        p,
        ProducerCall::ActivateTriggers {
            names: vec!["go".into()],
        },
    );
    assert_eq!(state_of(&h, start_awake), SessionState::Started);
    suspend(&mut h, &world, 60_000);
    assert_eq!(state_of(&h, stop), SessionState::Started);
    assert_eq!(state_of(&h, start_awake), SessionState::Started);
    assert_eq!(state_of(&h, start_boot), SessionState::Stopped);
    h.advance_ms(5_000);
    assert_eq!(state_of(&h, stop), SessionState::Stopped);
    assert_eq!(state_of(&h, start_awake), SessionState::Stopped);
}

/// The trigger timeout of a STOP_TRACING session is its duration in
/// Perfetto, so it follows the flag too; a START_TRACING one's does not.
#[test]
fn trigger_timeouts_and_their_clocks() {
    let (mut h, world) = sleepy();
    let stop_boot = h.consumer(1);
    h.enable(stop_boot, triggered(2, true));
    let stop_awake = h.consumer(2);
    h.enable(stop_awake, triggered(2, false));
    let start_boot = h.consumer(3);
    h.enable(start_boot, triggered(1, true));
    suspend(&mut h, &world, 700_000);
    assert_eq!(state_of(&h, stop_boot), SessionState::Stopped);
    assert_eq!(state_of(&h, stop_awake), SessionState::Started);
    assert_eq!(state_of(&h, start_boot), SessionState::Configured);
    h.advance_ms(600_000);
    assert_eq!(state_of(&h, stop_awake), SessionState::Stopped);
    assert_eq!(state_of(&h, start_boot), SessionState::Stopped);
}

/// The periodic clock snapshot's timer runs on MONOTONIC unless
/// `builtin_data_sources.prefer_suspend_clock_for_snapshot`.
#[test]
fn snapshot_timer_follows_prefer_suspend_clock_for_snapshot() {
    for (flag, at_wake) in [(false, 0), (true, 1)] {
        let (mut h, world) = sleepy();
        let c = h.consumer(1);
        h.enable(
            c,
            config(&[(64, false)], &[], |c| {
                c.begin_builtin_data_sources()
                    .set_snapshot_interval_ms(1_000)
                    .set_prefer_suspend_clock_for_snapshot(flag);
            }),
        );
        h.advance_ms(500);
        let before = world.snapshots.get();
        suspend(&mut h, &world, 5_000);
        assert_eq!(world.snapshots.get() - before, at_wake, "flag {flag}");
        h.advance_ms(1_000);
        assert!(world.snapshots.get() - before > at_wake, "flag {flag}");
    }
}

/// The producers' DataSourceConfig says `prefer_suspend_clock_for_duration`
/// when the session does (and only then, as Perfetto's service).
#[test]
fn data_source_config_carries_the_suspend_clock_preference() {
    let mut h = Harness::new();
    let p = h.producer("p", 1);
    h.register(p, "ds", false, false);
    for (uid, flag) in [(1, true), (2, false)] {
        h.take_commands(p);
        let c = h.consumer(uid);
        h.enable(
            c,
            config(&[(64, false)], &[("ds", 0)], |c| {
                c.set_duration_ms(1_000);
                if flag {
                    c.set_prefer_suspend_clock_for_duration(true);
                }
            }),
        );
        let setup = h
            .take_commands(p)
            .into_iter()
            .find_map(|c| {
                zerotrace_protos::protos::GetAsyncCommandResponseDecoder::new(&c)
                    .setup_data_source()
                    .and_then(|s| s.config_bytes().map(<[u8]>::to_vec))
            })
            .expect("a setup");
        let field = Decoder::new(&setup)
            .find_last(122)
            .and_then(|f| f.as_u64().ok());
        assert_eq!(field, flag.then_some(1), "flag {flag}");
    }
}

//! TraceConfig fields that the service core must act on as Perfetto's
//! service does on Linux, or refuse by name: the guardrails of
//! `enable_extra_guardrails`, the clocks of `duration_ms`, trigger delays and
//! clock snapshots, the trigger limits, the clone arguments, and the rule
//! that every field of every message from TraceConfig down to
//! DataSourceConfig has a decision. Driven through the sans-IO core on a
//! fake clock.

use crate::service_support;

use std::cell::{Cell, RefCell};
use std::collections::{HashMap, HashSet, VecDeque};

use protozero::Decoder;
use std::rc::Rc;
use std::sync::Arc;

use service_support::*;
use zerotrace_core::service::__private::SessionConfig;
use zerotrace_core::service::Limits;
use zerotrace_core::service::{
    ClockReading, ConsumerCall, ConsumerId, ProducerCall, ProducerId, Reply, ServiceEnv,
    ServiceOptions, SessionState, TracingService,
};
use zerotrace_core::shm::SharedMemoryRegion;
use zerotrace_protos::protos::{EnableTracingResponseDecoder, TraceConfig};

/// The error of an EnableTracing reply, if it failed.
fn enable_error(
    h: &mut Harness,
    c: zerotrace_core::service::ConsumerId,
    r: zerotrace_core::service::RequestId,
) -> Option<String> {
    h.replies(c, r).into_iter().find_map(|reply| match reply {
        Reply::Ok { data, .. } => EnableTracingResponseDecoder::new(&data)
            .error()
            .map(str::to_owned),
        Reply::Err(e) => Some(e),
    })
}

fn parse(
    extra: impl FnOnce(&mut TraceConfig<'_>),
    buffers: &[u32],
) -> Result<SessionConfig, String> {
    let mut w = protozero::HeapWriter::new();
    {
        let mut c = TraceConfig::from_message(w.root());
        for &kb in buffers {
            c.add_buffers().set_size_kb(kb);
        }
        extra(&mut c);
    }
    SessionConfig::parse(&w.finish().unwrap(), &Limits::default()).map_err(|e| e.to_string())
}

const MIB_KB: u32 = 1024;

#[test]
fn guardrails_size_multiple_of_four() {
    let guarded = |c: &mut TraceConfig<'_>| {
        c.set_enable_extra_guardrails(true);
    };
    let err = parse(guarded, &[64, 6]).unwrap_err();
    assert!(
        err.contains("multiple of 4") && err.contains("size_kb 6"),
        "{err}"
    );
    assert!(parse(guarded, &[64, 8]).is_ok());
    assert!(parse(|_| {}, &[6]).is_ok(), "only with the guardrails");
}

#[test]
fn guardrails_total_buffer_size_and_its_override() {
    let guarded = |c: &mut TraceConfig<'_>| {
        c.set_enable_extra_guardrails(true);
    };
    // Each under 128 MiB, together over.
    let err = parse(guarded, &[100 * MIB_KB, 100 * MIB_KB]).unwrap_err();
    assert!(err.contains("enable_extra_guardrails"), "{err}");
    assert!(
        parse(guarded, &[64 * MIB_KB, 64 * MIB_KB]).is_ok(),
        "128 MiB is the limit"
    );
    assert!(
        parse(|_| {}, &[100 * MIB_KB, 100 * MIB_KB]).is_ok(),
        "only with the guardrails"
    );
    // The override raises the limit...
    let raised = |kb: u32| {
        move |c: &mut TraceConfig<'_>| {
            c.set_enable_extra_guardrails(true);
            c.begin_guardrail_overrides()
                .set_max_tracing_buffer_size_kb(kb);
        }
    };
    assert!(parse(raised(256 * MIB_KB), &[100 * MIB_KB, 100 * MIB_KB]).is_ok());
    assert!(parse(raised(256 * MIB_KB), &[200 * MIB_KB, 100 * MIB_KB]).is_err());
    // ...and never lowers it.
    assert!(parse(raised(MIB_KB), &[100 * MIB_KB]).is_ok());
}

#[test]
fn guardrails_refuse_deferred_start_and_cap_duration() {
    let err = parse(
        |c| {
            c.set_enable_extra_guardrails(true);
            c.set_deferred_start(true);
        },
        &[64],
    )
    .unwrap_err();
    assert!(err.contains("deferred_start"), "{err}");
    assert!(
        parse(
            |c| {
                c.set_deferred_start(true);
            },
            &[64]
        )
        .is_ok()
    );
    let day = 24 * 3600 * 1000;
    let guarded_for = |ms: u32| {
        move |c: &mut TraceConfig<'_>| {
            c.set_enable_extra_guardrails(true);
            c.set_duration_ms(ms);
        }
    };
    assert!(parse(guarded_for(day), &[64]).is_ok());
    assert!(parse(guarded_for(day + 1), &[64]).is_err());
    assert!(
        parse(
            |c| {
                c.set_duration_ms(day + 1);
            },
            &[64]
        )
        .is_ok()
    );
}

/// A guardrailed session may not reuse the name (the empty one included)
/// of one begun less than 5 minutes before, whether or not that one ended.
#[test]
fn guardrails_space_sessions_of_one_name() {
    let mut h = Harness::new();
    let cfg = |name: &str| {
        config(&[(64, false)], &[], |c| {
            c.set_enable_extra_guardrails(true);
            if !name.is_empty() {
                c.set_unique_session_name(name);
            }
        })
    };
    let start = |h: &mut Harness, uid: u32, name: &str| {
        let c = h.consumer(uid);
        let r = h.enable(c, cfg(name));
        let err = enable_error(h, c, r);
        if err.is_none() {
            h.ccall(c, ConsumerCall::FreeBuffers);
        }
        err
    };
    assert_eq!(start(&mut h, 1, "a"), None);
    let err = start(&mut h, 2, "a").expect("too soon");
    assert!(err.contains("enable_extra_guardrails"), "{err}");
    assert_eq!(start(&mut h, 3, "b"), None, "another name");
    assert_eq!(start(&mut h, 4, ""), None);
    assert!(start(&mut h, 5, "").is_some(), "the empty name counts too");
    // Without the guardrails, no spacing.
    let c = h.consumer(6);
    let r = h.enable(
        c,
        config(&[(64, false)], &[], |c| {
            c.set_unique_session_name("x");
        }),
    );
    assert_eq!(enable_error(&mut h, c, r), None);
    h.ccall(c, ConsumerCall::FreeBuffers);
    h.advance_ms(5 * 60 * 1000 + 1);
    assert_eq!(start(&mut h, 7, "a"), None, "5 minutes later");
}

/// What the sleepy world lets a test set and see.
#[derive(Default)]
struct World {
    /// Nanoseconds the machine has slept: BOOTTIME counts them, MONOTONIC
    /// does not.
    asleep: Cell<u64>,
    /// Clock snapshots taken.
    snapshots: Cell<u32>,
    /// Random numbers to hand out, in order (then 0.5).
    randoms: RefCell<VecDeque<f64>>,
}

/// The fake environment of `service_support`, with MONOTONIC beside its
/// BOOTTIME and an injectable random source.
struct SleepyEnv(FakeEnv, Rc<World>);

impl ServiceEnv for SleepyEnv {
    fn clock_snapshot(&mut self) -> Vec<ClockReading> {
        self.1.snapshots.set(self.1.snapshots.get() + 1);
        self.0.clock_snapshot()
    }
    fn monotonic_ns(&mut self) -> Option<u64> {
        Some(self.0.0.borrow().now - self.1.asleep.get())
    }
    fn random_unit(&mut self) -> f64 {
        self.1.randoms.borrow_mut().pop_front().unwrap_or(0.5)
    }
    fn new_uuid(&mut self) -> u128 {
        self.0.new_uuid()
    }
    fn system_info(&mut self) -> Vec<u8> {
        self.0.system_info()
    }
    fn allocate_smb(
        &mut self,
        producer: ProducerId,
        size: usize,
        page_size: usize,
    ) -> Result<Arc<dyn SharedMemoryRegion>, String> {
        self.0.allocate_smb(producer, size, page_size)
    }
}

fn sleepy() -> (Harness, Rc<World>) {
    let mut h = Harness::new();
    let world = Rc::new(World::default());
    h.shared.borrow_mut().now = h.now;
    h.svc = TracingService::new(
        ServiceOptions {
            service_uid: 1000,
            machine_name: "testbox".into(),
            ..ServiceOptions::default()
        },
        Box::new(SleepyEnv(FakeEnv(h.shared.clone()), world.clone())),
    );
    (h, world)
}

/// The machine sleeps `ms`: BOOTTIME jumps, MONOTONIC does not; timers due
/// on BOOTTIME run as the driver would on waking.
fn suspend(h: &mut Harness, world: &World, ms: u64) {
    world.asleep.set(world.asleep.get() + ms * MS);
    h.now += ms * MS;
    h.shared.borrow_mut().now = h.now;
    h.svc.handle_timeout(h.now);
    h.drain();
}

fn state_of(h: &Harness, c: ConsumerId) -> SessionState {
    let s = h.svc.session_of(c).expect("a session");
    h.svc
        .sessions()
        .into_iter()
        .find(|x| x.id == s)
        .expect("listed")
        .state
}

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

fn triggered(mode: i32, flag: bool) -> Vec<u8> {
    config(&[(64, false)], &[], |c| {
        c.set_prefer_suspend_clock_for_duration(flag);
        let mut t = c.begin_trigger_config();
        t.set_trigger_mode_raw(mode);
        t.set_trigger_timeout_ms(600_000);
        t.add_triggers().set_name("go").set_stop_delay_ms(5_000);
    })
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

fn stop_on(triggers: &[(&str, u32, f64)]) -> Vec<u8> {
    config(&[(64, false)], &[], |c| {
        let mut t = c.begin_trigger_config();
        t.set_trigger_mode_raw(2);
        t.set_trigger_timeout_ms(3 * 24 * 3600 * 1000);
        for &(name, max, skip) in triggers {
            let mut tr = t.add_triggers();
            tr.set_name(name).set_max_per_24_h(max);
            if skip > 0.0 {
                tr.set_skip_probability(skip);
            }
        }
    })
}

fn fire(h: &mut Harness, p: ProducerId, name: &str) {
    h.pcall(
        p,
        ProducerCall::ActivateTriggers {
            names: vec![name.into()],
        },
    );
    h.advance_ms(1);
}

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

/// `buffers.experimental_mode` (TRACE_BUFFER_V2, whose DISCARD differs) is
/// refused by name.
#[test]
fn experimental_buffer_mode_is_refused_by_name() {
    let mut w = protozero::HeapWriter::new();
    {
        let mut c = TraceConfig::from_message(w.root());
        c.add_buffers().set_size_kb(64).set_experimental_mode_raw(1);
    }
    let err = SessionConfig::parse(&w.finish().unwrap(), &Limits::default()).unwrap_err();
    assert!(
        err.to_string().contains("buffers.experimental_mode"),
        "{err}"
    );
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

/// One field of a message in the schema: name, number, type (11 for a
/// message) and the message's full type name.
struct SchemaField {
    name: String,
    number: u32,
    kind: u64,
    type_name: String,
}

/// Every message of the descriptor set the protos crate was generated from,
/// by full name (".perfetto.protos.TraceConfig.BufferConfig").
fn schema() -> HashMap<String, Vec<SchemaField>> {
    fn messages(prefix: &str, msg: &[u8], out: &mut HashMap<String, Vec<SchemaField>>) {
        let d = Decoder::new(msg);
        let name = d.find_last(1).and_then(|f| f.as_str().ok()).unwrap_or("");
        let full = format!("{prefix}.{name}");
        let mut fields = Vec::new();
        for f in Decoder::new(msg).filter_map(Result::ok) {
            match f.id {
                2 => {
                    let fd = Decoder::new(f.as_bytes().unwrap());
                    let text = |id| {
                        fd.find_last(id)
                            .and_then(|f| f.as_str().ok())
                            .unwrap_or("")
                            .to_owned()
                    };
                    fields.push(SchemaField {
                        name: text(1),
                        number: fd.find_last(3).unwrap().as_u32().unwrap(),
                        kind: fd.find_last(5).unwrap().as_u64().unwrap(),
                        type_name: text(6),
                    });
                }
                3 => messages(&full, f.as_bytes().unwrap(), out),
                _ => {}
            }
        }
        out.insert(full, fields);
    }
    let mut out = HashMap::new();
    for file in Decoder::new(zerotrace_protos::FILE_DESCRIPTOR_SET)
        .filter_map(Result::ok)
        .filter(|f| f.id == 1)
    {
        let file = file.as_bytes().unwrap();
        let package = Decoder::new(file)
            .find_last(2)
            .and_then(|f| f.as_str().ok())
            .unwrap_or("");
        for msg in Decoder::new(file)
            .filter_map(Result::ok)
            .filter(|f| f.id == 4)
        {
            messages(&format!(".{package}"), msg.as_bytes().unwrap(), &mut out);
        }
    }
    out
}

/// From TraceConfig down to DataSourceConfig, every field of every message
/// the service looks into is implemented, refused by name or kept (the
/// service's one table, `config::CONFIG_FIELDS`); DataSourceConfig's fields
/// that the table does not name are typed sub-configs, passed through.
#[test]
fn every_config_field_at_every_depth_has_a_decision() {
    use zerotrace_core::service::{CONFIG_FIELDS, FieldDecisions, Handling};
    let schema = schema();
    let table: HashMap<&str, FieldDecisions> = CONFIG_FIELDS.iter().copied().collect();
    let mut missing = Vec::new();
    let mut seen = HashSet::new();
    let mut todo = vec![".perfetto.protos.TraceConfig".to_owned()];
    while let Some(full) = todo.pop() {
        if !seen.insert(full.clone()) {
            continue;
        }
        let short = full.trim_start_matches(".perfetto.protos.");
        let fields = schema
            .get(&full)
            .unwrap_or_else(|| panic!("{full} not in the schema"));
        let Some(decided) = table.get(short) else {
            missing.push(format!("message {short}: no table"));
            continue;
        };
        for entry in decided.iter() {
            assert!(
                fields
                    .iter()
                    .any(|f| f.number == entry.0 && f.name == entry.1),
                "{short}: the table's {} = {} is not in the schema",
                entry.1,
                entry.0
            );
        }
        for f in fields {
            match decided.iter().find(|e| e.0 == f.number) {
                Some((_, _, Handling::Implemented)) if f.kind == 11 => {
                    todo.push(f.type_name.clone());
                }
                Some(_) => {}
                None if short == "DataSourceConfig" && f.kind == 11 => {}
                None => missing.push(format!("{short}.{} = {}", f.name, f.number)),
            }
        }
    }
    assert!(
        missing.is_empty(),
        "fields without a decision: {missing:#?}"
    );
    for (name, _) in CONFIG_FIELDS {
        assert!(
            seen.contains(&format!(".perfetto.protos.{name}")),
            "{name} is not reached"
        );
    }
    // The walk reached the typed sub-configs and let them pass (this
    // schema has a few; the CLI's test walks Perfetto's full one).
    let ds = &schema[".perfetto.protos.DataSourceConfig"];
    assert!(ds.iter().any(|f| f.name == "track_event_config"));
}

/// The refused fields of every table are refused by name.
#[test]
fn refused_nested_fields_are_refused_by_name() {
    let cases: [(&str, Vec<u8>); 4] = [
        (
            "buffers.experimental_mode",
            config(&[], &[], |c| {
                c.add_buffers().set_size_kb(64).set_experimental_mode_raw(1);
            }),
        ),
        (
            "buffers.clear_before_clone",
            config(&[], &[], |c| {
                c.add_buffers().set_size_kb(64).set_clear_before_clone(true);
            }),
        ),
        (
            "enable_concurrent_session_events",
            config(&[(64, false)], &[], |c| {
                c.begin_builtin_data_sources()
                    .set_enable_concurrent_session_events(true);
            }),
        ),
        (
            "data_sources.config.protovm_config",
            config(&[(64, false)], &[], |c| {
                c.add_data_sources()
                    .begin_config()
                    .set_name("ds")
                    .begin_protovm_config()
                    .set_memory_limit_kb(64);
            }),
        ),
    ];
    for (name, raw) in cases {
        let err = SessionConfig::parse(&raw, &Limits::default()).unwrap_err();
        assert!(err.to_string().contains(name), "{name}: {err}");
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

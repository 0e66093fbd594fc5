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

mod clocks;
mod decisions;
mod guardrails;
mod triggers;

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

fn triggered(mode: i32, flag: bool) -> Vec<u8> {
    config(&[(64, false)], &[], |c| {
        c.set_prefer_suspend_clock_for_duration(flag);
        let mut t = c.begin_trigger_config();
        t.set_trigger_mode_raw(mode);
        t.set_trigger_timeout_ms(600_000);
        t.add_triggers().set_name("go").set_stop_delay_ms(5_000);
    })
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

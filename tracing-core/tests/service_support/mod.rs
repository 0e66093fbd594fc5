//! Test support for driving the service core with no sockets: a fake
//! environment (clock, uuids, heap SMBs), simulated producers that write
//! through the real arbiter and TraceWriter, and helpers that read the
//! actions back.
#![allow(dead_code)]

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::mpsc::Receiver;

use protozero::{Decoder, HeapWriter};
use zerotrace_core::producer::{
    ArbiterConfig, BufferExhaustedPolicy, ChannelCommitSink, SharedMemoryArbiter, SinkMessage,
    TraceWriter,
};
use zerotrace_core::service::{
    Action, ClockReading, ConsumerCall, ConsumerId, Peer, PeerIdentity, ProducerCall, ProducerId,
    ProducerTransport, Reply, RequestId, ServiceEnv, ServiceOptions, TracingService,
};
use zerotrace_core::shm::{HeapShm, SharedMemoryRegion};
use zerotrace_protos::protos::{
    GetAsyncCommandResponseDecoder, ReadBuffersResponseDecoder, TraceConfig,
};

pub mod scenario;

/// State the fake environment shares with the test.
#[derive(Default)]
pub struct Shared {
    pub now: u64,
    pub uuids: u128,
    pub smbs: HashMap<ProducerId, Arc<HeapShm>>,
    pub refuse_smb: bool,
}

/// A [`ServiceEnv`] on a fake clock with heap SMBs.
pub struct FakeEnv(pub Rc<RefCell<Shared>>);

impl ServiceEnv for FakeEnv {
    fn clock_snapshot(&mut self) -> Vec<ClockReading> {
        let now = self.0.borrow().now;
        vec![
            ClockReading {
                clock_id: 6,
                timestamp: now,
            },
            ClockReading {
                clock_id: 3,
                timestamp: now / 2,
            },
            ClockReading {
                clock_id: 1,
                timestamp: now + 1_700_000_000_000_000_000,
            },
        ]
    }

    fn new_uuid(&mut self) -> u128 {
        let mut s = self.0.borrow_mut();
        s.uuids += 1;
        0x1234_5678_0000_0000_0000_0000_0000_0000 | s.uuids
    }

    fn system_info(&mut self) -> Vec<u8> {
        let mut w = HeapWriter::new();
        w.root().append_string(4, "zerotrace test");
        w.finish().unwrap()
    }

    fn allocate_smb(
        &mut self,
        producer: ProducerId,
        size: usize,
        _page_size: usize,
    ) -> Result<Arc<dyn SharedMemoryRegion>, String> {
        let mut s = self.0.borrow_mut();
        if s.refuse_smb {
            return Err("refused".into());
        }
        let region = Arc::new(HeapShm::new(size).map_err(|e| e.to_string())?);
        s.smbs.insert(producer, region.clone());
        Ok(region)
    }
}

/// A producer simulated in the test.
pub struct SimProducer {
    pub id: ProducerId,
    pub name: String,
    pub async_request: RequestId,
    pub arbiter: Option<Arc<SharedMemoryArbiter>>,
    pub rx: Option<Receiver<SinkMessage>>,
    /// Commands received so far (encoded GetAsyncCommandResponse).
    pub commands: Vec<Vec<u8>>,
}

/// The service plus its fake world.
pub struct Harness {
    pub svc: TracingService,
    pub shared: Rc<RefCell<Shared>>,
    pub now: u64,
    next_request: u64,
    next_consumer: u64,
    pub producers: HashMap<ProducerId, SimProducer>,
    /// Every action not yet looked at.
    pub log: Vec<Action>,
}

pub const MS: u64 = 1_000_000;

impl Harness {
    pub fn new() -> Harness {
        Harness::with_options(ServiceOptions {
            service_uid: 1000,
            machine_name: "testbox".into(),
            ..ServiceOptions::default()
        })
    }

    pub fn with_options(opts: ServiceOptions) -> Harness {
        let shared = Rc::new(RefCell::new(Shared::default()));
        let svc = TracingService::new(opts, Box::new(FakeEnv(shared.clone())));
        Harness {
            svc,
            shared,
            now: 1_000 * MS,
            next_request: 0,
            next_consumer: 0,
            producers: HashMap::new(),
            log: Vec::new(),
        }
    }

    pub fn request(&mut self) -> RequestId {
        self.next_request += 1;
        RequestId(self.next_request)
    }

    /// Moves the fake clock and runs the timers that are due.
    pub fn advance_ms(&mut self, ms: u64) {
        let end = self.now + ms * MS;
        loop {
            match self.svc.poll_timeout() {
                Some(t) if t <= end => {
                    self.now = self.now.max(t);
                    self.shared.borrow_mut().now = self.now;
                    self.svc.handle_timeout(self.now);
                    self.drain();
                }
                _ => break,
            }
        }
        self.now = end;
        self.shared.borrow_mut().now = end;
        self.svc.handle_timeout(end);
        self.drain();
    }

    /// Collects the service's actions: producer commands go to their
    /// simulated producer (which maps its SMB on setup_tracing).
    pub fn drain(&mut self) {
        while let Some(a) = self.svc.poll_action() {
            if let Action::Reply {
                to: Peer::Producer(p),
                request,
                reply: Reply::Ok {
                    data, attach_smb, ..
                },
            } = &a
                && let Some(sim) = self.producers.get_mut(p)
                && *request == sim.async_request
            {
                if *attach_smb || GetAsyncCommandResponseDecoder::new(data).has_setup_tracing() {
                    let page_kb = GetAsyncCommandResponseDecoder::new(data)
                        .setup_tracing()
                        .and_then(|s| s.shared_buffer_page_size_kb())
                        .unwrap_or(4);
                    if let Some(region) = self.shared.borrow().smbs.get(p).cloned() {
                        let (sink, rx) = ChannelCommitSink::new();
                        let arbiter = SharedMemoryArbiter::new(
                            region,
                            page_kb as usize * 1024,
                            Arc::new(sink),
                            ArbiterConfig::default(),
                        )
                        .expect("arbiter over the service's SMB");
                        sim.arbiter = Some(arbiter);
                        sim.rx = Some(rx);
                    }
                }
                sim.commands.push(data.clone());
                continue;
            }
            self.log.push(a);
        }
    }

    pub fn pcall(&mut self, p: ProducerId, call: ProducerCall) -> RequestId {
        let r = self.request();
        self.svc.handle_producer_call(self.now, p, r, call, None);
        self.drain();
        r
    }

    pub fn pcall_raw(&mut self, p: ProducerId, method: &str, args: &[u8]) -> RequestId {
        let call = ProducerCall::decode(method, args).expect("decodable call");
        self.pcall(p, call)
    }

    /// Connects and initializes a producer (unix transport), with its
    /// GetAsyncCommand stream open.
    pub fn producer(&mut self, name: &str, uid: u32) -> ProducerId {
        self.producer_with(name, uid, 1)
    }

    pub fn producer_with(&mut self, name: &str, uid: u32, scraping_mode: i32) -> ProducerId {
        let id = self
            .svc
            .producer_connected(
                self.now,
                PeerIdentity {
                    uid,
                    pid: Some(4000 + uid as i32),
                    machine_id: None,
                },
                ProducerTransport { can_pass_fds: true },
            )
            .expect("producer accepted");
        self.producers.insert(
            id,
            SimProducer {
                id,
                name: name.into(),
                async_request: RequestId(u64::MAX),
                arbiter: None,
                rx: None,
                commands: Vec::new(),
            },
        );
        self.pcall(
            id,
            ProducerCall::InitializeConnection {
                page_size_hint: 0,
                smb_size_hint: 0,
                name: name.into(),
                smb_scraping_mode: scraping_mode,
                producer_provided_shmem: false,
                sdk_version: "test".into(),
            },
        );
        let r = self.request();
        self.producers.get_mut(&id).unwrap().async_request = r;
        self.svc
            .handle_producer_call(self.now, id, r, ProducerCall::GetAsyncCommand, None);
        self.drain();
        id
    }

    pub fn register(&mut self, p: ProducerId, name: &str, notify_stop: bool, no_flush: bool) {
        let mut w = HeapWriter::new();
        {
            let mut m = w.root();
            m.append_string(1, name);
            m.append_bool(2, notify_stop);
            m.append_bool(9, no_flush);
        }
        let desc = w.finish().unwrap();
        let d = zerotrace_core::service::DataSourceDescriptor::decode(&desc, "RegisterDataSource")
            .unwrap();
        self.pcall(p, ProducerCall::RegisterDataSource(d));
    }

    pub fn disconnect_producer(&mut self, p: ProducerId) {
        self.svc.producer_disconnected(self.now, p);
        self.producers.remove(&p);
        self.drain();
    }

    /// A writer of producer `p` into global buffer `target`.
    pub fn writer(&mut self, p: ProducerId, target: u16) -> TraceWriter {
        let sim = self.producers.get(&p).expect("producer");
        let w = sim
            .arbiter
            .as_ref()
            .expect("SMB set up")
            .create_trace_writer(target, BufferExhaustedPolicy::Drop)
            .expect("writer");
        self.pump(p);
        w
    }

    /// Delivers what the producer's arbiter queued (registrations, commits).
    pub fn pump(&mut self, p: ProducerId) {
        let msgs: Vec<SinkMessage> = match self.producers.get(&p).and_then(|s| s.rx.as_ref()) {
            Some(rx) => rx.try_iter().collect(),
            None => return,
        };
        for m in msgs {
            let call = match m {
                SinkMessage::Commit(req) => ProducerCall::CommitData(req),
                SinkMessage::RegisterTraceWriter {
                    writer_id,
                    target_buffer,
                } => ProducerCall::RegisterTraceWriter {
                    writer_id: writer_id as u32,
                    target_buffer: target_buffer as u32,
                },
                SinkMessage::UnregisterTraceWriter { writer_id } => {
                    ProducerCall::UnregisterTraceWriter {
                        writer_id: writer_id as u32,
                    }
                }
            };
            self.pcall(p, call);
        }
    }

    /// Commands producer `p` received since the last call.
    pub fn take_commands(&mut self, p: ProducerId) -> Vec<Vec<u8>> {
        std::mem::take(&mut self.producers.get_mut(&p).unwrap().commands)
    }

    pub fn consumer(&mut self, uid: u32) -> ConsumerId {
        self.next_consumer += 1;
        let id = ConsumerId(self.next_consumer);
        self.svc.consumer_connected(
            self.now,
            id,
            PeerIdentity {
                uid,
                pid: Some(1),
                machine_id: None,
            },
        );
        id
    }

    pub fn ccall(&mut self, c: ConsumerId, call: ConsumerCall) -> RequestId {
        let r = self.request();
        self.svc.handle_consumer_call(self.now, c, r, call);
        self.drain();
        r
    }

    pub fn enable(&mut self, c: ConsumerId, config: Vec<u8>) -> RequestId {
        self.ccall(
            c,
            ConsumerCall::EnableTracing {
                config,
                attach_notification_only: false,
            },
        )
    }

    /// Replies to `request` of `c` logged so far (removed from the log).
    pub fn replies(&mut self, c: ConsumerId, request: RequestId) -> Vec<Reply> {
        let mut out = Vec::new();
        self.log.retain(|a| match a {
            Action::Reply {
                to: Peer::Consumer(x),
                request: r,
                reply,
            } if *x == c && *r == request => {
                out.push(reply.clone());
                false
            }
            _ => true,
        });
        out
    }

    /// Replies to `request` of producer `p`.
    pub fn producer_replies(&mut self, p: ProducerId, request: RequestId) -> Vec<Reply> {
        let mut out = Vec::new();
        self.log.retain(|a| match a {
            Action::Reply {
                to: Peer::Producer(x),
                request: r,
                reply,
            } if *x == p && *r == request => {
                out.push(reply.clone());
                false
            }
            _ => true,
        });
        out
    }

    /// Lets a streaming ReadBuffers of `c` run to its end, as a driver does
    /// while the consumer drains its socket.
    pub fn finish_read(&mut self, c: ConsumerId) {
        while self.svc.has_pending_read(c) {
            self.svc.resume_read(self.now, c);
            self.drain();
        }
    }

    /// Reads the session of `c` over ReadBuffers and reassembles packets.
    pub fn read(&mut self, c: ConsumerId) -> Vec<Vec<u8>> {
        let r = self.ccall(c, ConsumerCall::ReadBuffers);
        self.finish_read(c);
        let replies = self.replies(c, r);
        let mut packets = Vec::new();
        let mut partial = Vec::new();
        let n = replies.len();
        for (i, reply) in replies.into_iter().enumerate() {
            let Reply::Ok { data, has_more, .. } = reply else {
                panic!("ReadBuffers failed: {reply:?}");
            };
            assert_eq!(has_more, i + 1 < n, "only the last reply ends the stream");
            assert!(
                data.len() <= 128 * 1024,
                "reply of {} bytes exceeds the IPC frame",
                data.len()
            );
            for s in ReadBuffersResponseDecoder::new(&data).slices() {
                partial.extend_from_slice(s.data().unwrap_or(&[]));
                if s.last_slice_for_packet().unwrap_or(false) {
                    packets.push(std::mem::take(&mut partial));
                }
            }
        }
        assert!(partial.is_empty(), "a packet was left unterminated");
        packets
    }
}

/// A TraceConfig with `buffers` (size in KiB, discard) and data sources
/// (name, buffer index), plus anything `extra` writes.
pub fn config(
    buffers: &[(u32, bool)],
    sources: &[(&str, u32)],
    extra: impl FnOnce(&mut TraceConfig<'_>),
) -> Vec<u8> {
    let mut w = HeapWriter::new();
    {
        let mut c = TraceConfig::from_message(w.root());
        for &(kb, discard) in buffers {
            c.add_buffers()
                .set_size_kb(kb)
                .set_fill_policy_raw(if discard { 2 } else { 1 });
        }
        for &(name, buffer) in sources {
            let mut ds = c.add_data_sources();
            ds.begin_config().set_name(name).set_target_buffer(buffer);
        }
        extra(&mut c);
    }
    w.finish().unwrap()
}

/// Top-level field numbers of a packet, in order.
pub fn field_ids(packet: &[u8]) -> Vec<u32> {
    let mut d = Decoder::new(packet);
    std::iter::from_fn(|| d.read_field().map(|f| f.expect("well-formed packet").id)).collect()
}

/// The last value of varint field `id`.
pub fn varint(packet: &[u8], id: u32) -> Option<u64> {
    Decoder::new(packet)
        .find_last(id)
        .and_then(|f| f.as_u64().ok())
}

/// Bytes of field `id`.
pub fn bytes(packet: &[u8], id: u32) -> Option<Vec<u8>> {
    Decoder::new(packet)
        .find_last(id)
        .and_then(|f| f.as_bytes().ok())
        .map(<[u8]>::to_vec)
}

/// The recorded genuine Perfetto sessions (`tracing-core/tests/vectors`,
/// described by the README there).
pub fn vectors() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/vectors")
}

/// Bytes from a hex string.
pub fn hex(s: &str) -> Vec<u8> {
    (0..s.len() / 2)
        .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).expect("hex"))
        .collect()
}

/// The service on a thread of the test (zerotrace-core's own helper).
#[cfg(target_os = "linux")]
#[allow(unused_imports)]
pub use zerotrace_core::daemon::DaemonThread;

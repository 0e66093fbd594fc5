//! End to end throughput: producer → SMB → service → consumer, through
//! `zerotraced` and through Perfetto's genuine service in the same run.
//!
//! Both runs use the same clients, ours ([`ProducerClient`] writing through
//! the memfd SMB the service hands out, [`ConsumerClient`] reading over
//! IPC), the same socket kind (unix paths) and the same workload, so the
//! services are the only difference. One iteration is one whole session:
//! EnableTracing, the data source starts, the producer writes
//! `PAYLOAD_MIB` MiB of ~1 KiB packets (a timestamp and a TestEvent string)
//! and flushes, the consumer disables the session and reads every packet
//! back. Throughput counts the packets' bytes, from the first write to the
//! last packet read (session setup included, small next to the data).
//!
//! Run: `cargo bench -p zerotrace-interop --bench end_to_end`.

use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use protozero::HeapWriter;
use zerotrace_core::consumer::{ConsumerClient, SessionEnd};
use zerotrace_core::producer::{DataSourceSpec, ProducerClient, ProducerOptions};
use zerotrace_interop::services::{Service, Which};
use zerotrace_protos::protos::TraceConfig;

const DS: &str = "zerotrace.bench";
const PAYLOAD_MIB: usize = 16;
const PACKET_STR: usize = 1000;

fn config() -> Vec<u8> {
    let mut w = HeapWriter::new();
    {
        let mut c = TraceConfig::from_message(w.root());
        // DISCARD, twice the data: nothing is lost or overwritten.
        c.add_buffers()
            .set_size_kb((2 * PAYLOAD_MIB * 1024) as u32)
            .set_fill_policy_raw(2);
        c.add_data_sources().begin_config().set_name(DS);
    }
    w.finish().unwrap()
}

struct Rig {
    // Dropped in this order: clients before the service.
    producer: ProducerClient,
    consumer: ConsumerClient,
    _svc: Service,
}

impl Rig {
    fn new(which: Which) -> Rig {
        let svc = Service::start(which, "bench");
        let producer = ProducerClient::connect(
            &svc.producer_endpoint(),
            ProducerOptions {
                name: "zerotrace-bench".into(),
                ..ProducerOptions::default()
            },
        )
        .unwrap();
        producer
            .register_data_source(
                DataSourceSpec {
                    name: DS.into(),
                    ..Default::default()
                },
                |_| {},
            )
            .unwrap();
        let consumer = ConsumerClient::connect(&svc.consumer_endpoint()).unwrap();
        Rig {
            producer,
            consumer,
            _svc: svc,
        }
    }

    /// One session; returns the time from the first write to the last
    /// packet read, and the bytes of packets read.
    fn session(&mut self, text: &str, packets: usize) -> (Duration, u64) {
        let wait = Duration::from_secs(60);
        let cfg = config();
        let req = self.consumer.enable_tracing(&cfg, None).unwrap();
        let inst = self.producer.wait_for_start(DS, wait).unwrap();
        let mut w = self
            .producer
            .create_trace_writer(inst.target_buffer)
            .unwrap();
        let start = Instant::now();
        for i in 0..packets {
            w.packet(|p| {
                p.set_timestamp(i as u64);
                p.begin_for_testing().set_str(text);
            });
        }
        w.flush(None);
        self.producer.flush_blocking(wait).unwrap();
        drop(w);
        self.consumer.disable_tracing().unwrap();
        assert_eq!(
            self.consumer.wait_for_end(req, Some(wait)).unwrap(),
            SessionEnd::Disabled
        );
        let mut bytes = 0u64;
        let mut data_packets = 0usize;
        self.consumer
            .read_buffers(|p| {
                bytes += p.len() as u64;
                // Data packets carry the TestEvent (field 900, tag 0xa2 0x38).
                if p.windows(2).any(|w| w == [0xa2, 0x38]) {
                    data_packets += 1;
                }
            })
            .unwrap();
        let elapsed = start.elapsed();
        assert!(
            data_packets >= packets,
            "read {data_packets} of {packets} packets"
        );
        self.consumer.free_buffers().ok();
        (elapsed, bytes)
    }
}

fn end_to_end(c: &mut Criterion) {
    let text = "x".repeat(PACKET_STR);
    let packets = PAYLOAD_MIB * 1024 * 1024 / (PACKET_STR + 12);
    let mut group = c.benchmark_group("end_to_end");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(15));
    group.throughput(Throughput::Bytes(
        (packets * (PACKET_STR + 8)) as u64, // approximate packet bytes
    ));
    for (name, which) in [
        ("zerotraced", Which::Zerotraced),
        ("genuine_traced", Which::Genuine),
    ] {
        let mut rig = Rig::new(which);
        // Warm-up session (maps the SMB, faults the buffers in).
        rig.session(&text, packets);
        group.bench_function(name, |b| {
            b.iter_custom(|iters| {
                (0..iters)
                    .map(|_| rig.session(&text, packets).0)
                    .sum::<Duration>()
            })
        });
    }
    group.finish();
}

criterion_group!(benches, end_to_end);
criterion_main!(benches);

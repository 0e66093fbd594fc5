//! Startup tracing against Perfetto's genuine service: our producer writes
//! for a second before the service exists, into a sealed memfd SMB of its
//! own; on connecting it offers that buffer with InitializeConnection, the
//! genuine service adopts it (`using_shmem_provided_by_producer`), and when
//! a session starts the data source the held chunks are committed with the
//! session's buffer id in place of the reservation's. Every packet, written
//! before and after, must be in the trace, intact and in order. A buffer the
//! service cannot adopt (64 KiB pages) is refused: the startup data is
//! dropped and the producer records through the service's own buffer. (The
//! same against `zerotraced`, plus the timeout path, is
//! `tracing-core/tests/all/startup_tracing.rs`.)
#![cfg(target_os = "linux")]

use std::time::Duration;

use zerotrace_core::consumer::{ConsumerClient, SessionEnd};
use zerotrace_core::platform::boottime_ns;
use zerotrace_core::producer::{
    DataSourceSpec, ProducerClient, ProducerOptions, StartupTracingOptions,
};
use zerotrace_interop::services::{Service, Which};

// The workload, shared with `tracing-core/tests/all/startup_tracing.rs`
// (`tracing-core/tests/startup_support/`).
use crate::startup_support;
use startup_support::{EarlyWriter, config, data_packets, write};

const WAIT: Duration = Duration::from_secs(30);
const DS: &str = "zerotrace.startup";

fn written_before_the_service_starts(which: Which, name: &str) {
    let producer = std::sync::Arc::new(
        ProducerClient::start(
            &Service::producer_endpoint_for(which, name),
            ProducerOptions {
                name: "zerotrace-startup".into(),
                startup_tracing: Some(StartupTracingOptions::default()),
                ..ProducerOptions::default()
            },
        )
        .unwrap(),
    );
    producer
        .register_data_source(
            DataSourceSpec {
                name: DS.into(),
                will_notify_on_stop: true,
                ..Default::default()
            },
            |_| {},
        )
        .unwrap();
    let writer = EarlyWriter::spawn(&producer, DS);
    let before_service = writer.before_service;
    assert!(before_service > 5, "{before_service}");
    assert!(!producer.is_connected());
    let session_start = boottime_ns();
    let svc = Service::start(which, name);
    producer.wait_connected(WAIT).unwrap();
    assert!(producer.uses_own_smb(), "{which:?} adopted our buffer");

    let mut consumer = ConsumerClient::connect(&svc.consumer_endpoint()).unwrap();
    let session = consumer.enable_tracing(&config(DS), None).unwrap();
    producer.wait_for_start(DS, WAIT).unwrap();
    let total = writer.start_and_join();
    producer.flush_blocking(WAIT).unwrap();
    assert!(consumer.flush(5000).unwrap(), "flush acknowledged");
    consumer.disable_tracing().unwrap();
    assert_eq!(
        consumer.wait_for_end(session, Some(WAIT)).unwrap(),
        SessionEnd::Disabled
    );
    let trace = consumer.read_trace().unwrap();
    let packets = data_packets(&trace);
    let seqs: Vec<u64> = packets.iter().map(|&(s, _)| s).collect();
    assert_eq!(seqs, (0..total).collect::<Vec<_>>(), "{which:?}");
    for &(seq, ts) in &packets[..before_service as usize] {
        assert!(
            ts < session_start,
            "packet {seq} at {ts} >= {session_start}"
        );
    }
    assert_eq!(producer.startup_reservations_aborted(), 0);
}

#[test]
fn startup_tracing_through_the_genuine_service() {
    written_before_the_service_starts(Which::Genuine, "startup");
}

#[test]
fn startup_tracing_through_zerotraced() {
    written_before_the_service_starts(Which::Zerotraced, "startup");
}

/// The service refuses a buffer of 64 KiB pages (it grants at most 32 KiB):
/// the startup data is dropped, and the session records through the SMB the
/// service makes.
fn refused_buffer_falls_back(which: Which, name: &str) {
    let producer = ProducerClient::start(
        &Service::producer_endpoint_for(which, name),
        ProducerOptions {
            name: "zerotrace-startup-refused".into(),
            startup_tracing: Some(StartupTracingOptions {
                page_size: 64 * 1024,
                ..StartupTracingOptions::default()
            }),
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
    let mut early = producer.create_startup_trace_writer(DS).unwrap();
    for i in 0..30 {
        write(&mut early, i);
    }
    let svc = Service::start(which, name);
    producer.wait_connected(WAIT).unwrap();
    assert!(!producer.uses_own_smb(), "{which:?} refused our buffer");
    assert_eq!(producer.startup_reservations_aborted(), 1);
    let mut consumer = ConsumerClient::connect(&svc.consumer_endpoint()).unwrap();
    let session = consumer.enable_tracing(&config(DS), None).unwrap();
    producer.wait_for_start(DS, WAIT).unwrap();
    for i in 30..40 {
        write(&mut early, i);
    }
    early.flush(None);
    let mut w = producer.create_startup_trace_writer(DS).unwrap();
    for i in 100..150 {
        write(&mut w, i);
    }
    w.flush(None);
    producer.flush_blocking(WAIT).unwrap();
    assert!(consumer.flush(5000).unwrap(), "flush acknowledged");
    consumer.disable_tracing().unwrap();
    assert_eq!(
        consumer.wait_for_end(session, Some(WAIT)).unwrap(),
        SessionEnd::Disabled
    );
    let seqs: Vec<u64> = data_packets(&consumer.read_trace().unwrap())
        .iter()
        .map(|&(s, _)| s)
        .collect();
    assert_eq!(seqs, (100..150).collect::<Vec<_>>(), "{which:?}");
}

#[test]
fn refused_startup_buffer_with_the_genuine_service() {
    refused_buffer_falls_back(Which::Genuine, "startup-refused");
}

#[test]
fn refused_startup_buffer_with_zerotraced() {
    refused_buffer_falls_back(Which::Zerotraced, "startup-refused");
}

//! What the genuine producer's interop workload must look like in a trace,
//! and the config the recorded genuine consumer enabled: shared by the
//! tests that run the genuine producer against a service directly
//! (`tests/all/genuine_ipc.rs`) and through a relay (`tests/all/relay_genuine.rs`).

use std::time::Duration;

use zerotrace_core::consumer::{ConsumerClient, SessionEnd};

use crate::sdk::SdkProcess;
use crate::sdk_workload as workload;
use crate::services::Service;
use crate::trace_check::{self as check, field};

/// How long a step of a recording may take.
const WAIT: Duration = Duration::from_secs(30);

/// Runs the genuine producer against `producer_socket` (the service's, or
/// a relay's in front of it) and records it from `svc` with `config`,
/// through our consumer (`genuine_consumer` false) or the genuine one;
/// returns the trace and the producer's pid.
pub fn record_genuine(
    svc: &Service,
    producer_socket: &str,
    config: &[u8],
    genuine_consumer: bool,
) -> (Vec<u8>, u32) {
    let mut producer = SdkProcess::producer(producer_socket, &svc.consumer);
    producer.expect("registered", WAIT);
    let pid = producer.pid();
    let trace = if genuine_consumer {
        let cfg = svc.dir.join("config.pb");
        let out = svc.dir.join("trace.pftrace");
        std::fs::write(&cfg, config).expect("write the config");
        let mut consumer = SdkProcess::consumer(&svc.producer, &svc.consumer, &cfg, &out);
        consumer.expect("started", WAIT);
        producer.expect("written", WAIT);
        consumer.proceed();
        consumer.expect("written", WAIT);
        consumer.wait_success(WAIT);
        std::fs::read(&out).expect("the genuine consumer's trace")
    } else {
        let mut consumer =
            ConsumerClient::connect(&svc.consumer_endpoint()).expect("our consumer connects");
        let session = consumer
            .enable_tracing(config, None)
            .expect("the session starts");
        producer.expect("written", WAIT);
        assert!(
            consumer.flush(5000).expect("flush answered"),
            "flush acknowledged"
        );
        consumer.disable_tracing().expect("disable answered");
        assert_eq!(
            consumer.wait_for_end(session, Some(WAIT)).expect("the end"),
            SessionEnd::Disabled
        );
        consumer.read_trace().expect("the trace")
    };
    producer.expect("stopped", WAIT);
    producer.wait_success(WAIT);
    (trace, pid)
}

/// The recorded genuine consumer session (`tracing-core/tests/vectors`).
pub fn recorded_consumer_session() -> Vec<serde_json::Value> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/vectors/genuine-consumer-session.jsonl");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    text.lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}

/// Bytes from their hex text.
pub fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex"))
        .collect()
}

/// The arguments the recorded genuine consumer sent with `method`.
pub fn recorded_args(method: &str) -> Vec<u8> {
    let frame = recorded_consumer_session()
        .into_iter()
        .find(|f| f["kind"] == "invoke" && f["method"] == method)
        .unwrap_or_else(|| panic!("no recorded {method}"));
    assert_eq!(
        frame["args_len"].as_u64().unwrap() as usize * 2,
        frame["args_hex"].as_str().unwrap().len(),
        "the recording holds the whole arguments of {method}"
    );
    unhex(frame["args_hex"].as_str().unwrap())
}

/// The TraceConfig the recorded genuine consumer enabled: a 4 MiB DISCARD
/// buffer, track_event with only the `oracle` category, and `oracle.custom`
/// (the genuine producer's names, see the workload).
pub fn oracle_config() -> Vec<u8> {
    let args = recorded_args("EnableTracing");
    check::bytes(&args, 1).expect("trace_config").to_vec()
}

/// `patches_succeeded` of the trace's buffer stats (the last `trace_stats`
/// packet): a packet split across chunks has its size patched after its
/// first chunk was committed.
pub fn patches_succeeded(trace: &[u8]) -> u64 {
    let stats = check::packets(trace)
        .into_iter()
        .rev()
        .find_map(|p| check::bytes(&p, 35).map(<[u8]>::to_vec))
        .expect("a trace_stats packet");
    let buffer = check::bytes(&stats, 1).expect("buffer_stats");
    check::varint(buffer, 5).unwrap_or(0)
}

/// This process's uid, as trusted fields carry it.
pub fn my_uid() -> u64 {
    u64::from(zerotrace_core::platform::current_uid())
}

/// Checks that `trace` holds exactly the genuine producer's workload: one
/// track event sequence and one custom sequence, every event and packet
/// intact (the ~100 KB annotation and the ~200 KB packet, fragmented across
/// chunks by the SDK, byte for byte), with trusted uid and pid, sequence ids
/// of 2 and up, and only each sequence's first packet flagged as following
/// a loss.
pub fn check_genuine_workload(trace: &[u8], producer_pid: u32, who: &str) {
    let seqs = check::data_sequences(trace);
    let mut track = None;
    let mut custom = None;
    for (id, packets) in &seqs {
        assert!(*id >= 2, "{who}: data on sequence {id}");
        if packets
            .iter()
            .any(|p| check::bytes(p, field::FOR_TESTING).is_some())
        {
            assert!(
                custom.replace(packets).is_none(),
                "{who}: two custom sequences"
            );
        } else if packets
            .iter()
            .any(|p| check::bytes(p, field::TRACK_EVENT).is_some())
        {
            assert!(
                track.replace(packets).is_none(),
                "{who}: two track event sequences"
            );
        }
    }
    assert_eq!(
        seqs.len(),
        2,
        "{who}: sequences {:?}",
        seqs.iter().map(|s| s.0).collect::<Vec<_>>()
    );
    assert!(patches_succeeded(trace) > 0, "{who}: no size patch applied");
    let track = track.unwrap_or_else(|| panic!("{who}: no track events"));
    let custom = custom.unwrap_or_else(|| panic!("{who}: no custom packets"));

    let events = check::track_events(track);
    let expected = workload::expected_events();
    assert_eq!(events.len(), expected.len(), "{who}: track event count");
    for (i, (got, want)) in events.iter().zip(&expected).enumerate() {
        assert_eq!(got, want, "{who}: track event {i}");
    }
    let tests = check::test_packets(custom);
    let expected = workload::expected_test_packets();
    assert_eq!(tests.len(), expected.len(), "{who}: custom packet count");
    for (i, (got, want)) in tests.iter().zip(&expected).enumerate() {
        assert!(
            got == want,
            "{who}: custom packet {i} differs (len {} vs {})",
            got.str.len(),
            want.str.len()
        );
    }

    for (_, packets) in &seqs {
        for (i, p) in packets.iter().enumerate() {
            let t = check::trusted(p);
            assert_eq!(t.uid, Some(my_uid()), "{who}: trusted_uid of packet {i}");
            assert_eq!(
                t.pid,
                Some(u64::from(producer_pid)),
                "{who}: trusted_pid of packet {i}"
            );
            let dropped = check::varint(p, field::PREVIOUS_PACKET_DROPPED).unwrap_or(0);
            assert_eq!(
                dropped != 0,
                i == 0,
                "{who}: previous_packet_dropped on packet {i}"
            );
        }
    }
}

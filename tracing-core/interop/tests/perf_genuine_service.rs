//! `linux.perf` as a data source of Perfetto's genuine service (and of
//! `zerotraced`, the same way): the probes
//! register with it, a session samples the probes' fixture program
//! (`tracing-core/probes/tests/perf_fixture`, 60/30/10 of its CPU time in
//! three leaves) with DWARF unwinding and kernel frames, and the trace the
//! service returns holds the samples with their interned callstacks, the
//! leaves at their shares, and decodes with protoc and the upstream schema
//! without a single unknown field. Root (perf events); without them, or
//! without rustc, the test says so in one line, and fails under
//! `ZEROTRACE_REQUIRE_PERF=1` (CI).
//! (Its own test binary, not a module of `all/`: its samplers must not
//! share the CPUs with other tests' work.)
#![cfg(target_os = "linux")]

#[path = "../../probes/tests/perf_fixture/mod.rs"]
mod perf_fixture;

use std::time::{Duration, Instant};

use protozero::{Decoder, HeapWriter};
use zerotrace_core::consumer::{ConsumerClient, SessionEnd};
use zerotrace_interop::protoc_decode;
use zerotrace_interop::services::{Service, Which};
use zerotrace_probes::producer::{ProbesOptions, ProbesProducer, Registry};
use zerotrace_protos::protos::PerfEventConfig;
use zerotrace_protos::protos::TraceConfig;
use zerotrace_protos::protos::perf_event_config::UnwindMode;
use zerotrace_protos::protos::perf_events::Counter;
use zerotrace_protos::upstream_tables::{data_source_field, packet_field};

const WAIT: Duration = Duration::from_secs(30);

fn config(pid: u32) -> Vec<u8> {
    let mut w = HeapWriter::new();
    {
        let mut c = TraceConfig::from_message(w.root());
        c.add_buffers().set_size_kb(32 * 1024);
        let mut ds = c.add_data_sources();
        let mut cfg = ds.begin_config();
        cfg.set_name("linux.perf");
        let mut p = PerfEventConfig::from_message(
            cfg.message()
                .begin_nested(data_source_field::PERF_EVENT_CONFIG),
        );
        p.begin_timebase()
            .set_frequency(500)
            .set_counter(Counter::SwCpuClock);
        let mut cs = p.begin_callstack_sampling();
        cs.set_kernel_frames(true)
            .set_user_frames(UnwindMode::UnwindDwarf);
        cs.begin_scope().add_target_pid(pid as i32);
    }
    w.finish().expect("config")
}

/// The trace's packets (`Trace.packet`).
fn packets(trace: &[u8]) -> Vec<Vec<u8>> {
    Decoder::new(trace)
        .map(|f| f.expect("the trace decodes"))
        .filter(|f| f.id == 1)
        .map(|f| f.as_bytes().expect("a packet").to_vec())
        .collect()
}

#[test]
fn linux_perf_records_through_the_genuine_service() {
    records_the_fixture(
        Which::Genuine,
        "linux_perf_records_through_the_genuine_service",
    );
}

#[test]
fn linux_perf_records_through_zerotraced() {
    records_the_fixture(Which::Zerotraced, "linux_perf_records_through_zerotraced");
}

/// One at a time: each samples a CPU-bound fixture at 500 Hz.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn records_the_fixture(which: Which, test: &str) {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    if perf_fixture::unavailable(test).is_some() {
        return;
    }
    // Can perf events be opened here at all? (Said in one line if not.)
    let bin = perf_fixture::fixture(false);
    let run = perf_fixture::Running::start(&bin, "cpu");
    let pid = run.pid();
    let probe_check = perf_fixture::Ours::start(
        test,
        &[perf_fixture::perf_config(|c| {
            c.begin_timebase().set_frequency(10);
        })],
    );
    let Some(probe_check) = probe_check else {
        return;
    };
    drop(probe_check.stop());

    let svc = Service::start(which, test);
    let probes = ProbesProducer::start(
        &svc.producer_endpoint(),
        Registry::standard(),
        ProbesOptions::default(),
    )
    .expect("the probes start");
    let mut consumer = ConsumerClient::connect(&svc.consumer_endpoint()).expect("consumer");
    let deadline = Instant::now() + WAIT;
    loop {
        let state = consumer.query_service_state().expect("service state");
        if state.windows(10).any(|w| w == b"linux.perf") {
            break;
        }
        assert!(Instant::now() < deadline, "linux.perf did not register");
        std::thread::sleep(Duration::from_millis(20));
    }
    let session = consumer.enable_tracing(&config(pid), None).expect("enable");
    // The instance starts once the service asks (kallsyms read, events
    // opened): some of the first moments go by unsampled.
    std::thread::sleep(Duration::from_millis(2000));
    consumer.disable_tracing().expect("disable");
    assert_eq!(
        consumer.wait_for_end(session, Some(WAIT)).expect("end"),
        SessionEnd::Disabled
    );
    let trace = consumer.read_trace().expect("read");
    drop(probes);
    drop(run);

    let samples = perf_fixture::read_back(&packets(&trace));
    let n = samples.iter().filter(|s| s.pid == pid).count();
    println!(
        "{n} samples, {} kernel records lost",
        perf_fixture::records_lost(&packets(&trace))
    );
    assert!(
        n >= 200,
        "{n} samples of the fixture through the genuine service"
    );
    let shares = perf_fixture::leaf_shares(&samples, pid);
    for (leaf, design) in [
        ("fixture::leaf_a", 60.0),
        ("fixture::leaf_b", 30.0),
        ("fixture::leaf_c", 10.0),
    ] {
        let s = shares.get(leaf).copied().unwrap_or(0.0);
        assert!(
            (s - design).abs() <= 10.0,
            "{leaf}: {s:.1}% (the fixture means {design}%): {shares:?}"
        );
    }
    assert_eq!(
        perf_fixture::top_chain(&samples, pid, "fixture::leaf_b"),
        Some(vec![
            "fixture::leaf_b".to_owned(),
            "fixture::caller_b".to_owned(),
            "fixture::main".to_owned()
        ])
    );

    // protoc with the upstream schema names every field of every packet of
    // the probes' sequence (the service's own packets are left out: this
    // genuine service is newer than the schema, and writes e.g.
    // `trace_provenance`, field 124, which it does not name).
    let seq_of = |p: &[u8]| {
        Decoder::new(p)
            .filter_map(Result::ok)
            .find(|f| f.id == packet_field::TRUSTED_PACKET_SEQUENCE_ID)
            .and_then(|f| f.as_u64().ok())
    };
    let all = packets(&trace);
    let perf_seq = all
        .iter()
        .find(|p| {
            Decoder::new(p)
                .filter_map(Result::ok)
                .any(|f| f.id == packet_field::PERF_SAMPLE)
        })
        .and_then(|p| seq_of(p))
        .expect("the samples' sequence");
    let mut ours = HeapWriter::new();
    {
        let mut root = ours.root();
        for p in all.iter().filter(|p| seq_of(p) == Some(perf_seq)) {
            root.append_bytes(1, p);
        }
    }
    let ours = ours.finish().expect("encodes");
    let text = protoc_decode(
        "perfetto.protos.Trace",
        "protos/perfetto/trace/trace.proto",
        &ours,
    )
    .expect("protoc decodes the trace");
    let unknown: Vec<&str> = text
        .lines()
        .filter(|l| {
            let l = l.trim_start();
            l.split([':', ' '])
                .next()
                .is_some_and(|f| !f.is_empty() && f.bytes().all(|b| b.is_ascii_digit()))
        })
        .take(5)
        .collect();
    assert!(
        unknown.is_empty(),
        "fields unknown to the upstream schema: {unknown:?}"
    );
    for field in [
        "perf_sample {",
        "callstack_iid:",
        "trace_packet_defaults {",
        "perf_sample_defaults {",
        "callstacks {",
        "frames {",
        "mappings {",
        "function_names {",
        "build_ids {",
    ] {
        assert!(text.contains(field), "{field} not in the trace");
    }
}

//! What the sans-IO service core refuses or clamps, and that refusing is
//! never fatal: session and buffer limits as error replies naming the limit,
//! a unique session name already taken, calls out of order and garbage
//! arguments, and SMB sizes from the config, the producer's hints or the
//! defaults, absurd requests falling back or clamped as Perfetto's are.

use crate::service_support;

use service_support::scenario::*;
use service_support::*;
use zerotrace_core::service::{ProducerCall, Reply};
use zerotrace_protos::protos::{EnableTracingResponseDecoder, GetAsyncCommandResponseDecoder};

/// The error an EnableTracing reply carries.
fn enable_error(
    h: &mut Harness,
    c: zerotrace_core::service::ConsumerId,
    r: zerotrace_core::service::RequestId,
) -> String {
    let replies = h.replies(c, r);
    EnableTracingResponseDecoder::new(ok_data(&replies[0]))
        .error()
        .expect("an error reply")
        .to_owned()
}

#[test]
fn limits_are_error_replies_naming_the_limit() {
    let mut h = Harness::new();
    let mut errors = Vec::new();
    for i in 0..7 {
        let c = h.consumer(4000);
        let r = h.enable(c, config(&[(64, false)], &[], |_| {}));
        if let Some(reply) = h.replies(c, r).first() {
            errors.push((
                i,
                EnableTracingResponseDecoder::new(ok_data(reply))
                    .error()
                    .unwrap()
                    .to_owned(),
            ));
        }
    }
    assert_eq!(errors.len(), 2, "five sessions per uid");
    assert!(
        errors[0].1.contains("max_sessions_per_uid"),
        "{}",
        errors[0].1
    );
    let c = h.consumer(4001);
    let r = h.enable(c, config(&[(8 * 1024 * 1024, false)], &[], |_| {}));
    let e = enable_error(&mut h, c, r);
    assert!(e.contains("max_session_buffer_bytes"), "{e}");
    let r = h.enable(
        c,
        config(&[(129 * 1024, false)], &[], |cfg| {
            cfg.set_enable_extra_guardrails(true);
        }),
    );
    let e = enable_error(&mut h, c, r);
    assert!(e.contains("enable_extra_guardrails"), "{e}");
    let r = h.enable(
        c,
        config(&[(64, false)], &[], |cfg| {
            cfg.begin_compression().begin_zstd();
        }),
    );
    let e = enable_error(&mut h, c, r);
    assert!(e.contains("compression.zstd"), "{e}");
    let many: Vec<(u32, bool)> = (0..129).map(|_| (4, false)).collect();
    let r = h.enable(c, config(&many, &[], |_| {}));
    let e = enable_error(&mut h, c, r);
    assert!(e.contains("max_buffers_per_session"), "{e}");
}

#[test]
fn unique_session_name_collides() {
    let mut h = Harness::new();
    let named = |cfg: &mut zerotrace_protos::protos::TraceConfig<'_>| {
        cfg.set_unique_session_name("nightly");
    };
    let c1 = h.consumer(1);
    let r1 = h.enable(c1, config(&[(64, false)], &[], named));
    assert!(h.replies(c1, r1).is_empty());
    let c2 = h.consumer(2);
    let r2 = h.enable(c2, config(&[(64, false)], &[], named));
    let e = enable_error(&mut h, c2, r2);
    assert!(e.contains("unique_session_name"), "{e}");
}

#[test]
fn protocol_violations_are_refused_not_fatal() {
    let mut h = Harness::new();
    let p = h.producer("app", 5);
    // A second InitializeConnection.
    let r = h.pcall_raw(p, "InitializeConnection", &[]);
    assert!(matches!(
        h.producer_replies(p, r).as_slice(),
        [Reply::Err(_)]
    ));
    // Calls before InitializeConnection.
    let fresh = h
        .svc
        .producer_connected(
            h.now,
            Default::default(),
            zerotrace_core::service::ProducerTransport { can_pass_fds: true },
        )
        .unwrap();
    let r = h.request();
    h.svc
        .handle_producer_call(h.now, fresh, r, ProducerCall::Sync, None);
    h.drain();
    assert!(matches!(
        h.producer_replies(fresh, r).as_slice(),
        [Reply::Err(_)]
    ));
    // Unknown methods and garbage arguments do not decode.
    assert!(ProducerCall::decode("Frobnicate", &[]).is_err());
    assert!(ProducerCall::decode("RegisterDataSource", &[0x0a, 0xff]).is_err());
    assert!(
        zerotrace_core::service::ConsumerCall::decode("EnableTracing", &[0x0a, 0x05, 1]).is_err()
    );
    // Commits naming pages past the SMB, unknown buffers, forged writers.
    h.pcall_raw(
        p,
        "CommitData",
        &[0x0a, 0x07, 0x08, 0x8f, 0x4e, 0x10, 0x00, 0x18, 0x01],
    );
    h.pcall_raw(
        p,
        "CommitData",
        &[0x12, 0x06, 0x08, 0x07, 0x10, 0x00, 0x18, 0x01],
    );
    assert!(h.svc.stats().commit.chunks_discarded + h.svc.stats().commit.patches_discarded >= 1);
}

/// The SMB is sized at the first data-source setup: the config's
/// `producers` entry first, then the producer's hints, then the defaults;
/// invalid sizes fall back to the defaults.
#[test]
fn the_smb_is_sized_by_config_then_hints_then_defaults() {
    use zerotrace_core::shm::SharedMemoryRegion;
    /// (config's producers entry in KiB, the producer's hints, expected SMB size and page KiB)
    type Case = (Option<(u32, u32)>, (u32, u32), (usize, u32));
    let cases: [Case; 7] = [
        (Some((512, 8)), (0, 0), (512 * 1024, 8)),
        (None, (128 * 1024, 16 * 1024), (128 * 1024, 16)),
        (None, (0, 0), (256 * 1024, 4)),
        (Some((100, 3)), (0, 0), (256 * 1024, 4)),
        // Absurd requests: an invalid page gets the defaults, a huge size
        // hint the 32 MiB cap (as Perfetto clamps it), never more.
        (None, (u32::MAX, u32::MAX), (256 * 1024, 4)),
        (None, (1 << 30, 4096), (32 * 1024 * 1024, 4)),
        (Some((u32::MAX, u32::MAX)), (0, 0), (256 * 1024, 4)),
    ];
    for (from_config, (size_hint, page_hint), (size, page_kb)) in cases {
        let mut h = Harness::new();
        let p = h
            .svc
            .producer_connected(
                h.now,
                Default::default(),
                zerotrace_core::service::ProducerTransport { can_pass_fds: true },
            )
            .unwrap();
        h.producers.insert(
            p,
            SimProducer {
                id: p,
                name: "sized".into(),
                async_request: zerotrace_core::service::RequestId(u64::MAX),
                arbiter: None,
                rx: None,
                commands: Vec::new(),
            },
        );
        h.pcall(
            p,
            ProducerCall::InitializeConnection {
                page_size_hint: page_hint,
                smb_size_hint: size_hint,
                name: "sized".into(),
                smb_scraping_mode: 0,
                producer_provided_shmem: false,
                sdk_version: String::new(),
            },
        );
        let r = h.request();
        h.producers.get_mut(&p).unwrap().async_request = r;
        h.svc
            .handle_producer_call(h.now, p, r, ProducerCall::GetAsyncCommand, None);
        h.drain();
        h.register(p, "ds", false, false);
        let c = h.consumer(0);
        h.enable(
            c,
            config(&[(64, false)], &[("ds", 0)], |cfg| {
                if let Some((kb, page)) = from_config {
                    cfg.add_producers()
                        .set_producer_name("sized")
                        .set_shm_size_kb(kb)
                        .set_page_size_kb(page);
                }
            }),
        );
        let cmds = h.take_commands(p);
        let setup = GetAsyncCommandResponseDecoder::new(&cmds[0])
            .setup_tracing()
            .unwrap();
        assert_eq!(
            setup.shared_buffer_page_size_kb(),
            Some(page_kb),
            "{from_config:?} {size_hint}"
        );
        assert_eq!(
            h.shared.borrow().smbs[&p].size(),
            size,
            "{from_config:?} {size_hint}"
        );
    }
}

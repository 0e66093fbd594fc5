//! What a consumer may do with a session besides enabling and reading it,
//! through the sans-IO service core: detach and attach only with the exact
//! key (never taking over a session that is not detached), clone a
//! read-only snapshot while producers write, and calls after FreeBuffers
//! that read nothing; and a consumer whose uid nobody vouches for (a TCP or
//! WebSocket peer), which reaches no session but its own.

use crate::service_support;

use service_support::scenario::*;
use service_support::*;
use zerotrace_core::service::{ConsumerCall, ProducerCall, Reply, UNKNOWN_UID};
use zerotrace_protos::protos::{
    AttachResponseDecoder, CloneSessionResponseDecoder, GetAsyncCommandResponseDecoder,
};

#[test]
fn detach_and_attach_need_the_exact_key() {
    let mut h = Harness::new();
    let (_, c, _) = simple_session(&mut h, |_| {});
    let r = h.ccall(c, ConsumerCall::Detach { key: String::new() });
    assert!(
        matches!(h.replies(c, r).as_slice(), [Reply::Err(_)]),
        "empty key refused"
    );
    let r = h.ccall(c, ConsumerCall::Detach { key: "k1".into() });
    assert!(matches!(h.replies(c, r).as_slice(), [Reply::Ok { .. }]));
    h.svc.consumer_disconnected(h.now, c);
    assert_eq!(
        h.svc.sessions().len(),
        1,
        "a detached session outlives its consumer"
    );

    let other_uid = h.consumer(9999);
    let r = h.ccall(other_uid, ConsumerCall::Attach { key: "k1".into() });
    assert!(
        matches!(h.replies(other_uid, r).as_slice(), [Reply::Err(_)]),
        "another uid cannot attach"
    );
    let c2 = h.consumer(2000);
    for bad in ["", "k2", "k"] {
        let r = h.ccall(c2, ConsumerCall::Attach { key: bad.into() });
        assert!(
            matches!(h.replies(c2, r).as_slice(), [Reply::Err(_)]),
            "key {bad:?}"
        );
    }
    let r = h.ccall(c2, ConsumerCall::Attach { key: "k1".into() });
    let replies = h.replies(c2, r);
    let cfg = AttachResponseDecoder::new(ok_data(&replies[0]))
        .trace_config_bytes()
        .unwrap()
        .to_vec();
    assert_eq!(cfg, config(&[(256, false)], &[("ds", 0)], |_| {}));
    let r = h.ccall(c2, ConsumerCall::Attach { key: "k1".into() });
    assert!(
        matches!(h.replies(c2, r).as_slice(), [Reply::Err(_)]),
        "attached sessions cannot be taken over"
    );
    // A second consumer of the same uid racing for the same key loses too.
    let c3 = h.consumer(2000);
    let r = h.ccall(c3, ConsumerCall::Attach { key: "k1".into() });
    assert!(
        matches!(h.replies(c3, r).as_slice(), [Reply::Err(_)]),
        "the session went to the first attach"
    );
}

#[test]
fn clone_while_writing_is_a_read_only_snapshot() {
    let mut h = Harness::new();
    let (p, c, _) = simple_session(&mut h, |_| {});
    let b = h.svc.sessions()[0].buffers[0].0.0;
    h.take_commands(p);
    let mut w = h.writer(p, b);
    write_packets(&mut w, 0, 20, 30);
    w.flush(None);
    h.pump(p);
    let cloner = h.consumer(2000);
    let sid = h.svc.sessions()[0].id.0;
    let r = h.ccall(
        cloner,
        ConsumerCall::CloneSession(zerotrace_core::service::CloneArgs {
            session_id: Some(sid),
            ..Default::default()
        }),
    );
    // The clone flushes first.
    let cmd = h.take_commands(p);
    assert_eq!(command_kinds(&cmd), ["flush"]);
    write_packets(&mut w, 20, 5, 30);
    let id = GetAsyncCommandResponseDecoder::new(&cmd[0])
        .flush()
        .unwrap()
        .request_id()
        .unwrap();
    w.flush(None);
    h.pump(p);
    h.pcall(
        p,
        ProducerCall::CommitData(zerotrace_core::protocol::CommitDataRequest {
            flush_request_id: Some(id),
            ..Default::default()
        }),
    );
    let resp = h.replies(cloner, r);
    assert_eq!(
        CloneSessionResponseDecoder::new(ok_data(&resp[0])).success(),
        Some(true)
    );
    write_packets(&mut w, 25, 5, 30);
    w.flush(None);
    h.pump(p);
    let cloned = h.read(cloner);
    assert_eq!(
        data_packets(&cloned).len(),
        25,
        "the snapshot holds what was flushed"
    );
    h.ccall(c, ConsumerCall::DisableTracing);
    let original = h.read(c);
    assert_eq!(data_packets(&original).len(), 30, "the original goes on");
    let r = h.ccall(
        cloner,
        ConsumerCall::Flush {
            timeout_ms: 10,
            flags: 0,
        },
    );
    assert!(
        matches!(h.replies(cloner, r).as_slice(), [Reply::Err(_)]),
        "clones are stopped"
    );
}

/// After FreeBuffers a consumer's ReadBuffers is refused ("no tracing
/// session") and FreeBuffers and DisableTracing are harmless no-ops:
/// nothing is read, nothing breaks.
#[test]
fn calls_after_free_buffers_read_nothing() {
    let mut h = Harness::new();
    let (_, c, _) = simple_session(&mut h, |_| {});
    let r = h.ccall(c, ConsumerCall::DisableTracing);
    h.replies(c, r);
    let r = h.ccall(c, ConsumerCall::FreeBuffers);
    assert!(matches!(h.replies(c, r).as_slice(), [Reply::Ok { .. }]));
    for call in [
        ConsumerCall::ReadBuffers,
        ConsumerCall::FreeBuffers,
        ConsumerCall::DisableTracing,
    ] {
        let r = h.ccall(c, call);
        let replies = h.replies(c, r);
        let ok = match replies.as_slice() {
            [Reply::Err(e)] => e.contains("no tracing session"),
            [
                Reply::Ok {
                    data,
                    has_more: false,
                    ..
                },
            ] => data.is_empty(),
            _ => false,
        };
        assert!(ok, "after FreeBuffers: {replies:?}");
    }
    assert!(h.svc.sessions().is_empty(), "the session is gone");
}

#[test]
fn a_consumer_of_unknown_uid_reaches_no_session_but_its_own() {
    let mut h = Harness::new();
    let p = h.producer("app", 2000);
    h.register(p, "ds", true, false);
    let named = |name: &'static str| {
        config(&[(256, false)], &[("ds", 0)], move |c| {
            c.set_unique_session_name(name);
        })
    };
    // Two peers nobody vouches for, and the service's own uid.
    let a = h.consumer(UNKNOWN_UID);
    h.enable(a, named("a"));
    let a_sid = h.svc.session_of(a).expect("records its own session").0;
    let b = h.consumer(UNKNOWN_UID);
    let clone = |h: &mut Harness, c, id: Option<u64>, name: Option<&str>| {
        let r = h.ccall(
            c,
            ConsumerCall::CloneSession(zerotrace_core::service::CloneArgs {
                session_id: id,
                unique_session_name: name.map(str::to_owned),
                ..Default::default()
            }),
        );
        // Refused at once; a clone that goes ahead flushes first and
        // answers later.
        match h.replies(c, r).as_slice() {
            [] => "pending",
            [Reply::Ok { data, .. }]
                if CloneSessionResponseDecoder::new(data).success() == Some(true) =>
            {
                "cloned"
            }
            _ => "refused",
        }
    };
    assert_eq!(clone(&mut h, b, Some(a_sid), None), "refused", "by id");
    assert_eq!(clone(&mut h, b, None, Some("a")), "refused", "by name");
    // Detached under a key, it is not found by another unknown peer.
    let r = h.ccall(a, ConsumerCall::Detach { key: "k".into() });
    assert!(matches!(h.replies(a, r).as_slice(), [Reply::Ok { .. }]));
    let r = h.ccall(b, ConsumerCall::Attach { key: "k".into() });
    assert!(
        matches!(h.replies(b, r).as_slice(), [Reply::Err(_)]),
        "attach across unknown peers"
    );
    // Nor does an unknown peer see another's session in the service state.
    let r = h.ccall(
        b,
        ConsumerCall::QueryServiceState {
            sessions_only: true,
        },
    );
    let replies = h.replies(b, r);
    let state =
        zerotrace_protos::protos::QueryServiceStateResponseDecoder::new(ok_data(&replies[0]))
            .service_state()
            .expect("a state");
    assert_eq!(state.tracing_sessions().count(), 0, "details hidden");
    // The service's own uid may still clone it.
    let svc = h.consumer(1000);
    assert_ne!(
        clone(&mut h, svc, Some(a_sid), None),
        "refused",
        "the service's uid clones"
    );
}

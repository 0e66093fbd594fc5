//! Known answer from a recorded genuine Perfetto session
//! (`tests/vectors`): the frames the genuine producer and consumer sent
//! are fed to our service core in their recorded order (the SMB pages the
//! genuine producer committed are placed in the SMB our core handed out, as
//! the genuine service was about to read them). The trace we produce must
//! hold the genuine data packets byte for byte (trusted fields included,
//! given the recorded producer's credentials), and our service packets must
//! be the genuine service's messages, in the same order around the data.

use crate::service_support;

use serde_json::Value;
use service_support::*;
use zerotrace_core::service::{
    ConsumerCall, PeerIdentity, ProducerCall, ProducerTransport, Reply, RequestId,
};
use zerotrace_core::shm::SharedMemoryRegion;
use zerotrace_protos::protos::{
    GetAsyncCommandResponseDecoder, ObservableEventsDecoder, ObserveEventsResponseDecoder,
};

fn frames(name: &str) -> Vec<Value> {
    std::fs::read_to_string(vectors().join(name))
        .expect("vector")
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect()
}

fn packets_of(trace: &[u8]) -> Vec<Vec<u8>> {
    protozero::Decoder::new(trace)
        .map(|f| f.expect("trace").as_bytes().expect("packet").to_vec())
        .collect()
}

/// What a service packet is, by its payload field (trusted fields aside),
/// with the event kind for service events.
fn kind(p: &[u8]) -> String {
    let ids = field_ids(p);
    let main = ids
        .iter()
        .find(|f| ![3, 8, 10, 58].contains(*f))
        .copied()
        .unwrap_or(0);
    if main == 69 {
        let ev = bytes(p, 69).unwrap();
        format!("service_event.{}", field_ids(&ev)[0])
    } else {
        format!("{main}")
    }
}

#[test]
fn the_recorded_session_through_our_service_core() {
    let mut h = Harness::new();
    let consumer = h.consumer(0);
    // Our requests: one per recorded client request of the consumer.
    let mut observe = None;
    let mut enable = None;
    let cons = frames("genuine-consumer-session.jsonl");
    let prod = frames("genuine-producer-session.jsonl");
    // Replay both sockets in recorded time order.
    let mut all: Vec<(f64, bool, &Value)> = cons
        .iter()
        .map(|f| (f["t_ms"].as_f64().unwrap(), true, f))
        .chain(prod.iter().map(|f| (f["t_ms"].as_f64().unwrap(), false, f)))
        .collect();
    all.sort_by(|a, b| a.0.partial_cmp(&b.0).unwrap());

    let mut conns = std::collections::HashMap::new();
    let mut main_producer = None;
    let mut read = None;
    let mut deferred_read = false;
    for (t_ms, is_consumer, f) in all {
        // The consumer reads once its EnableTracing call is answered (the
        // genuine service answered before the producer's stop notification
        // arrived; ours waits for it, as the data source asked).
        let answered = |h: &Harness| {
            h.log.iter().any(|a| matches!(a, zerotrace_core::service::Action::Reply { request, .. } if Some(*request) == enable))
        };
        if deferred_read && answered(&h) {
            read = Some(h.ccall(consumer, ConsumerCall::ReadBuffers));
            h.finish_read(consumer);
            deferred_read = false;
        }
        h.advance_ms(((t_ms * 1e6) as u64 + 1_000 * MS).saturating_sub(h.now) / MS);
        let kind = f["kind"].as_str().unwrap();
        if is_consumer {
            if kind != "invoke" {
                continue;
            }
            let method = f["method"].as_str().unwrap();
            if method == "ReadBuffers" && !answered(&h) {
                deferred_read = true;
                continue;
            }
            let call = ConsumerCall::decode(method, &hex(f["args_hex"].as_str().unwrap())).unwrap();
            let r = h.ccall(consumer, call);
            h.finish_read(consumer);
            match method {
                "ObserveEvents" => observe = Some(r),
                "EnableTracing" => enable = Some(r),
                "ReadBuffers" => read = Some(r),
                _ => {}
            }
            continue;
        }
        let conn = f["conn"].as_u64().unwrap();
        match kind {
            "accept" => {
                let id = h
                    .svc
                    .producer_connected(
                        h.now,
                        PeerIdentity {
                            uid: 0,
                            pid: Some(31997),
                            machine_id: None,
                        },
                        ProducerTransport { can_pass_fds: true },
                    )
                    .unwrap();
                h.producers.insert(
                    id,
                    SimProducer {
                        id,
                        name: String::new(),
                        async_request: RequestId(u64::MAX),
                        arbiter: None,
                        rx: None,
                        commands: Vec::new(),
                    },
                );
                conns.insert(conn, id);
            }
            "invoke" => {
                let p = conns[&conn];
                let method = f["method"].as_str().unwrap();
                let args = hex(f["args_hex"].as_str().unwrap());
                if method == "RegisterDataSource" {
                    main_producer = Some(p);
                }
                if let Some(pages) = f["moved_pages"].as_array() {
                    let region = h.shared.borrow().smbs[&p].clone();
                    for m in pages {
                        let page = hex(m["page_hex"].as_str().unwrap());
                        let at = m["page"].as_u64().unwrap() as usize * page.len();
                        assert!(at + page.len() <= region.size());
                        // SAFETY: the test owns the region and no writer uses
                        // it; the page lies inside it.
                        unsafe {
                            std::ptr::copy_nonoverlapping(
                                page.as_ptr(),
                                region.as_ptr().add(at),
                                page.len(),
                            );
                        }
                    }
                }
                let call = ProducerCall::decode(method, &args).expect("genuine call decodes");
                let r = h.request();
                if method == "GetAsyncCommand" {
                    h.producers.get_mut(&p).unwrap().async_request = r;
                }
                h.svc.handle_producer_call(h.now, p, r, call, None);
                h.drain();
            }
            "eof" if f["dir"] == "c2s" => {
                if let Some(p) = conns.remove(&conn) {
                    h.svc.producer_disconnected(h.now, p);
                    h.drain();
                }
            }
            _ => {}
        }
    }
    // The commands the producer received are the genuine ones, in kind,
    // instance ids, target buffer, flush ids and order.
    let command = |c: &[u8]| -> String {
        let d = GetAsyncCommandResponseDecoder::new(c);
        if let Some(s) = d.setup_tracing() {
            format!("setup_tracing {:?}", s.shared_buffer_page_size_kb())
        } else if let Some(s) = d.setup_data_source() {
            let cfg = s.config().unwrap();
            format!(
                "setup {:?} {:?} {:?}",
                s.new_instance_id(),
                cfg.name(),
                cfg.target_buffer()
            )
        } else if let Some(s) = d.start_data_source() {
            format!("start {:?}", s.new_instance_id())
        } else if let Some(s) = d.stop_data_source() {
            format!("stop {:?}", s.instance_id())
        } else if let Some(f) = d.flush() {
            format!(
                "flush {:?} {:?}",
                f.data_source_ids().collect::<Vec<_>>(),
                f.request_id()
            )
        } else {
            "other".into()
        }
    };
    let main = main_producer.expect("the producer registered data sources");
    let ours: Vec<String> = h
        .producers
        .get(&main)
        .map(|p| p.commands.iter().map(|c| command(c)).collect())
        .unwrap_or_default();
    let theirs: Vec<String> = prod
        .iter()
        .filter(|f| {
            f["kind"] == "invoke_reply" && f["method"] == "GetAsyncCommand" && f["conn"] == 2
        })
        .map(|f| command(&hex(f["reply_hex"].as_str().unwrap())))
        .collect();
    assert_eq!(ours, theirs);
    // The EnableTracing reply said the session ended.
    let r = h.replies(consumer, enable.unwrap());
    assert_eq!(r.len(), 1);

    // Observable events: the same changes in the same order as the genuine
    // service sent (it batches those that happen within one task; we send
    // each as it happens).
    let ours: Vec<String> = h
        .replies(consumer, observe.unwrap())
        .iter()
        .map(|r| match r {
            Reply::Ok { data, .. } => {
                let e = ObserveEventsResponseDecoder::new(data).events().unwrap();
                event_kind(&e)
            }
            Reply::Err(e) => panic!("{e}"),
        })
        .collect();
    let theirs: Vec<String> = cons
        .iter()
        .filter(|f| f["kind"] == "invoke_reply" && f["method"] == "ObserveEvents")
        .map(|f| {
            let data = hex(f["reply_hex"].as_str().unwrap());
            event_kind(&ObserveEventsResponseDecoder::new(&data).events().unwrap())
        })
        .collect();
    let flat = |v: Vec<String>| -> Vec<String> {
        v.iter()
            .flat_map(|e| e.split(','))
            .map(str::to_owned)
            .collect()
    };
    assert_eq!(flat(ours), flat(theirs));

    // Read the trace.
    let replies = h.replies(consumer, read.unwrap());
    let mut ours = Vec::new();
    let mut partial = Vec::new();
    for r in &replies {
        let Reply::Ok { data, .. } = r else {
            panic!("read failed")
        };
        for s in zerotrace_protos::protos::ReadBuffersResponseDecoder::new(data).slices() {
            partial.extend_from_slice(s.data().unwrap());
            if s.last_slice_for_packet() == Some(true) {
                ours.push(std::mem::take(&mut partial));
            }
        }
    }
    let theirs = packets_of(&std::fs::read(vectors().join("genuine-session.pftrace")).unwrap());

    // Data packets: byte for byte, per sequence, in order.
    let data = |t: &[Vec<u8>]| -> Vec<Vec<u8>> {
        t.iter()
            .filter(|p| varint(p, 10) != Some(1))
            .cloned()
            .collect()
    };
    let (our_data, their_data) = (data(&ours), data(&theirs));
    assert_eq!(our_data.len(), 62);
    assert_eq!(
        our_data, their_data,
        "the genuine data packets, trusted fields included"
    );

    // Service packets: the same messages in the same order around the data.
    // How many clock snapshots a run of them holds depends on timing (the
    // genuine service took one a second after the start, and one at the
    // flush), so a run counts once.
    let shape = |t: &[Vec<u8>]| -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for p in t {
            let k = if varint(p, 10) == Some(1) {
                kind(p)
            } else {
                "data".into()
            };
            let repeats = k == "data" || k == "6";
            if !repeats || out.last() != Some(&k) {
                out.push(k);
            }
        }
        out
    };
    assert_eq!(shape(&ours), shape(&theirs));

    // Each kind of service packet carries the same top-level fields, and
    // the trace stats the same counters.
    let fields_of = |t: &[Vec<u8>]| -> std::collections::BTreeMap<String, Vec<u32>> {
        t.iter()
            .filter(|p| varint(p, 10) == Some(1))
            .map(|p| {
                let mut ids = field_ids(p);
                ids.sort();
                (kind(p), ids)
            })
            .collect()
    };
    assert_eq!(fields_of(&ours), fields_of(&theirs));
    let stats_fields = |t: &[Vec<u8>]| -> Vec<u32> {
        let p = t.iter().find(|p| bytes(p, 35).is_some()).unwrap();
        let mut ids = field_ids(&bytes(p, 35).unwrap());
        ids.sort();
        ids.dedup();
        ids
    };
    assert_eq!(stats_fields(&ours), stats_fields(&theirs));
}

fn event_kind(e: &ObservableEventsDecoder<'_>) -> String {
    if e.all_data_sources_started() == Some(true) {
        return "all_started".into();
    }
    let changes: Vec<String> = e
        .instance_state_changes()
        .map(|c| {
            format!(
                "{}:{}",
                c.data_source_name().unwrap_or(""),
                c.state_raw().unwrap_or(0)
            )
        })
        .collect();
    changes.join(",")
}

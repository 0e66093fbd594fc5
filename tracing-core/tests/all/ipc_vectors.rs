//! Known answers from the recorded genuine sessions: every frame the genuine
//! producer, consumer and service exchanged decodes with our frame codec,
//! re-encodes byte for byte, and reassembles from the byte stream split at
//! every point.

use crate::service_support;

use serde_json::Value;
use service_support::{hex, vectors};
use zerotrace_core::ipc::{Frame, FrameDecoder, FrameMsg};

fn recorded_frames() -> Vec<(Value, Vec<u8>)> {
    let mut out = Vec::new();
    for name in [
        "genuine-producer-session.jsonl",
        "genuine-consumer-session.jsonl",
    ] {
        let text = std::fs::read_to_string(vectors().join(name)).expect("vector");
        for line in text.lines() {
            let v: Value = serde_json::from_str(line).expect("json");
            let Some(h) = v["frame_hex"].as_str() else {
                continue;
            };
            let bytes = hex(h);
            // Only frames recorded whole (the log keeps the first KiB).
            if bytes.len() == v["len"].as_u64().unwrap() as usize + 4 {
                out.push((v, bytes));
            }
        }
    }
    out
}

#[test]
fn genuine_frames_decode_and_reencode_byte_for_byte() {
    let frames = recorded_frames();
    assert!(frames.len() > 40, "{}", frames.len());
    let mut reencoded = 0;
    for (v, bytes) in &frames {
        let f = Frame::decode(&bytes[4..]).expect("genuine frame decodes");
        assert_eq!(f.request_id, v["request_id"].as_u64().unwrap());
        match (&f.msg, v["kind"].as_str().unwrap()) {
            (FrameMsg::Bind { service_name }, "bind_service") => {
                assert_eq!(service_name, v["service_name"].as_str().unwrap())
            }
            (FrameMsg::BindReply { methods, .. }, "bind_service_reply") => {
                assert_eq!(methods.len(), v["methods"].as_object().unwrap().len())
            }
            (FrameMsg::Invoke { args, .. }, "invoke") => {
                assert_eq!(*args, hex(v["args_hex"].as_str().unwrap()))
            }
            (
                FrameMsg::InvokeReply {
                    reply, has_more, ..
                },
                "invoke_reply",
            ) => {
                assert_eq!(*has_more, v["has_more"].as_bool().unwrap());
                if v["reply_len"].as_u64().unwrap() as usize == reply.len() {
                    assert_eq!(*reply, hex(v["reply_hex"].as_str().unwrap()));
                }
            }
            (m, k) => panic!("{k}: {m:?}"),
        }
        assert_eq!(
            hex_of(&f.encode()),
            hex_of(bytes),
            "{} re-encodes byte for byte",
            v["kind"]
        );
        reencoded += 1;
    }
    assert_eq!(reencoded, frames.len());
}

#[test]
fn the_recorded_stream_reassembles_at_every_split() {
    let frames = recorded_frames();
    let stream: Vec<u8> = frames.iter().flat_map(|(_, b)| b.clone()).collect();
    for split in [1usize, 3, 4, 5, 17, 1000] {
        let mut d = FrameDecoder::new();
        let mut n = 0;
        for piece in stream.chunks(split) {
            d.push(piece);
            while let Some(f) = d.next_frame() {
                f.expect("frame");
                n += 1;
            }
        }
        assert_eq!(n, frames.len(), "split {split}");
    }
}

fn hex_of(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

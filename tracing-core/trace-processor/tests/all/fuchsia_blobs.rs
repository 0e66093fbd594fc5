//! Fuchsia traces (FXT) whose blob records of the Perfetto type carry
//! protobuf trace bytes: the packets load as a Perfetto trace's do,
//! beside the FXT records, however the file is split into pushes, and
//! blobs of other types are skipped. The records are written here from
//! the format's description (fuchsia.dev, "Fuchsia trace format"): a
//! record is a header word (type in bits 0-3, size in words in bits
//! 4-15) and its words; a blob record (type 5) has its name reference in
//! bits 16-31, its payload size in bits 32-46 and its type in bits 48-55,
//! then the inline name and the payload, padded to whole words.

use zerotrace_protos::protos::{TracePacket, track_event};
use zerotrace_trace_processor::{Loader, TraceProcessor, Value};

use crate::common::{packet, rows, trace};

/// Bytes as whole little-endian words, zero-padded.
fn words(b: &[u8]) -> Vec<u64> {
    b.chunks(8)
        .map(|c| {
            let mut w = [0u8; 8];
            w[..c.len()].copy_from_slice(c);
            u64::from_le_bytes(w)
        })
        .collect()
}

/// An FXT file being written.
struct Fxt(Vec<u64>);

impl Fxt {
    /// The magic number record.
    fn new() -> Self {
        Fxt(vec![0x0016_5478_4604_0010])
    }

    fn record(&mut self, kind: u64, bits: u64, body: &[u64]) {
        self.0.push(kind | ((1 + body.len() as u64) << 4) | bits);
        self.0.extend_from_slice(body);
    }

    /// A string table entry (string record, type 2).
    fn string(&mut self, index: u64, s: &str) {
        self.record(
            2,
            (index << 16) | ((s.len() as u64) << 32),
            &words(s.as_bytes()),
        );
    }

    /// A blob of `blob_type`: named by an inline string, or by table
    /// index `by_index` when given.
    fn blob(&mut self, blob_type: u64, name: &str, by_index: Option<u64>, payload: &[u8]) {
        let (name_ref, mut body) = match by_index {
            Some(i) => (i, Vec::new()),
            None => (0x8000 | name.len() as u64, words(name.as_bytes())),
        };
        body.extend(words(payload));
        let bits = (name_ref << 16) | ((payload.len() as u64) << 32) | (blob_type << 48);
        self.record(5, bits, &body);
    }

    /// A complete duration event (event record, type 4, event type 4) on
    /// an inline thread, category and name inline; ticks are ns.
    fn complete(&mut self, start: u64, end: u64, pid: u64, tid: u64, name: &str) {
        let cat = "cat";
        let mut body = vec![start, pid, tid];
        body.extend(words(cat.as_bytes()));
        body.extend(words(name.as_bytes()));
        body.push(end);
        let bits =
            (4 << 16) | ((0x8000 | cat.len() as u64) << 32) | ((0x8000 | name.len() as u64) << 48);
        self.record(4, bits, &body);
    }

    fn bytes(&self) -> Vec<u8> {
        self.0.iter().flat_map(|w| w.to_le_bytes()).collect()
    }
}

/// A thread's track and one slice on it, from `ts` to `ts + 50`, as a
/// Perfetto trace's bytes.
fn perfetto_slice(ts: u64, name: &str) -> Vec<u8> {
    let track = packet(|p: &mut TracePacket<'_>| {
        p.set_trusted_packet_sequence_id(9);
        p.set_timestamp(0);
        let mut td = p.begin_track_descriptor();
        td.set_uuid(77);
        let mut th = td.begin_thread();
        th.set_pid(40);
        th.set_tid(41);
        th.set_thread_name("blob thread");
    });
    let event = |t: u64, ty: track_event::Type| {
        packet(|p: &mut TracePacket<'_>| {
            p.set_trusted_packet_sequence_id(9);
            p.set_timestamp(t);
            let mut e = p.begin_track_event();
            e.set_track_uuid(77);
            e.set_type(ty);
            if ty == track_event::Type::SliceBegin {
                e.set_name(name);
            }
        })
    };
    trace(&[
        track,
        event(ts, track_event::Type::SliceBegin),
        event(ts + 50, track_event::Type::SliceEnd),
    ])
}

fn t(s: &str) -> Value {
    Value::Text(s.to_owned())
}

#[test]
fn perfetto_blobs_load_as_a_perfetto_trace() {
    let payload = perfetto_slice(1_000, "from a blob");
    // The payload split across two blobs (their payloads make one
    // stream), the first named inline, the second by table; a blob of
    // another type between them is skipped.
    let (a, b) = payload.split_at(payload.len() / 2 + 3);
    let mut f = Fxt::new();
    f.string(3, "perfetto");
    f.blob(3, "perfetto", None, a);
    f.blob(1, "other", None, b"\x0a\x05junk!");
    f.blob(3, "", Some(3), b);
    f.complete(4_000, 4_100, 1, 2, "fxt slice");
    let fxt = f.bytes();
    for step in [fxt.len(), 5, 8, 64] {
        let mut l = Loader::new();
        for c in fxt.chunks(step) {
            l.push(c).expect("push");
        }
        let tp = TraceProcessor::from_storage(l.finish().expect("finish")).expect("tables");
        assert_eq!(
            rows(&tp, "SELECT ts, dur, name FROM slice ORDER BY ts"),
            vec![
                vec![Value::Int(1_000), Value::Int(50), t("from a blob")],
                vec![Value::Int(4_000), Value::Int(100), t("fxt slice")],
            ],
            "step {step}"
        );
        assert_eq!(
            rows(&tp, "SELECT name FROM thread WHERE tid = 41"),
            vec![vec![t("blob thread")]]
        );
    }
}

#[test]
fn a_blob_running_past_its_record_is_counted() {
    let mut f = Fxt::new();
    // Claims 64 payload bytes, carries 8.
    f.record(5, (64 << 32) | (3 << 48), &[0]);
    let tp = TraceProcessor::from_bytes(&f.bytes()).expect("loads");
    assert_eq!(
        rows(
            &tp,
            "SELECT value FROM stats WHERE name = 'fuchsia_record_read_error'"
        ),
        vec![vec![Value::Int(1)]]
    );
    assert_eq!(
        rows(&tp, "SELECT COUNT(*) FROM slice"),
        vec![vec![Value::Int(0)]]
    );
}

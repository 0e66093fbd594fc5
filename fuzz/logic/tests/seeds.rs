//! Seeds that are made rather than recorded: the `derive_decoders` seeds
//! are encodings of sample values of the target's types, the
//! `trace_buffer` seeds programs of commits, patches and reads that each
//! read known packets back, and the `trace_full_schema` seeds recorded
//! traces cut to size and a skeleton of the schema; all are kept in step
//! with their target (and their recording) here (`ZEROTRACE_FUZZ_BLESS=1 cargo test -p
//! zerotrace-fuzz-logic --test seeds` rewrites them after a change).

use std::borrow::Cow;
use std::path::Path;

use protozero::{ProtoRead, ProtoWrite};
use zerotrace_fuzz_logic::derive_decoders::{Level, Node, Payload, Scalars};

fn leaf(name: &str) -> Node<'_> {
    Node {
        name,
        owned: String::new(),
        cow: Cow::Borrowed(""),
        blob: &[],
        bytes: None,
        level: Level::Unset,
        maybe_level: None,
        scalars: None,
        children: Vec::new(),
        packed: Vec::new(),
        deltas: Vec::new(),
        points: Vec::new(),
        levels: Vec::new(),
        names: Vec::new(),
        bools: Vec::new(),
        boxed: None,
        payload: None,
    }
}

/// A value with every field set.
fn everything() -> Node<'static> {
    Node {
        name: "root",
        owned: "owned".into(),
        cow: Cow::Borrowed("cow"),
        blob: &[0, 0xff, 0x80],
        bytes: Some(vec![]),
        level: Level::Negative,
        maybe_level: Some(Level::Unset),
        scalars: Some(Scalars {
            u32: u32::MAX,
            u64: 1 << 40,
            i32: -1,
            i64: i64::MIN,
            s32: -2,
            s64: i64::MAX,
            f32_bits: 0xdead_beef,
            f64_bits: 1,
            sf32: -3,
            sf64: -4,
            flag: true,
            float: -0.0,
            double: 1.5e300,
            maybe_u32: Some(0),
            maybe_flag: Some(false),
            maybe_s64: Some(-1),
            scratch: 0,
        }),
        children: vec![leaf("a"), leaf("b")],
        packed: vec![0, 1, 300, u32::MAX],
        deltas: vec![-1, 0, 1],
        points: vec![0.5, f32::INFINITY],
        levels: vec![Level::Low, Level::High, Level::Negative],
        names: vec!["x", "", "z"],
        bools: vec![true, false],
        boxed: Some(Box::new(leaf("boxed"))),
        payload: Some(Payload::Child(Box::new(leaf("child")))),
    }
}

/// A smaller value: a oneof scalar and nesting through children.
fn nested() -> Node<'static> {
    let mut inner = leaf("inner");
    inner.payload = Some(Payload::Delta(-7));
    inner.children = vec![leaf("deep")];
    let mut outer = leaf("outer");
    outer.children = vec![inner];
    outer.payload = Some(Payload::Text("text"));
    outer
}

/// `name`'s seed is `split` followed by `value`'s encoding.
fn check(name: &str, split: u8, value: &Node<'_>) {
    let mut seed = vec![split];
    seed.extend(value.write_to_vec().expect("encodes"));
    assert_eq!(
        format!("{:?}", Node::decode(&seed[1..]).expect("decodes")),
        format!("{value:?}")
    );
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../seeds/derive_decoders")
        .join(name);
    if std::env::var_os("ZEROTRACE_FUZZ_BLESS").is_some() {
        std::fs::write(&path, &seed).expect("write the seed");
    }
    let committed = std::fs::read(&path).expect("the seed is committed");
    assert!(
        committed == seed,
        "{} is stale (ZEROTRACE_FUZZ_BLESS=1 rewrites it)",
        path.display()
    );
}

#[test]
fn derive_decoders_seeds_are_encodings_of_the_samples() {
    check("every-field", 0x40, &everything());
    check("nested", 0x11, &nested());
}

/// A `trace_buffer` program (the input format of
/// `zerotrace_fuzz_logic::trace_buffer::run`), built op by op.
struct Program(Vec<u8>);

/// A sequence: (producer 0–1, writer 0–3).
type Seq = (u8, u8);

impl Program {
    /// A buffer of 256 + 64 × `size_step` bytes.
    fn new(discard: bool, size_step: u8) -> Program {
        Program(vec![size_step << 1 | u8::from(discard)])
    }

    fn op(seq: Seq, kind: u8) -> u8 {
        kind << 3 | seq.1 << 1 | seq.0
    }

    /// Reads everything readable.
    fn read(mut self) -> Program {
        self.0.push(0);
        self
    }

    /// A chunk of `seq` whose payload is `fragments` (each a length below
    /// 0x80 whose low 3 bits are the sequence's tag, so tagging keeps it).
    fn chunk(mut self, seq: Seq, id: u8, flags: u8, complete: bool, fragments: &[u8]) -> Program {
        let tag = seq.0 << 2 | seq.1;
        let mut body = Vec::new();
        for (i, &len) in fragments.iter().enumerate() {
            assert!(
                len < 0x80 && len & 7 == tag,
                "fragment length {len} for tag {tag}"
            );
            body.push(len);
            body.extend((0..len).map(|j| (j.wrapping_mul(8)).wrapping_add(i as u8 * 16) & 0x7f));
        }
        self.0.extend([
            Program::op(seq, 8),
            id,
            fragments.len() as u8,
            flags | if complete { 0 } else { 8 },
        ]);
        self.0
            .push(u8::try_from(body.len()).expect("a chunk payload under 256 bytes"));
        self.0.extend(body);
        self
    }

    /// A chunk of `seq` whose only fragment has a 4-byte size placeholder
    /// (0, redundantly encoded) before `len` bytes, waiting for its patch.
    fn chunk_to_patch(mut self, seq: Seq, id: u8, len: u8) -> Program {
        let mut body = vec![0x80, 0x80, 0x80, 0x00];
        body.extend((0..len).map(|j| j & 0x78));
        // Needs patching, and the packet goes on in the next chunk.
        self.0
            .extend([Program::op(seq, 8), id, 1, 4 | 2, body.len() as u8]);
        self.0.extend(body);
        self
    }

    /// Patches chunk `id`'s size placeholder (offset 0) to `size`.
    fn patch_size(mut self, seq: Seq, id: u8, size: u8) -> Program {
        assert!(size < 0x80 && id < 0x80);
        // The fourth patch byte is `p0` (chunk id × 2, no more pending).
        self.0
            .extend([Program::op(seq, 4), id << 1, 0, 0, 0x80 | size, 0x80, 0x80]);
        self
    }
}

/// `trace_buffer` seeds: each a program that reaches the buffer's read
/// path, with the packets (lengths, in read order) it reads back.
fn trace_buffer_seeds() -> Vec<(&'static str, Program, Vec<usize>)> {
    const A: Seq = (0, 0);
    const B: Seq = (1, 1);
    vec![
        (
            "two-sequences",
            Program::new(false, 2)
                .chunk(A, 0, 0, true, &[16, 8])
                .chunk(B, 0, 0, true, &[13, 5])
                .read(),
            vec![16, 8, 13, 5],
        ),
        (
            "packet-across-chunks",
            Program::new(false, 2)
                .chunk(A, 0, 2, true, &[8, 16])
                .read()
                .chunk(A, 1, 1, true, &[8])
                .read(),
            vec![8, 24],
        ),
        (
            "patched-size",
            Program::new(false, 2)
                .chunk_to_patch(A, 0, 16)
                .chunk(A, 1, 1, true, &[8, 32])
                // Nothing: the sequence waits for the patch.
                .read()
                .patch_size(A, 0, 16)
                .read(),
            vec![24, 32],
        ),
        (
            "incomplete-then-complete",
            Program::new(false, 2)
                // Scraped while its last packet was being written: only the
                // first is read; the committed copy (same size) adds it.
                .chunk(B, 3, 0, false, &[21, 13])
                .read()
                .chunk(B, 3, 0, true, &[21, 13])
                .read(),
            vec![21, 13],
        ),
        (
            "ring-wraps",
            // 256 bytes, written twice over: each read comes before the
            // ring overwrites what it reads.
            Program::new(false, 0)
                .chunk(A, 0, 0, true, &[40, 40])
                .chunk(B, 0, 0, true, &[45])
                .read()
                .chunk(A, 1, 0, true, &[64])
                .chunk(A, 2, 0, true, &[64])
                .chunk(B, 1, 0, true, &[37])
                .read(),
            vec![40, 40, 45, 64, 64, 37],
        ),
        (
            "discard-when-full",
            // 256 bytes: the third chunk of A does not fit and is dropped,
            // B's smaller one still does.
            Program::new(true, 0)
                .chunk(A, 0, 0, true, &[96])
                .chunk(A, 1, 0, true, &[96])
                .chunk(A, 2, 0, true, &[96])
                .chunk(B, 0, 0, true, &[29])
                .read(),
            vec![96, 96, 29],
        ),
    ]
}

#[test]
fn trace_buffer_seeds_read_packets_back() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../seeds/trace_buffer");
    if std::env::var_os("ZEROTRACE_FUZZ_BLESS").is_some() {
        std::fs::create_dir_all(&dir).expect("the seed directory");
    }
    for (name, program, packets) in trace_buffer_seeds() {
        assert_eq!(
            zerotrace_fuzz_logic::trace_buffer::run(&program.0),
            packets,
            "{name}"
        );
        let path = dir.join(name);
        if std::env::var_os("ZEROTRACE_FUZZ_BLESS").is_some() {
            std::fs::write(&path, &program.0).expect("write the seed");
        }
        let committed = std::fs::read(&path).expect("the seed is committed");
        assert!(
            committed == program.0,
            "{} is stale (ZEROTRACE_FUZZ_BLESS=1 rewrites it)",
            path.display()
        );
    }
}

/// A protobuf field as recorded: where it starts, its tag's end, and for a
/// length-delimited one its payload (offsets into the message).
struct RawField {
    id: u64,
    start: usize,
    tag_end: usize,
    payload: Option<std::ops::Range<usize>>,
    end: usize,
}

/// The varint at `buf[*pos..]`, advancing `pos`.
fn read_varint(buf: &[u8], pos: &mut usize) -> u64 {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = buf[*pos];
        *pos += 1;
        value |= u64::from(byte & 0x7f) << shift;
        if byte < 0x80 {
            return value;
        }
    }
    panic!("varint too long");
}

fn write_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// The fields of a well-formed message, with their recorded extents.
fn raw_fields(msg: &[u8]) -> Vec<RawField> {
    let mut out = Vec::new();
    let mut pos = 0;
    while pos < msg.len() {
        let start = pos;
        let tag = read_varint(msg, &mut pos);
        let tag_end = pos;
        let mut payload = None;
        match tag & 7 {
            0 => {
                read_varint(msg, &mut pos);
            }
            1 => pos += 8,
            5 => pos += 4,
            2 => {
                let len = read_varint(msg, &mut pos) as usize;
                payload = Some(pos..pos + len);
                pos += len;
            }
            w => panic!("wire type {w} in a recorded trace"),
        }
        out.push(RawField {
            id: tag >> 3,
            start,
            tag_end,
            payload,
            end: pos,
        });
    }
    out
}

/// `msg` with the first length-delimited field at `path` (field numbers,
/// outermost first) cut to its first `keep` bytes, and the lengths that
/// enclose it re-encoded; every other byte as recorded (redundant length
/// encodings included).
fn cut(msg: &[u8], path: &[u64], keep: usize) -> Vec<u8> {
    let Some((&id, rest)) = path.split_first() else {
        return msg[..keep.min(msg.len())].to_vec();
    };
    let f = raw_fields(msg)
        .into_iter()
        .find(|f| f.id == id && f.payload.is_some())
        .unwrap_or_else(|| panic!("no length-delimited field {id}"));
    let payload = cut(&msg[f.payload.clone().expect("delimited")], rest, keep);
    let mut out = msg[..f.tag_end].to_vec();
    write_varint(&mut out, payload.len() as u64);
    out.extend(payload);
    out.extend(&msg[f.end..]);
    out
}

/// The `trace_full_schema` seeds: real traces, each a `Trace` (repeated
/// `TracePacket packet = 1`) under 64 KiB, and a skeleton of the schema
/// ([`schema_skeleton`]). The genuine C SDK session
/// (`tracing-core/tests/vectors/genuine-session.pftrace`, 300 KB) split
/// into its service packets, its TrackEvent packets and its test packets,
/// each packet as recorded except the two huge strings (a 100 KB debug
/// annotation, a 200 KB `for_testing` string) cut to 2 KiB; the
/// `trace_packet` target's genuine packets as one trace; and the `zerotrace
/// demo` excerpt of the `trace_file` seeds.
fn trace_full_schema_seeds() -> Vec<(&'static str, Vec<u8>)> {
    let fuzz = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let read = |p: &str| std::fs::read(fuzz.join(p)).unwrap_or_else(|e| panic!("{p}: {e}"));
    let session = read("../tracing-core/tests/vectors/genuine-session.pftrace");
    let packets = raw_fields(&session);
    assert_eq!(packets.len(), 78, "the recorded session's packets");
    assert!(packets.iter().all(|p| p.id == 1 && p.payload.is_some()));
    let pick = |range: std::ops::RangeInclusive<usize>| -> Vec<u8> {
        let mut out = Vec::new();
        for p in &packets[range] {
            let payload = &session[p.payload.clone().expect("delimited")];
            if payload.len() <= 4096 {
                out.extend(&session[p.start..p.end]);
                continue;
            }
            // TrackEvent 11 → debug_annotations 4 → string_value 6, or
            // for_testing 900 → str 1.
            let path: &[u64] = if raw_fields(payload).iter().any(|f| f.id == 900) {
                &[900, 1]
            } else {
                &[11, 4, 6]
            };
            let small = cut(payload, path, 2048);
            out.extend(&session[p.start..p.tag_end]);
            write_varint(&mut out, small.len() as u64);
            out.extend(small);
        }
        out
    };
    let mut service = pick(0..=13);
    service.extend(pick(76..=77));
    let mut genuine_packets = Vec::new();
    for name in [
        "genuine-clock-snapshot",
        "genuine-track-descriptor",
        "genuine-track-event-interned",
    ] {
        let packet = read(&format!("seeds/trace_packet/{name}"));
        genuine_packets.push(0x0a);
        write_varint(&mut genuine_packets, packet.len() as u64);
        genuine_packets.extend(packet);
    }
    vec![
        ("genuine-session-service-packets", service),
        ("genuine-session-track-events", pick(14..=58)),
        ("genuine-session-for-testing", pick(59..=75)),
        ("genuine-trace-packets", genuine_packets),
        ("demo-excerpt", read("seeds/trace_file/demo-excerpt")),
        ("schema-skeleton", schema_skeleton()),
    ]
}

/// Highest field number probed for: upstream's largest declared field
/// number in the trace schema is `TracePacket.for_testing` = 900.
const MAX_PROBED_FIELD: u32 = 1024;

/// Deepest the skeleton nests (below the `TracePacket`), under the walk's
/// bound.
const MAX_SKELETON_DEPTH: usize = 32;

/// Builds a message's skeleton through the field enums, probing which
/// field numbers hold messages (see [`schema_skeleton`]).
struct Skeleton {
    /// Probe `id - 1`: field `id` as an empty length-delimited field (kept
    /// for the whole build: the types met borrow them).
    probes: &'static [Vec<u8>],
    /// Message types already in the skeleton.
    seen: std::collections::BTreeSet<&'static str>,
    depth: usize,
    /// The skeleton of the last nested message the probe met, if new.
    nested: Option<Vec<u8>>,
}

impl<'a> protozero::MessageVisitor<'a> for Skeleton {
    fn message<D: protozero::MessageFields<'a>>(&mut self, _: protozero::Lazy<'a, D>) {
        if self.depth < MAX_SKELETON_DEPTH && self.seen.insert(D::FULL_NAME) {
            self.depth += 1;
            self.nested = Some(self.build::<D>());
            self.depth -= 1;
        }
    }
}

impl Skeleton {
    /// Message `D` with one empty-but-for-its-own-skeleton occurrence of
    /// each message field whose type is not in the skeleton yet.
    fn build<'a, D: protozero::MessageFields<'a>>(&mut self) -> Vec<u8> {
        let mut out = Vec::new();
        for (id, probe) in (1u64..).zip(self.probes) {
            for field in protozero::Fields::<D::Field>::new(probe) {
                self.nested = None;
                protozero::FieldEnum::visit_message(&field, self);
                if let Some(nested) = self.nested.take() {
                    write_varint(&mut out, id << 3 | 2);
                    write_varint(&mut out, nested.len() as u64);
                    out.extend(nested);
                }
            }
        }
        out
    }
}

/// The one made `trace_full_schema` seed: a trace of one packet holding
/// every message type reachable from `TracePacket`, each once and empty but
/// for the fields that lead to types not met yet, found by probing each
/// field number through the generated field enums and `visit_message`
/// (no schema file is read). The fuzzer starts with a path to every
/// message type instead of having to guess the field numbers that reach
/// them.
fn schema_skeleton() -> Vec<u8> {
    use zerotrace_fuzz_full_schema::protos::TracePacketDecoder;
    let probes = (1..=MAX_PROBED_FIELD)
        .map(|id| {
            let mut probe = Vec::new();
            write_varint(&mut probe, u64::from(id) << 3 | 2);
            probe.push(0);
            probe
        })
        .collect();
    let mut skeleton = Skeleton {
        probes: Vec::leak(probes),
        seen: std::collections::BTreeSet::from(["perfetto.protos.TracePacket"]),
        depth: 0,
        nested: None,
    };
    let packet = skeleton.build::<TracePacketDecoder<'_>>();
    // 936 of the 941 generated: all but `Trace` and four no field refers
    // to (`PerfEvents` and `Profiling` only scope nested types, and
    // `LayersTraceFileProto` and `TransactionTraceFile` are the roots of
    // other file formats).
    assert!(
        skeleton.seen.len() > 900,
        "the skeleton reaches {} message types",
        skeleton.seen.len()
    );
    let mut trace = vec![0x0a];
    write_varint(&mut trace, packet.len() as u64);
    trace.extend(packet);
    trace
}

#[test]
fn trace_full_schema_seeds_are_real_traces_and_the_schema_skeleton() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../seeds/trace_full_schema");
    if std::env::var_os("ZEROTRACE_FUZZ_BLESS").is_some() {
        std::fs::create_dir_all(&dir).expect("the seed directory");
    }
    for (name, seed) in trace_full_schema_seeds() {
        assert!(seed.len() <= 64 * 1024, "{name}: {} bytes", seed.len());
        // Every seed is a well-formed trace the walk reads to its end.
        let stats = zerotrace_fuzz_logic::trace_full_schema::walk_trace(&seed);
        assert_eq!(stats.malformed, 0, "{name}: {stats:?}");
        assert_eq!(stats.cut, 0, "{name}: {stats:?}");
        let path = dir.join(name);
        if std::env::var_os("ZEROTRACE_FUZZ_BLESS").is_some() {
            std::fs::write(&path, &seed).expect("write the seed");
        }
        let committed = std::fs::read(&path).expect("the seed is committed");
        assert!(
            committed == seed,
            "{} is stale (ZEROTRACE_FUZZ_BLESS=1 rewrites it)",
            path.display()
        );
    }
}

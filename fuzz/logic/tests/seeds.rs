//! Seeds that are made rather than recorded: the `derive_decoders` seeds
//! are encodings of sample values of the target's types, and the
//! `trace_buffer` seeds programs of commits, patches and reads that each
//! read known packets back; both are kept in step with their target here
//! (`ZEROTRACE_FUZZ_BLESS=1 cargo test -p zerotrace-fuzz-logic --test
//! seeds` rewrites them after a change).

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

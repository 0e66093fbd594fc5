//! Known-answer vectors: the exact bytes of every scalar kind (cross-checked
//! against `prost`), the 4-byte redundant length varint, one-byte compaction
//! and where it must not happen, and the writer's reported errors (message
//! too long, fixed slice too small, invalid field id).

use crate::common;

use common::model::Kind;
use common::{Node, write_with};
use protozero::varint::redundant_varint4;
use protozero::{Decoder, HeapBuffer, HeapWriter, Message, NullWriter, SliceWriter, WriteError};

/// Encodes with a single large slice, compaction on or off.
fn encode(compact: bool, f: impl FnOnce(&mut Message<'_>)) -> Vec<u8> {
    encode_sliced(1 << 16, compact, f)
}

/// Encodes through heap slices of exactly `slice` bytes.
fn encode_sliced(slice: usize, compact: bool, f: impl FnOnce(&mut Message<'_>)) -> Vec<u8> {
    let mut w = HeapWriter::with_delegate(HeapBuffer::with_slice_sizes(slice, slice));
    w.set_compaction(compact);
    f(&mut w.root());
    w.finish().expect("write failed")
}

/// A closure that writes fields into a message.
type WriteFn = dyn Fn(&mut Message<'_>);
/// A closure that writes one field with the given id.
type WriteWithId = dyn Fn(&mut Message<'_>, u32);

fn prost_bytes(n: Node) -> Vec<u8> {
    prost::Message::encode_to_vec(&n)
}

fn cat(parts: &[&[u8]]) -> Vec<u8> {
    parts.concat()
}

#[test]
fn redundant_varint_vectors() {
    assert_eq!(redundant_varint4(0), [0x80, 0x80, 0x80, 0x00]);
    assert_eq!(redundant_varint4(7), [0x87, 0x80, 0x80, 0x00]);
    assert_eq!(redundant_varint4(300), [0xAC, 0x82, 0x80, 0x00]);
    assert_eq!(redundant_varint4((1 << 28) - 1), [0xFF, 0xFF, 0xFF, 0x7F]);
}

/// With compaction off every nested length is the 4-byte redundant form.
#[test]
fn nested_lengths_without_compaction() {
    let empty = encode(false, |m| {
        m.begin_nested(1);
    });
    assert_eq!(empty, [0x0A, 0x80, 0x80, 0x80, 0x00]);

    let seven = encode(false, |m| m.begin_nested(1).append_raw_bytes(&[0x55; 7]));
    assert_eq!(seven, cat(&[&[0x0A, 0x87, 0x80, 0x80, 0x00], &[0x55; 7]]));

    let three_hundred = encode(false, |m| m.begin_nested(1).append_raw_bytes(&[0x55; 300]));
    assert_eq!(
        three_hundred,
        cat(&[&[0x0A, 0xAC, 0x82, 0x80, 0x00], &[0x55; 300]])
    );
}

/// With compaction on, a payload that crosses a slice boundary keeps the
/// 4-byte form: its slot is no longer next to the cursor's slice.
#[test]
fn nested_lengths_across_slices_stay_redundant() {
    // Slices of 8 bytes: tag + slot take 5, the 7-byte payload spills over.
    let seven = encode_sliced(8, true, |m| m.begin_nested(1).append_raw_bytes(&[0x55; 7]));
    assert_eq!(seven, cat(&[&[0x0A, 0x87, 0x80, 0x80, 0x00], &[0x55; 7]]));

    let three_hundred = encode_sliced(64, true, |m| {
        m.begin_nested(1).append_raw_bytes(&[0x55; 300])
    });
    assert_eq!(
        three_hundred,
        cat(&[&[0x0A, 0xAC, 0x82, 0x80, 0x00], &[0x55; 300]])
    );
}

#[test]
fn compaction_vectors() {
    let empty = encode(true, |m| {
        m.begin_nested(1);
    });
    assert_eq!(empty, [0x0A, 0x00]);

    let max_short = encode(true, |m| m.begin_nested(1).append_raw_bytes(&[0x55; 127]));
    assert_eq!(max_short, cat(&[&[0x0A, 0x7F], &[0x55; 127]]));

    let too_long = encode(true, |m| m.begin_nested(1).append_raw_bytes(&[0x55; 128]));
    assert_eq!(
        too_long,
        cat(&[&[0x0A, 0x80, 0x81, 0x80, 0x00], &[0x55; 128]])
    );

    // Inner compacted first, then the outer sees the shrunk payload.
    let nested = encode(true, |m| {
        let mut outer = m.begin_nested(1);
        outer.begin_nested(2).append_raw_bytes(&[0x55; 7]);
    });
    assert_eq!(nested, cat(&[&[0x0A, 0x09, 0x12, 0x07], &[0x55; 7]]));

    // Inner compacted, outer too long for one byte.
    let mixed = encode(true, |m| {
        let mut outer = m.begin_nested(1);
        outer.begin_nested(2).append_raw_bytes(&[0x55; 7]);
        outer.append_raw_bytes(&[0x66; 200]);
    });
    assert_eq!(
        mixed,
        cat(&[
            &[0x0A, 0xD1, 0x81, 0x80, 0x00, 0x12, 0x07],
            &[0x55; 7],
            &[0x66; 200]
        ])
    );

    // A sibling after a compacted child is written right after it.
    let siblings = encode(true, |m| {
        m.begin_nested(1).append_uint32(1, 1);
        m.append_uint32(2, 3);
    });
    assert_eq!(siblings, [0x0A, 0x02, 0x08, 0x01, 0x10, 0x03]);

    // Packed varints use the same slot: [1, 300].
    let packed = encode(true, |m| m.append_packed_varint(4, [1, 300]));
    assert_eq!(packed, [0x22, 0x03, 0x01, 0xAC, 0x02]);
    let packed = encode(false, |m| m.append_packed_varint(4, [1, 300]));
    assert_eq!(packed, [0x22, 0x83, 0x80, 0x80, 0x00, 0x01, 0xAC, 0x02]);
}

/// Our decoder accepts both length forms.
#[test]
fn decoder_accepts_both_length_forms() {
    for bytes in [
        cat(&[&[0x0A, 0x03], b"abc"]),
        cat(&[&[0x0A, 0x83, 0x80, 0x80, 0x00], b"abc"]),
    ] {
        let f = Decoder::new(&bytes)
            .next()
            .expect("a field")
            .expect("valid");
        assert_eq!((f.id, f.as_bytes()), (1, Ok(&b"abc"[..])));
    }
}

/// Each scalar kind, field ids as in the model so prost gives the same bytes.
#[test]
fn scalar_vectors_match_protobuf() {
    let ff9 = [0xFF; 9];
    let cases: Vec<(&str, Box<WriteFn>, Node, Vec<u8>)> = vec![
        (
            "int32 -1",
            Box::new(|m| m.append_int32(1, -1)),
            Node {
                i32: Some(-1),
                ..Node::default()
            },
            cat(&[&[0x08], &ff9, &[0x01]]),
        ),
        (
            "int32 150",
            Box::new(|m| m.append_int32(1, 150)),
            Node {
                i32: Some(150),
                ..Node::default()
            },
            vec![0x08, 0x96, 0x01],
        ),
        (
            "int64 min",
            Box::new(|m| m.append_int64(2, i64::MIN)),
            Node {
                i64: Some(i64::MIN),
                ..Node::default()
            },
            cat(&[&[0x10], &[0x80; 9], &[0x01]]),
        ),
        (
            "uint32 max",
            Box::new(|m| m.append_uint32(3, u32::MAX)),
            Node {
                u32: Some(u32::MAX),
                ..Node::default()
            },
            vec![0x18, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F],
        ),
        (
            "uint64 max",
            Box::new(|m| m.append_uint64(4, u64::MAX)),
            Node {
                u64: Some(u64::MAX),
                ..Node::default()
            },
            cat(&[&[0x20], &ff9, &[0x01]]),
        ),
        (
            "sint32 -1",
            Box::new(|m| m.append_sint32(5, -1)),
            Node {
                s32: Some(-1),
                ..Node::default()
            },
            vec![0x28, 0x01],
        ),
        (
            "sint32 min",
            Box::new(|m| m.append_sint32(5, i32::MIN)),
            Node {
                s32: Some(i32::MIN),
                ..Node::default()
            },
            vec![0x28, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F],
        ),
        (
            "sint64 -2",
            Box::new(|m| m.append_sint64(6, -2)),
            Node {
                s64: Some(-2),
                ..Node::default()
            },
            vec![0x30, 0x03],
        ),
        (
            "bool true",
            Box::new(|m| m.append_bool(7, true)),
            Node {
                b: Some(true),
                ..Node::default()
            },
            vec![0x38, 0x01],
        ),
        (
            "bool false",
            Box::new(|m| m.append_bool(7, false)),
            Node {
                b: Some(false),
                ..Node::default()
            },
            vec![0x38, 0x00],
        ),
        (
            "enum -2",
            Box::new(|m| m.append_enum(8, Kind::Negative as i32)),
            Node {
                e: Some(Kind::Negative as i32),
                ..Node::default()
            },
            cat(&[&[0x40, 0xFE], &[0xFF; 8], &[0x01]]),
        ),
        (
            "fixed32",
            Box::new(|m| m.append_fixed32(9, 0x1234_5678)),
            Node {
                fx32: Some(0x1234_5678),
                ..Node::default()
            },
            vec![0x4D, 0x78, 0x56, 0x34, 0x12],
        ),
        (
            "fixed64",
            Box::new(|m| m.append_fixed64(10, 0x0102_0304_0506_0708)),
            Node {
                fx64: Some(0x0102_0304_0506_0708),
                ..Node::default()
            },
            vec![0x51, 8, 7, 6, 5, 4, 3, 2, 1],
        ),
        (
            "sfixed32 -1",
            Box::new(|m| m.append_sfixed32(11, -1)),
            Node {
                sfx32: Some(-1),
                ..Node::default()
            },
            vec![0x5D, 0xFF, 0xFF, 0xFF, 0xFF],
        ),
        (
            "sfixed64 -2",
            Box::new(|m| m.append_sfixed64(12, -2)),
            Node {
                sfx64: Some(-2),
                ..Node::default()
            },
            cat(&[&[0x61, 0xFE], &[0xFF; 7]]),
        ),
        (
            "float 1.0",
            Box::new(|m| m.append_float(13, 1.0)),
            Node {
                fl: Some(1.0),
                ..Node::default()
            },
            vec![0x6D, 0x00, 0x00, 0x80, 0x3F],
        ),
        (
            "double 1.0",
            Box::new(|m| m.append_double(14, 1.0)),
            Node {
                db: Some(1.0),
                ..Node::default()
            },
            vec![0x71, 0, 0, 0, 0, 0, 0, 0xF0, 0x3F],
        ),
        (
            "string",
            Box::new(|m| m.append_string(15, "hi")),
            Node {
                s: Some("hi".into()),
                ..Node::default()
            },
            vec![0x7A, 0x02, b'h', b'i'],
        ),
        (
            "bytes (2-byte tag)",
            Box::new(|m| m.append_bytes(16, &[0, 0xFF])),
            Node {
                by: Some(vec![0, 0xFF]),
                ..Node::default()
            },
            vec![0x82, 0x01, 0x02, 0x00, 0xFF],
        ),
        (
            "packed fixed32",
            Box::new(|m| m.append_packed_fixed32(25, &[1, 2])),
            Node {
                p_fx32: vec![1, 2],
                ..Node::default()
            },
            vec![0xCA, 0x01, 0x08, 1, 0, 0, 0, 2, 0, 0, 0],
        ),
        (
            "packed sint32",
            Box::new(|m| m.append_packed_sint32(21, [-1, 1])),
            Node {
                p_s32: vec![-1, 1],
                ..Node::default()
            },
            vec![0xAA, 0x01, 0x02, 0x01, 0x02],
        ),
        (
            "packed double",
            Box::new(|m| m.append_packed_double(30, &[-0.0])),
            Node {
                p_db: vec![-0.0],
                ..Node::default()
            },
            vec![0xF2, 0x01, 0x08, 0, 0, 0, 0, 0, 0, 0, 0x80],
        ),
        (
            "packed int32 -1 (sign-extended)",
            Box::new(|m| m.append_packed_int32(17, [-1])),
            Node {
                p_i32: vec![-1],
                ..Node::default()
            },
            cat(&[&[0x8A, 0x01, 0x0A], &ff9, &[0x01]]),
        ),
        (
            "largest field id",
            Box::new(|m| m.append_uint64(536_870_911, 1)),
            Node {
                max_id: Some(1),
                ..Node::default()
            },
            vec![0xF8, 0xFF, 0xFF, 0xFF, 0x0F, 0x01],
        ),
    ];
    for (name, write, node, expected) in cases {
        assert_eq!(encode(true, |m| write(m)), expected, "{name}");
        assert_eq!(prost_bytes(node), expected, "{name} (prost)");
    }
}

/// NaN payloads and negative zero travel bit-exactly.
#[test]
fn float_bits_are_preserved() {
    let nan = f32::from_bits(0x7FC0_1234);
    let bytes = encode(true, |m| {
        m.append_float(13, nan);
        m.append_double(14, -0.0);
    });
    assert_eq!(
        bytes,
        [
            0x6D, 0x34, 0x12, 0xC0, 0x7F, 0x71, 0, 0, 0, 0, 0, 0, 0, 0x80
        ]
    );
}

/// Writes a nested message whose payload is `len` bytes through a discarding
/// writer (no 256 MiB allocation): 1 MiB pieces from one reused buffer.
fn nested_of_len(len: usize) -> Option<WriteError> {
    const PIECE: usize = 1 << 20;
    let piece = vec![0u8; PIECE];
    let mut w = NullWriter::new();
    {
        let mut root = w.root();
        let mut child = root.begin_nested(1);
        let mut left = len;
        while left > 0 {
            let n = left.min(PIECE);
            child.append_raw_bytes(&piece[..n]);
            left -= n;
        }
    }
    w.error()
}

#[test]
#[cfg_attr(miri, ignore = "writes 256 MiB")]
fn message_length_limit() {
    const MAX: usize = (1 << 28) - 1;
    assert_eq!(nested_of_len(MAX), None);
    assert_eq!(
        nested_of_len(MAX + 1),
        Some(WriteError::MessageTooLong { len: MAX + 1 })
    );
}

/// The TRACE_EVENT-like packet used for buffer-size sweeps.
fn packet(m: &mut Message<'_>) {
    m.append_uint64(8, 1_234_567_890_123);
    m.append_uint32(13, 2);
    let mut te = m.begin_nested(11);
    te.append_enum(9, 1);
    te.append_uint64(11, 0xDEAD_BEEF);
    te.append_uint64(10, 5);
    te.append_uint64(3, 1);
    {
        let mut da = te.begin_nested(4);
        da.append_uint64(1, 1);
        da.append_int64(4, -42);
    }
    let mut da = te.begin_nested(4);
    da.append_uint64(1, 2);
    da.append_string(6, "a string value");
}

/// Every buffer size from 0 up: too small is `OutOfSpace`, never a panic and
/// never a partial success; without compaction the exact size suffices.
#[test]
fn slice_writer_overflow_is_reported() {
    for compact in [false, true] {
        let full = encode(compact, packet);
        let contiguous = encode(false, packet);
        for len in 0..=contiguous.len() + 4 {
            let mut buf = vec![0u8; len];
            let mut w = SliceWriter::new(&mut buf);
            w.set_compaction(compact);
            packet(&mut w.root());
            // More writes after a failure are dropped quietly.
            w.root().append_string(1, "after");
            let written = w.written();
            match w.finish() {
                Ok(bytes) => {
                    assert!(compact || len >= contiguous.len(), "len {len}");
                    let mut expected = full.clone();
                    expected.extend_from_slice(&[0x0A, 0x05]);
                    expected.extend_from_slice(b"after");
                    assert_eq!(bytes, &expected[..]);
                }
                Err(e) => {
                    assert!(matches!(e, WriteError::OutOfSpace { .. }), "{e:?}");
                    assert!(len < contiguous.len() + 7, "len {len}");
                    assert!(written >= full.len());
                }
            }
        }
    }
}

#[test]
fn invalid_field_ids_are_errors() {
    let bad: [(u32, &WriteWithId); 4] = [
        (0, &|m, id| m.append_uint32(id, 1)),
        (0, &|m, id| {
            m.begin_nested(id);
        }),
        (1 << 29, &|m, id| m.append_string(id, "x")),
        (u32::MAX, &|m, id| m.append_fixed64(id, 1)),
    ];
    for (id, write) in bad {
        let mut w = HeapWriter::new();
        write(&mut w.root(), id);
        assert_eq!(w.finish(), Err(WriteError::InvalidFieldId { id }));
    }
    // The first error sticks.
    let mut buf = [0u8; 4];
    let mut w = SliceWriter::new(&mut buf);
    {
        let mut root = w.root();
        root.append_uint32(0, 1);
        root.append_string(1, "does not fit");
    }
    assert_eq!(w.finish(), Err(WriteError::InvalidFieldId { id: 0 }));
}

/// The model writer and prost agree byte-for-byte on a flat message when our
/// packed varints are the only nested lengths and compaction shrinks them.
#[test]
fn flat_node_matches_prost_exactly() {
    let n = Node {
        i32: Some(-5),
        u64: Some(300),
        s: Some("x".repeat(200)),
        p_u64: vec![1, 2, 3],
        p_fx64: vec![9],
        u_i32: vec![-1, 2],
        u_s: vec!["a".into(), String::new()],
        hi: vec!["hi".into()],
        max_id: Some(0),
        ..Node::default()
    };
    let mut w = HeapWriter::new();
    write_with(&mut w, &n, true);
    assert_eq!(w.finish().expect("write"), prost_bytes(n));
}

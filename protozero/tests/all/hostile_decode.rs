//! Hostile input for the decoders: every malformed shape named in the issue
//! gives a typed error or the end of iteration, never a panic, never a slice
//! outside the input, never recursion (100 000 nesting levels are walked in a
//! loop). A property test feeds random bytes and mutated valid encodings to
//! every decoder entry point.

use crate::common;

use common::model::tree;
use common::{decode_iter, write_random};
use proptest::prelude::*;
use protozero::varint::{encode_varint, redundant_varint4};
use protozero::{
    DecodeError, Decoder, Field, FieldValue, PackedFixed32, PackedFixed64, PackedVarints,
    RepeatedFields, TypedDecoder,
};

/// All results of a decoder over `buf`, in order.
fn fields(buf: &[u8]) -> Vec<Result<Field<'_>, DecodeError>> {
    Decoder::new(buf).collect()
}

/// The single error `buf` produces right away.
fn first_error(buf: &[u8]) -> DecodeError {
    let all = fields(buf);
    assert_eq!(all.len(), 1, "{all:?}");
    all[0].expect_err("malformed input must fail")
}

#[test]
fn truncated_varints() {
    assert_eq!(first_error(&[0x80]), DecodeError::TruncatedVarint);
    assert_eq!(
        first_error(&[0x08, 0x80, 0x80]),
        DecodeError::TruncatedVarint
    );
    assert_eq!(first_error(&[0x0A, 0x80]), DecodeError::TruncatedVarint);
    assert_eq!(first_error(&[0x08]), DecodeError::TruncatedVarint);
}

#[test]
fn overlong_varints() {
    let mut eleven = vec![0x08];
    eleven.extend_from_slice(&[0xFF; 10]);
    eleven.push(0x01);
    assert_eq!(first_error(&eleven), DecodeError::VarintTooLong);
    assert_eq!(first_error(&[0xFF; 11]), DecodeError::VarintTooLong);
    // Ten bytes is the limit and still fine.
    let mut ten = vec![0x08];
    ten.extend_from_slice(&[0xFF; 9]);
    ten.push(0x01);
    assert_eq!(
        fields(&ten),
        [Ok(Field {
            id: 1,
            value: FieldValue::Varint(u64::MAX)
        })]
    );
}

#[test]
fn lengths_past_the_end() {
    assert_eq!(
        first_error(&[0x0A, 0x05, 1, 2]),
        DecodeError::LengthOutOfBounds {
            id: 1,
            len: 5,
            remaining: 2
        }
    );
    let mut huge = vec![0x0A];
    huge.extend_from_slice(&[0xFF; 9]);
    huge.push(0x01);
    huge.push(0x00);
    assert_eq!(
        first_error(&huge),
        DecodeError::LengthOutOfBounds {
            id: 1,
            len: u64::MAX,
            remaining: 1
        }
    );
    // The maximal 4-byte redundant length.
    assert_eq!(
        first_error(&[0x0A, 0xFF, 0xFF, 0xFF, 0x7F, 0x00]),
        DecodeError::LengthOutOfBounds {
            id: 1,
            len: (1 << 28) - 1,
            remaining: 1
        }
    );
}

#[test]
fn invalid_field_ids() {
    assert_eq!(
        first_error(&[0x00, 0x01]),
        DecodeError::InvalidFieldId { id: 0 }
    );
    assert_eq!(
        first_error(&[0x02, 0x00]),
        DecodeError::InvalidFieldId { id: 0 }
    );
    // id 2^29: tag 2^32, one past the largest id.
    assert_eq!(
        first_error(&[0x80, 0x80, 0x80, 0x80, 0x10, 0x01]),
        DecodeError::InvalidFieldId { id: 1 << 29 }
    );
    let mut max = [0u8; 10];
    let n = encode_varint(u64::MAX, &mut max);
    assert_eq!(
        first_error(&max[..n]),
        DecodeError::InvalidFieldId { id: u64::MAX >> 3 }
    );
}

#[test]
fn unsupported_wire_types() {
    for wire_type in [3u8, 4, 6, 7] {
        assert_eq!(
            first_error(&[0x08 | wire_type, 0x00, 0x00]),
            DecodeError::UnsupportedWireType { id: 1, wire_type }
        );
    }
}

#[test]
fn truncated_fixed() {
    assert_eq!(
        first_error(&[0x0D, 1, 2, 3]),
        DecodeError::TruncatedFixed { id: 1 }
    );
    assert_eq!(
        first_error(&[0x09, 1, 2, 3, 4, 5, 6, 7]),
        DecodeError::TruncatedFixed { id: 1 }
    );
}

/// Good fields before the damage are returned; the error comes once, then the
/// iterator stays finished.
#[test]
fn error_after_good_fields_is_final() {
    let buf = [0x08, 0x01, 0x15, 1, 2, 3, 4, 0x0B, 0x08, 0x02];
    let mut d = Decoder::new(&buf);
    assert_eq!(d.next().map(|r| r.map(|f| f.id)), Some(Ok(1)));
    assert_eq!(d.next().map(|r| r.map(|f| f.id)), Some(Ok(2)));
    assert_eq!(
        d.next(),
        Some(Err(DecodeError::UnsupportedWireType {
            id: 1,
            wire_type: 3
        }))
    );
    assert_eq!(d.next(), None);
    assert_eq!(d.next(), None);

    let t = TypedDecoder::<'_, 8>::new(&buf);
    assert_eq!(t.get(1).map(|f| f.as_u64()), Some(Ok(1)));
    assert_eq!(t.get(2).map(|f| f.as_fixed32()), Some(Ok(0x0403_0201)));
    assert_eq!(
        t.error(),
        Some(DecodeError::UnsupportedWireType {
            id: 1,
            wire_type: 3
        })
    );

    let mut r = RepeatedFields::new(&buf, 0, 1);
    assert_eq!(r.next().map(|f| f.as_u64()), Some(Ok(1)));
    assert!(r.next().is_none());
    assert!(r.error().is_some());
}

/// Typed accessors refuse the wrong wire type and invalid UTF-8.
#[test]
fn accessor_errors() {
    let buf = [0x08, 0x01, 0x12, 0x02, 0xC3, 0x28];
    let f: Vec<_> = Decoder::new(&buf).map(|r| r.expect("valid")).collect();
    assert_eq!(
        f[0].as_bytes(),
        Err(DecodeError::WrongWireType {
            id: 1,
            expected: 2,
            found: 0
        })
    );
    assert!(matches!(
        f[0].as_message(),
        Err(DecodeError::WrongWireType { .. })
    ));
    assert!(matches!(
        f[1].as_fixed64(),
        Err(DecodeError::WrongWireType { .. })
    ));
    assert_eq!(f[1].as_str(), Err(DecodeError::InvalidUtf8 { id: 2 }));
}

#[test]
fn packed_fixed_with_bad_length() {
    assert_eq!(
        PackedFixed32::new(&[1, 2, 3]).err(),
        Some(DecodeError::PackedLength { len: 3, elem: 4 })
    );
    assert_eq!(
        PackedFixed64::new(&[0; 12]).err(),
        Some(DecodeError::PackedLength { len: 12, elem: 8 })
    );
    let buf = [0x0A, 0x06, 1, 0, 0, 0, 2, 0];
    let f = Decoder::new(&buf).next().expect("field").expect("valid");
    assert!(f.packed_fixed32().is_err());
    assert!(f.packed_fixed64().is_err());
}

#[test]
fn packed_varints_truncated_sticky_error() {
    let mut it = PackedVarints::new(&[0x01, 0xAC, 0x02, 0x80]);
    assert_eq!(it.next(), Some(1));
    assert_eq!(it.next(), Some(300));
    assert_eq!(it.next(), None);
    assert_eq!(it.error(), Some(DecodeError::TruncatedVarint));
    assert_eq!(it.next(), None);
    assert_eq!(it.error(), Some(DecodeError::TruncatedVarint));

    let mut long = vec![0x05];
    long.extend_from_slice(&[0xFF; 11]);
    let mut it = PackedVarints::new(&long);
    assert_eq!(it.by_ref().count(), 1);
    assert_eq!(it.error(), Some(DecodeError::VarintTooLong));

    let mut clean = PackedVarints::new(&[0x01, 0x02]);
    assert_eq!(clean.by_ref().count(), 2);
    assert_eq!(clean.error(), None);
}

const LEVELS: usize = 100_000;

/// `LEVELS` messages nested through field 1, innermost empty; `redundant`
/// picks the 4-byte length form.
fn deep_chain(redundant: bool) -> Vec<u8> {
    let mut lens = Vec::with_capacity(LEVELS);
    let mut len = 0usize;
    for _ in 0..LEVELS {
        lens.push(len);
        let mut tmp = [0u8; 10];
        len += 1 + if redundant {
            4
        } else {
            encode_varint(len as u64, &mut tmp)
        };
    }
    let mut out = Vec::with_capacity(len);
    for &l in lens.iter().rev() {
        out.push(0x0A);
        if redundant {
            out.extend_from_slice(&redundant_varint4(l as u32));
        } else {
            let mut tmp = [0u8; 10];
            let n = encode_varint(l as u64, &mut tmp);
            out.extend_from_slice(&tmp[..n]);
        }
    }
    out
}

/// Descends through field 1 in a loop; returns the depth reached and the
/// error that stopped it, if any.
fn descend(buf: &[u8]) -> (usize, Option<DecodeError>) {
    let mut cur = buf;
    let mut depth = 0;
    loop {
        match Decoder::new(cur).next() {
            None => return (depth, None),
            Some(Err(e)) => return (depth, Some(e)),
            Some(Ok(f)) => match f.as_message() {
                Ok(inner) => {
                    cur = inner.buffer();
                    depth += 1;
                }
                Err(e) => return (depth, Some(e)),
            },
        }
    }
}

#[test]
fn hundred_thousand_levels_are_walked_without_recursion() {
    for redundant in [false, true] {
        let buf = deep_chain(redundant);
        assert_eq!(descend(&buf), (LEVELS, None));
        let t = TypedDecoder::<'_, 4>::new(&buf);
        assert_eq!(t.error(), None);
        assert!(t.has(1));
    }
}

#[test]
fn deeply_nested_garbage() {
    // Every level claims 2^28 − 1 bytes.
    let garbage: Vec<u8> = [0x0A, 0xFF, 0xFF, 0xFF, 0x7F].repeat(LEVELS);
    let (depth, err) = descend(&garbage);
    assert_eq!(depth, 0);
    assert!(matches!(err, Some(DecodeError::LengthOutOfBounds { .. })));

    // A valid chain whose innermost field claims 5 bytes it does not have.
    let mut buf = deep_chain(false);
    let last = buf.len() - 1;
    assert_eq!(buf[last - 1..], [0x0A, 0x00]);
    buf[last] = 0x05;
    assert_eq!(
        descend(&buf),
        (
            LEVELS - 1,
            Some(DecodeError::LengthOutOfBounds {
                id: 1,
                len: 5,
                remaining: 0
            })
        )
    );
}

/// Panics unless `part` lies inside `whole`.
fn assert_within(part: &[u8], whole: &[u8]) {
    let w = whole.as_ptr_range();
    let p = part.as_ptr_range();
    assert!(
        part.is_empty() || (p.start >= w.start && p.end <= w.end),
        "slice outside the input"
    );
}

/// Drives every decoder entry point over `input` and every length-delimited
/// payload inside it (as a message, string and packed array), with an explicit
/// work list. Returns the number of fields seen.
fn exercise(input: &[u8]) -> usize {
    let mut seen = 0;
    let mut work = vec![input];
    while let Some(buf) = work.pop() {
        let mut d = Decoder::new(buf);
        while let Some(r) = d.next() {
            assert!(d.offset() <= buf.len());
            let Ok(f) = r else { break };
            seen += 1;
            let _ = (
                f.as_u64(),
                f.as_sint32(),
                f.as_f64(),
                f.as_f32(),
                f.as_bool(),
            );
            if let FieldValue::Bytes(b) = f.value {
                assert_within(b, input);
                if let Ok(s) = f.as_str() {
                    assert_within(s.as_bytes(), input);
                }
                if let Ok(mut it) = f.packed_varints() {
                    let _ = it.by_ref().count();
                    let _ = it.error();
                }
                if let Ok(it) = f.packed_fixed32() {
                    assert_eq!(it.count(), b.len() / 4);
                }
                if let Ok(it) = f.packed_fixed64() {
                    assert_eq!(it.count(), b.len() / 8);
                }
                if let Ok(m) = f.as_message() {
                    assert_within(m.buffer(), input);
                }
                work.push(b);
            }
        }
        assert_within(d.remaining(), input);

        let t = TypedDecoder::<'_, 8>::new(buf);
        for id in 0..12 {
            if let Some(f) = t.get(id) {
                assert_eq!(f.id, id);
                if let FieldValue::Bytes(b) = f.value {
                    assert_within(b, input);
                }
            }
            for f in t.repeated(id) {
                assert_eq!(f.id, id);
                if let FieldValue::Bytes(b) = f.value {
                    assert_within(b, input);
                }
            }
        }
        for f in t.spilled() {
            assert!(f.id >= 8);
        }
        if let Some(f) = Decoder::new(buf).find_last(1) {
            assert_eq!(f.id, 1);
        }
        for start in [0, 1, buf.len() / 2, buf.len(), buf.len() + 3] {
            let _ = Decoder::at(buf, start).count();
            let _ = RepeatedFields::new(buf, start, 1).count();
        }
    }
    seen
}

/// Applies `(position, byte, kind)` edits: overwrite, insert, delete, truncate.
fn mutate(mut bytes: Vec<u8>, edits: &[(usize, u8, u8)]) -> Vec<u8> {
    for &(pos, byte, kind) in edits {
        let len = bytes.len();
        let at = if len == 0 { 0 } else { pos % len };
        match kind % 4 {
            0 if len > 0 => bytes[at] = byte,
            1 => bytes.insert(at.min(len), byte),
            2 if len > 0 => {
                bytes.remove(at);
            }
            3 => bytes.truncate(at),
            _ => {}
        }
    }
    bytes
}

proptest! {
    #![proptest_config(ProptestConfig { cases: if cfg!(miri) { 2 } else { 1024 }, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        exercise(&bytes);
        let mut it = PackedVarints::new(&bytes);
        let n = it.by_ref().count();
        prop_assert!(n <= bytes.len());
        let _ = PackedFixed32::new(&bytes).map(Iterator::count);
        let _ = PackedFixed64::new(&bytes).map(Iterator::count);
    }

    /// Bytes that look like protobuf: tags with every wire type, small lengths.
    #[test]
    fn protobuf_shaped_garbage_never_panics(
        parts in proptest::collection::vec((1u32..40, 0u8..8, any::<u64>(), 0usize..40), 0..40),
    ) {
        let mut bytes = Vec::new();
        let mut tmp = [0u8; 10];
        for (id, wt, value, len) in parts {
            let n = encode_varint(u64::from(id << 3 | u32::from(wt)), &mut tmp);
            bytes.extend_from_slice(&tmp[..n]);
            let n = encode_varint(if wt == 2 { len as u64 } else { value }, &mut tmp);
            bytes.extend_from_slice(&tmp[..n]);
            bytes.extend(std::iter::repeat_n(0x0A, len.min(8)));
        }
        exercise(&bytes);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: if cfg!(miri) { 2 } else { 128 }, ..ProptestConfig::default() })]

    /// Valid encodings (ours, with mixed length forms), damaged at random.
    #[test]
    fn mutated_encodings_never_panic(
        n in tree(),
        seed in any::<u64>(),
        edits in proptest::collection::vec((any::<usize>(), any::<u8>(), any::<u8>()), 1..8),
    ) {
        let (mut bytes, _) = write_random(&n, seed, 64, seed % 2 == 0);
        // Undamaged, it is valid; cut to keep the walk short, then damaged.
        prop_assert!(decode_iter(&bytes).is_ok());
        bytes.truncate(8192);
        exercise(&bytes);
        exercise(&mutate(bytes, &edits));
    }
}

//! The typed decoder agrees with a plain scan of the same bytes for every
//! field id, inside and beyond its dense table: `get` is the last
//! occurrence, `has` whether there is one, `repeated` every occurrence in
//! arrival order (reporting the message's parse error only for ids that
//! occur), `spilled` every field beyond the table in order. Inputs are
//! random fields with small and large ids, optionally followed by garbage,
//! read with and without group support.

use proptest::prelude::*;
use protozero::varint::encode_varint;
use protozero::{DecodeError, Decoder, Field, TypedDecoder};

/// Dense table size: ids 1..=3 are dense, the rest are looked up by scan.
const N: usize = 4;
const IDS: [u32; 7] = [1, 2, 3, 4, 100, 1000, 536_870_911];

fn tag(id: u32, wire: u64, out: &mut Vec<u8>) {
    let mut b = [0u8; 10];
    let n = encode_varint((u64::from(id) << 3) | wire, &mut b);
    out.extend_from_slice(&b[..n]);
}

fn varint(v: u64, out: &mut Vec<u8>) {
    let mut b = [0u8; 10];
    let n = encode_varint(v, &mut b);
    out.extend_from_slice(&b[..n]);
}

/// One field: id index, shape (varint, fixed64, bytes, fixed32, group), value.
fn encode(fields: &[(usize, u8, u64)], tail: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    for &(i, shape, v) in fields {
        let id = IDS[i % IDS.len()];
        match shape % 5 {
            0 => {
                tag(id, 0, &mut out);
                varint(v, &mut out);
            }
            1 => {
                tag(id, 1, &mut out);
                out.extend_from_slice(&v.to_le_bytes());
            }
            2 => {
                tag(id, 2, &mut out);
                let payload = v.to_le_bytes();
                let len = (v % 9) as usize;
                varint(len as u64, &mut out);
                out.extend_from_slice(&payload[..len.min(8)]);
                out.extend(core::iter::repeat_n(0xEE, len.saturating_sub(8)));
            }
            3 => {
                tag(id, 5, &mut out);
                out.extend_from_slice(&(v as u32).to_le_bytes());
            }
            _ => {
                tag(id, 3, &mut out);
                tag(7, 0, &mut out);
                varint(v, &mut out);
                tag(id, 4, &mut out);
            }
        }
    }
    out.extend_from_slice(tail);
    out
}

/// The reference: the fields a plain scan accepts, and the error it stops at.
fn scan(buf: &[u8], groups: bool) -> (Vec<Field<'_>>, Option<DecodeError>) {
    let it = Decoder::new(buf);
    let it = if groups { it.accept_groups() } else { it };
    let mut fields = Vec::new();
    for r in it {
        match r {
            Ok(f) => fields.push(f),
            Err(e) => return (fields, Some(e)),
        }
    }
    (fields, None)
}

fn check(buf: &[u8], groups: bool) {
    let d = if groups {
        TypedDecoder::<'_, N>::with_groups(buf)
    } else {
        TypedDecoder::<'_, N>::new(buf)
    };
    let (fields, error) = scan(buf, groups);
    assert_eq!(d.error(), error);
    for id in IDS.iter().copied().chain([5, 101, 999]) {
        let all: Vec<Field<'_>> = fields.iter().copied().filter(|f| f.id == id).collect();
        assert_eq!(d.get(id), all.last().copied(), "get({id})");
        assert_eq!(d.has(id), !all.is_empty(), "has({id})");
        let mut rep = d.repeated(id);
        let got: Vec<Field<'_>> = rep.by_ref().collect();
        assert_eq!(got, all, "repeated({id})");
        let expected_error = if all.is_empty() { None } else { error };
        assert_eq!(rep.error(), expected_error, "repeated({id}).error()");
    }
    let high: Vec<Field<'_>> = fields
        .iter()
        .copied()
        .filter(|f| f.id as usize >= N)
        .collect();
    assert_eq!(d.spilled().collect::<Vec<_>>(), high);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: if cfg!(miri) { 2 } else { 512 }, ..ProptestConfig::default() })]

    #[test]
    fn typed_decoder_matches_a_plain_scan(
        fields in proptest::collection::vec((0usize..7, 0u8..5, any::<u64>()), 0..24),
        tail in proptest::collection::vec(any::<u8>(), 0..6),
    ) {
        let buf = encode(&fields, &tail);
        check(&buf, false);
        check(&buf, true);
    }
}

#[test]
fn high_ids_last_one_wins_and_arrive_in_order() {
    // 100 = 1, 2 = 5, 100 = 2, 1000 = 3, 100 = 3.
    let buf = encode(
        &[(4, 0, 1), (1, 0, 5), (4, 0, 2), (5, 0, 3), (4, 0, 3)],
        &[],
    );
    let d = TypedDecoder::<'_, N>::new(&buf);
    assert_eq!(d.get(100).and_then(|f| f.as_u64().ok()), Some(3));
    let all: Vec<u64> = d.repeated(100).filter_map(|f| f.as_u64().ok()).collect();
    assert_eq!(all, [1, 2, 3]);
    assert_eq!(
        d.spilled().map(|f| f.id).collect::<Vec<_>>(),
        [100, 100, 1000, 100]
    );
    assert!(!d.has(101));
    check(&buf, false);
}

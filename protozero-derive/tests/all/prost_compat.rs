//! Wire compatibility with an independent implementation: every derived type
//! here has a `#[derive(prost::Message)]` mirror of the same schema.
//!
//! * Both directions always agree on values: bytes we write decode in prost
//!   to the same message, and bytes prost writes decode with `ProtoRead` to
//!   the same values.
//! * Bytes are identical whenever every nested message and packed varint
//!   payload is at most 127 bytes. Above that our writer keeps the 4-byte
//!   redundant length it reserved (Perfetto's behaviour) where prost writes a
//!   minimal varint; the test checks that this accounts for the whole
//!   difference, byte for byte.

use proptest::prelude::*;
use prost::Message as _;
use protozero::{HeapBuffer, ProtoRead, ProtoWrite, Writer};

// ---- the derived types -------------------------------------------------

#[derive(ProtoWrite, ProtoRead, Debug, PartialEq)]
struct Leaf<'a> {
    #[proto(tag = 1)]
    name: &'a str,
    #[proto(tag = 2)]
    count: u32,
    #[proto(tag = 3)]
    data: &'a [u8],
}

#[derive(ProtoWrite, ProtoRead, Debug, PartialEq, Clone, Copy)]
enum Color {
    Red = 0,
    Green = 1,
    Blue = 2,
}

#[derive(ProtoWrite, ProtoRead, Debug, PartialEq)]
enum Choice<'a> {
    #[proto(tag = 27)]
    Text(&'a str),
    #[proto(tag = 28, sint)]
    Num(i32),
    #[proto(tag = 29)]
    Leaf(Leaf<'a>),
}

#[derive(ProtoWrite, ProtoRead, Debug, PartialEq)]
struct All<'a> {
    #[proto(tag = 1)]
    i32v: i32,
    #[proto(tag = 2)]
    i64v: i64,
    #[proto(tag = 3)]
    u32v: u32,
    #[proto(tag = 4)]
    u64v: u64,
    #[proto(tag = 5, sint)]
    s32: i32,
    #[proto(tag = 6, sint)]
    s64: i64,
    #[proto(tag = 7, fixed)]
    f32v: u32,
    #[proto(tag = 8, fixed)]
    f64v: u64,
    #[proto(tag = 9, fixed)]
    sf32: i32,
    #[proto(tag = 10, fixed)]
    sf64: i64,
    #[proto(tag = 11)]
    b: bool,
    #[proto(tag = 12)]
    fl: f32,
    #[proto(tag = 13)]
    db: f64,
    #[proto(tag = 14)]
    s: &'a str,
    #[proto(tag = 15)]
    by: &'a [u8],
    #[proto(tag = 16)]
    color: Color,
    #[proto(tag = 17)]
    leaf: Option<Leaf<'a>>,
    #[proto(tag = 18)]
    leaves: Vec<Leaf<'a>>,
    #[proto(tag = 19, packed)]
    packed_u32: Vec<u32>,
    #[proto(tag = 20, sint)]
    unpacked_s64: Vec<i64>,
    #[proto(tag = 21, packed, fixed)]
    packed_fixed: Vec<u32>,
    #[proto(tag = 22, packed)]
    packed_double: Vec<f64>,
    #[proto(tag = 23)]
    strings: Vec<&'a str>,
    #[proto(tag = 24, packed)]
    colors: Vec<Color>,
    #[proto(tag = 25)]
    opt_u64: Option<u64>,
    #[proto(tag = 26)]
    opt_s: Option<&'a str>,
    #[proto(oneof)]
    choice: Option<Choice<'a>>,
    #[proto(tag = 536870911)]
    max_tag: i32,
}

// ---- the prost mirror --------------------------------------------------

#[derive(Clone, PartialEq, prost::Message)]
struct PLeaf {
    #[prost(string, tag = "1")]
    name: String,
    #[prost(uint32, tag = "2")]
    count: u32,
    #[prost(bytes = "vec", tag = "3")]
    data: Vec<u8>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
#[repr(i32)]
enum PColor {
    Red = 0,
    Green = 1,
    Blue = 2,
}

#[derive(Clone, PartialEq, prost::Oneof)]
enum PChoice {
    #[prost(string, tag = "27")]
    Text(String),
    #[prost(sint32, tag = "28")]
    Num(i32),
    #[prost(message, tag = "29")]
    Leaf(PLeaf),
}

#[derive(Clone, PartialEq, prost::Message)]
struct PAll {
    #[prost(int32, tag = "1")]
    i32v: i32,
    #[prost(int64, tag = "2")]
    i64v: i64,
    #[prost(uint32, tag = "3")]
    u32v: u32,
    #[prost(uint64, tag = "4")]
    u64v: u64,
    #[prost(sint32, tag = "5")]
    s32: i32,
    #[prost(sint64, tag = "6")]
    s64: i64,
    #[prost(fixed32, tag = "7")]
    f32v: u32,
    #[prost(fixed64, tag = "8")]
    f64v: u64,
    #[prost(sfixed32, tag = "9")]
    sf32: i32,
    #[prost(sfixed64, tag = "10")]
    sf64: i64,
    #[prost(bool, tag = "11")]
    b: bool,
    #[prost(float, tag = "12")]
    fl: f32,
    #[prost(double, tag = "13")]
    db: f64,
    #[prost(string, tag = "14")]
    s: String,
    #[prost(bytes = "vec", tag = "15")]
    by: Vec<u8>,
    #[prost(enumeration = "PColor", tag = "16")]
    color: i32,
    #[prost(message, optional, tag = "17")]
    leaf: Option<PLeaf>,
    #[prost(message, repeated, tag = "18")]
    leaves: Vec<PLeaf>,
    #[prost(uint32, repeated, tag = "19")]
    packed_u32: Vec<u32>,
    #[prost(sint64, repeated, packed = "false", tag = "20")]
    unpacked_s64: Vec<i64>,
    #[prost(fixed32, repeated, tag = "21")]
    packed_fixed: Vec<u32>,
    #[prost(double, repeated, tag = "22")]
    packed_double: Vec<f64>,
    #[prost(string, repeated, tag = "23")]
    strings: Vec<String>,
    #[prost(enumeration = "PColor", repeated, tag = "24")]
    colors: Vec<i32>,
    #[prost(uint64, optional, tag = "25")]
    opt_u64: Option<u64>,
    #[prost(string, optional, tag = "26")]
    opt_s: Option<String>,
    #[prost(oneof = "PChoice", tags = "27, 28, 29")]
    choice: Option<PChoice>,
    #[prost(int32, tag = "536870911")]
    max_tag: i32,
}

// ---- mapping -----------------------------------------------------------

fn color(n: i32) -> Color {
    match n {
        1 => Color::Green,
        2 => Color::Blue,
        _ => Color::Red,
    }
}

fn leaf(p: &PLeaf) -> Leaf<'_> {
    Leaf {
        name: &p.name,
        count: p.count,
        data: &p.data,
    }
}

/// The derived value that stands for a prost message.
fn ours(p: &PAll) -> All<'_> {
    All {
        i32v: p.i32v,
        i64v: p.i64v,
        u32v: p.u32v,
        u64v: p.u64v,
        s32: p.s32,
        s64: p.s64,
        f32v: p.f32v,
        f64v: p.f64v,
        sf32: p.sf32,
        sf64: p.sf64,
        b: p.b,
        fl: p.fl,
        db: p.db,
        s: &p.s,
        by: &p.by,
        color: color(p.color),
        leaf: p.leaf.as_ref().map(leaf),
        leaves: p.leaves.iter().map(leaf).collect(),
        packed_u32: p.packed_u32.clone(),
        unpacked_s64: p.unpacked_s64.clone(),
        packed_fixed: p.packed_fixed.clone(),
        packed_double: p.packed_double.clone(),
        strings: p.strings.iter().map(String::as_str).collect(),
        colors: p.colors.iter().copied().map(color).collect(),
        opt_u64: p.opt_u64,
        opt_s: p.opt_s.as_deref(),
        choice: p.choice.as_ref().map(|c| match c {
            PChoice::Text(s) => Choice::Text(s),
            PChoice::Num(n) => Choice::Num(*n),
            PChoice::Leaf(l) => Choice::Leaf(leaf(l)),
        }),
        max_tag: p.max_tag,
    }
}

/// Our encoding, in one big slice so that every small nested message is
/// compacted (slice boundaries are a separate concern of the writer).
fn encode_ours(v: &All<'_>) -> Vec<u8> {
    let mut w = Writer::with_delegate(HeapBuffer::with_slice_sizes(1 << 20, 1 << 20));
    v.write_fields(&mut w.root());
    w.finish().unwrap()
}

fn varint_len(v: usize) -> usize {
    prost::encoding::encoded_len_varint(v as u64)
}

/// Lengths of every length prefix that our writer reserves as a 4-byte slot
/// (nested messages and packed varints): these are the only places where the
/// two encoders may differ.
fn slotted_lengths(p: &PAll) -> Vec<usize> {
    let mut out: Vec<usize> = Vec::new();
    out.extend(p.leaf.iter().map(|l| l.encoded_len()));
    out.extend(p.leaves.iter().map(|l| l.encoded_len()));
    if let Some(PChoice::Leaf(l)) = &p.choice {
        out.push(l.encoded_len());
    }
    let packed = |vals: &mut dyn Iterator<Item = u64>| -> Option<usize> {
        let n: usize = vals.map(prost::encoding::encoded_len_varint).sum();
        (n > 0).then_some(n)
    };
    out.extend(packed(&mut p.packed_u32.iter().map(|&v| u64::from(v))));
    out.extend(packed(&mut p.colors.iter().map(|&v| i64::from(v) as u64)));
    out
}

/// How many more bytes our encoding has than prost's.
fn expected_extra(p: &PAll) -> usize {
    slotted_lengths(p)
        .into_iter()
        .filter(|&len| len > 127)
        .map(|len| 4 - varint_len(len))
        .sum()
}

// ---- strategies --------------------------------------------------------

fn float32() -> impl Strategy<Value = f32> {
    use proptest::num::f32::*;
    // NaN is excluded only because it is not equal to itself.
    POSITIVE | NEGATIVE | NORMAL | SUBNORMAL | ZERO | INFINITE
}

fn float64() -> impl Strategy<Value = f64> {
    use proptest::num::f64::*;
    POSITIVE | NEGATIVE | NORMAL | SUBNORMAL | ZERO | INFINITE
}

fn p_leaf(max: usize) -> impl Strategy<Value = PLeaf> {
    (
        proptest::string::string_regex(&format!(".{{0,{max}}}")).unwrap(),
        any::<u32>(),
        proptest::collection::vec(any::<u8>(), 0..max),
    )
        .prop_map(|(name, count, data)| PLeaf { name, count, data })
}

fn p_all(max: usize) -> impl Strategy<Value = PAll> {
    let text = move || proptest::string::string_regex(&format!(".{{0,{max}}}")).unwrap();
    let list = move |max_len: usize| 0..max_len;
    let scalars = (
        (any::<i32>(), any::<i64>(), any::<u32>(), any::<u64>()),
        (any::<i32>(), any::<i64>(), any::<u32>(), any::<u64>()),
        (
            any::<i32>(),
            any::<i64>(),
            any::<bool>(),
            float32(),
            float64(),
        ),
        (
            text(),
            proptest::collection::vec(any::<u8>(), list(max)),
            0..3i32,
        ),
    );
    let nested = (
        proptest::option::of(p_leaf(max)),
        proptest::collection::vec(p_leaf(max), list(max / 4 + 2)),
        proptest::collection::vec(any::<u32>(), list(max / 2)),
        proptest::collection::vec(any::<i64>(), list(max / 2)),
        proptest::collection::vec(any::<u32>(), list(max / 2)),
        proptest::collection::vec(float64(), list(max / 2)),
    );
    let rest = (
        proptest::collection::vec(text(), list(max / 4 + 2)),
        proptest::collection::vec(0..3i32, list(max)),
        proptest::option::of(any::<u64>()),
        proptest::option::of(text()),
        proptest::option::of(prop_oneof![
            text().prop_map(PChoice::Text),
            any::<i32>().prop_map(PChoice::Num),
            p_leaf(max).prop_map(PChoice::Leaf),
        ]),
        any::<i32>(),
    );
    (scalars, nested, rest).prop_map(|(sc, ne, re)| {
        let (
            (i32v, i64v, u32v, u64v),
            (s32, s64, f32v, f64v),
            (sf32, sf64, b, fl, db),
            (s, by, color),
        ) = sc;
        let (leaf, leaves, packed_u32, unpacked_s64, packed_fixed, packed_double) = ne;
        let (strings, colors, opt_u64, opt_s, choice, max_tag) = re;
        PAll {
            i32v,
            i64v,
            u32v,
            u64v,
            s32,
            s64,
            f32v,
            f64v,
            sf32,
            sf64,
            b,
            fl,
            db,
            s,
            by,
            color,
            leaf,
            leaves,
            packed_u32,
            unpacked_s64,
            packed_fixed,
            packed_double,
            strings,
            colors,
            opt_u64,
            opt_s,
            choice,
            max_tag,
        }
    })
}

/// prost omits a singular `-0.0` (it compares with `!=`); C++ protobuf and
/// we write it. Byte comparisons use `+0.0` there; value comparisons do not
/// need to, since `-0.0 == 0.0`.
fn canonical_zero(mut p: PAll) -> PAll {
    if p.fl == 0.0 {
        p.fl = 0.0;
    }
    if p.db == 0.0 {
        p.db = 0.0;
    }
    p
}

// ---- properties ----------------------------------------------------------

fn check_values_both_ways(p: &PAll) -> Result<(), TestCaseError> {
    let ours_value = ours(p);
    let our_bytes = encode_ours(&ours_value);
    // ours → prost
    let decoded =
        PAll::decode(our_bytes.as_slice()).map_err(|e| TestCaseError::fail(e.to_string()))?;
    prop_assert_eq!(&decoded, p);
    // prost → ours
    let prost_bytes = p.encode_to_vec();
    let back = All::decode(&prost_bytes).map_err(|e| TestCaseError::fail(e.to_string()))?;
    prop_assert_eq!(back, ours_value);
    Ok(())
}

proptest! {
    #[test]
    fn small_messages_are_byte_identical(p in p_all(12).prop_map(canonical_zero)) {
        prop_assert!(slotted_lengths(&p).iter().all(|&l| l <= 127), "strategy must stay small");
        prop_assert_eq!(encode_ours(&ours(&p)), p.encode_to_vec());
        check_values_both_ways(&p)?;
    }

    #[test]
    fn any_size_differs_only_by_redundant_lengths(p in p_all(200).prop_map(canonical_zero)) {
        let (ours_bytes, prost_bytes) = (encode_ours(&ours(&p)), p.encode_to_vec());
        prop_assert_eq!(ours_bytes.len(), prost_bytes.len() + expected_extra(&p));
        if expected_extra(&p) == 0 {
            prop_assert_eq!(&ours_bytes, &prost_bytes);
        }
        check_values_both_ways(&p)?;
    }

    #[test]
    fn values_agree_with_negative_zero(p in p_all(12)) {
        check_values_both_ways(&p)?;
    }
}

#[test]
fn large_strategy_exercises_redundant_lengths() {
    // A fixed large message, so the "differs" branch above is known to be reachable.
    let p = PAll {
        leaf: Some(PLeaf {
            name: "x".repeat(300),
            count: 1,
            data: vec![],
        }),
        packed_u32: vec![u32::MAX; 40],
        ..PAll::default()
    };
    let extra = expected_extra(&p);
    assert_eq!(extra, 2 + 2, "two 2-byte lengths padded to 4 bytes");
    assert_eq!(
        encode_ours(&ours(&p)).len(),
        p.encode_to_vec().len() + extra
    );
    check_values_both_ways(&p).unwrap();
}

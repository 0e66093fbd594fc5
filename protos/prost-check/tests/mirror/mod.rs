//! Mirrors between prost values and zerotrace's generated code: for each
//! checked message, a writer that copies every field of a prost value through
//! the generated writer, and a reader that rebuilds the prost value from the
//! generated decoder. With both, one prost value can be compared across three
//! paths (see [`round_trip`]). Also the proptest strategies shared by the
//! per-message mirrors.

/// Sets a proto2 enum field from its prost number: through the typed setter
/// when the schema names the number, through the raw one otherwise.
macro_rules! set_enum {
    ($w:expr, $value:expr, $enum:ty, $set:ident, $set_raw:ident) => {
        if let Some(x) = $value {
            match <$enum>::from_i32(x) {
                Some(known) => _ = $w.$set(known),
                None => _ = $w.$set_raw(x),
            }
        }
    };
}

/// Reads an enum field's number, checking the typed getter agrees with it.
macro_rules! get_enum {
    ($d:expr, $get:ident, $get_raw:ident) => {{
        let raw = $d.$get_raw();
        $crate::mirror::check_enum($d.$get(), raw);
        raw
    }};
}

pub mod config;
pub mod data_source;
pub mod debug_annotation;
pub mod descriptors;
pub mod ipc;
pub mod packet;
pub mod sequence;
pub mod track_event;

use std::fmt::Debug;

use proptest::prelude::*;
use proptest::test_runner::{TestCaseError, TestRunner};
use protozero::{
    HeapWriter, Message, MessageDecoder, ProtoEnum, RepeatedBytes, RepeatedMessages,
    RepeatedScalars, RepeatedStrs, ScalarKind,
};

/// Checks an enum field's typed getter against its raw one: the variant
/// with the raw number, or `None` when absent or not named by the enum.
pub fn check_enum<E: ProtoEnum + Debug + PartialEq>(typed: Option<E>, raw: Option<i32>) {
    assert_eq!(typed, raw.and_then(E::from_i32));
}

/// How repeated scalar fields are laid out by our writers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// One tag per element (what proto2 and prost use for these fields).
    Unpacked,
    /// The first half of the elements in one packed record, the rest
    /// unpacked after it: readers must accept both, mixed, in order.
    HalfPacked,
}

/// A prost message type that our generated writers and decoders mirror.
pub trait Mirror: prost::Message + Default + PartialEq + Debug + Sized {
    /// Writes every field set in `self` through the generated writer over `msg`.
    fn write(&self, msg: Message<'_>, layout: Layout);
    /// Rebuilds the value from `bytes` with the generated decoder.
    fn read(bytes: &[u8]) -> Self;
}

/// Our writers' bytes for `value`.
pub fn encode_ours<M: Mirror>(value: &M, layout: Layout) -> Vec<u8> {
    let mut w = HeapWriter::new();
    value.write(w.root(), layout);
    w.finish().expect("heap writer cannot fail")
}

/// The three-way check, for each layout of our writers:
/// prost decodes our bytes to `value`; our decoders read our bytes back to
/// `value`; our decoders read prost's own encoding of `value` to `value`.
pub fn round_trip<M: Mirror>(value: &M) -> Result<(), TestCaseError> {
    for layout in [Layout::Unpacked, Layout::HalfPacked] {
        let ours = encode_ours(value, layout);
        let by_prost = M::decode(ours.as_slice())
            .map_err(|e| TestCaseError::fail(format!("prost rejects our bytes: {e}")))?;
        prop_assert_eq!(&by_prost, value, "prost reading our bytes ({:?})", layout);
        prop_assert_eq!(&M::read(&ours), value, "we read our bytes ({:?})", layout);
    }
    let theirs = value.encode_to_vec();
    prop_assert_eq!(&M::read(&theirs), value, "we read prost's bytes");
    Ok(())
}

/// Runs [`round_trip`] over `cases` values drawn from `strategy()`, on a
/// thread of its own: building the value trees of these recursive,
/// many-field strategies takes more stack than the test harness's threads
/// have to spare.
pub fn check_round_trips<M: Mirror + 'static>(cases: u32, strategy: fn() -> BoxedStrategy<M>) {
    let worker = std::thread::Builder::new()
        .stack_size(64 << 20)
        .spawn(move || {
            let config = ProptestConfig {
                cases,
                source_file: Some(file!()),
                ..ProptestConfig::default()
            };
            TestRunner::new(config)
                .run(&strategy(), |value| round_trip(&value))
                .map_err(|e| e.to_string())
        })
        .expect("spawn the property-test thread");
    match worker.join() {
        Ok(Ok(())) => {}
        Ok(Err(failure)) => panic!("{failure}"),
        Err(panic) => std::panic::resume_unwind(panic),
    }
}

/// A decoder that must have parsed its whole buffer.
pub fn checked<'a, D: MessageDecoder<'a>>(d: D) -> D {
    assert_eq!(d.decode_error(), None, "{} decode error", D::FULL_NAME);
    d
}

/// Every element of a repeated scalar field; fails on a malformed one.
pub fn scalars<K: ScalarKind>(mut it: RepeatedScalars<'_, K>) -> Vec<K::Value> {
    let out = it.by_ref().collect();
    assert_eq!(it.error(), None, "repeated scalar decode error");
    out
}

/// Every element of a repeated string field, owned.
pub fn strings(mut it: RepeatedStrs<'_>) -> Vec<String> {
    let out = it.by_ref().map(str::to_owned).collect();
    assert_eq!(it.error(), None, "repeated string decode error");
    out
}

/// Every element of a repeated bytes field, owned.
pub fn byte_strings(mut it: RepeatedBytes<'_>) -> Vec<Vec<u8>> {
    let out = it.by_ref().map(<[u8]>::to_vec).collect();
    assert_eq!(it.error(), None, "repeated bytes decode error");
    out
}

/// Every element of a repeated message field, each rebuilt by `read`.
pub fn messages<'a, D: MessageDecoder<'a>, T>(
    mut it: RepeatedMessages<'a, D>,
    read: impl Fn(&D) -> T,
) -> Vec<T> {
    let out = it.by_ref().map(|d| read(&checked(d))).collect();
    assert_eq!(it.error(), None, "repeated message decode error");
    out
}

/// Writes a repeated scalar field on writer `w`: element by element through
/// `add` (the generated setter), or its first half through `packed` (a raw
/// packed record) when `layout` says so.
pub fn write_repeated<W, T: Copy>(
    w: &mut W,
    values: &[T],
    layout: Layout,
    packed: impl FnOnce(&mut W, &[T]),
    mut add: impl FnMut(&mut W, T),
) {
    let split = match layout {
        Layout::Unpacked => 0,
        Layout::HalfPacked => values.len().div_ceil(2),
    };
    let (head, tail) = values.split_at(split);
    if !head.is_empty() {
        packed(w, head);
    }
    for &v in tail {
        add(w, v);
    }
}

/// Strings with any characters (NUL, newlines, non-ASCII included).
pub fn text() -> impl Strategy<Value = String> {
    prop::collection::vec(any::<char>(), 0..12).prop_map(String::from_iter)
}

/// Arbitrary short byte strings.
pub fn blob() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(any::<u8>(), 0..24)
}

/// Every double but NaN (which is never equal to itself; see the NaN test).
pub fn double() -> impl Strategy<Value = f64> {
    use prop::num::f64::{INFINITE, NEGATIVE, NORMAL, POSITIVE, SUBNORMAL, ZERO};
    POSITIVE | NEGATIVE | NORMAL | SUBNORMAL | ZERO | INFINITE
}

/// Enum numbers: mostly small (the named ones and some just past them), and
/// arbitrary ones, negative included, that no schema names.
pub fn enum_number() -> impl Strategy<Value = i32> {
    prop_oneof![3 => -1..12i32, 1 => any::<i32>()]
}

/// A short vector of `element`.
pub fn few<S: Strategy>(element: S) -> impl Strategy<Value = Vec<S::Value>> {
    prop::collection::vec(element, 0..4)
}

/// `Some(value)` half of the time.
pub fn maybe<S: Strategy>(value: S) -> impl Strategy<Value = Option<S::Value>> {
    prop::option::of(value)
}

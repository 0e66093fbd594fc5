//! A derived type mirroring a subset of Perfetto's `DebugAnnotation`
//! (`protos/perfetto/trace/track_event/debug_annotation.proto`) writes the
//! same bytes as the writer generated from the schema in `zerotrace-protos`,
//! and each side decodes the other's output.

use proptest::prelude::*;
use protozero::{HeapBuffer, ProtoRead, ProtoWrite, Writer};
use zerotrace_protos::protos::{DebugAnnotation, DebugAnnotationDecoder, debug_annotation};

/// oneof `name_field`.
#[derive(ProtoWrite, ProtoRead, Debug, Clone, PartialEq)]
enum Name {
    #[proto(tag = 1)]
    Iid(u64),
    #[proto(tag = 10)]
    Text(String),
}

/// oneof `value` (the scalar members).
#[derive(ProtoWrite, ProtoRead, Debug, Clone, PartialEq)]
enum Value {
    #[proto(tag = 2)]
    Bool(bool),
    #[proto(tag = 3)]
    Uint(u64),
    #[proto(tag = 4)]
    Int(i64),
    #[proto(tag = 5)]
    Double(f64),
    #[proto(tag = 6)]
    Str(String),
    #[proto(tag = 7)]
    Pointer(u64),
}

/// `DebugAnnotation` without the interned and proto-typed members.
#[derive(ProtoWrite, ProtoRead, Debug, Clone, PartialEq)]
struct Annotation {
    #[proto(oneof)]
    name: Option<Name>,
    #[proto(oneof)]
    value: Option<Value>,
    #[proto(tag = 11)]
    dict_entries: Vec<Annotation>,
    #[proto(tag = 12)]
    array_values: Vec<Annotation>,
}

/// The same annotation through the generated writer, field by field in the
/// order the derive writes them.
fn write_generated(a: &Annotation, w: &mut DebugAnnotation<'_>) {
    match &a.name {
        Some(Name::Iid(v)) => drop(w.set_name_iid(*v)),
        Some(Name::Text(v)) => drop(w.set_name(v)),
        None => {}
    }
    match &a.value {
        Some(Value::Bool(v)) => drop(w.set_bool_value(*v)),
        Some(Value::Uint(v)) => drop(w.set_uint_value(*v)),
        Some(Value::Int(v)) => drop(w.set_int_value(*v)),
        Some(Value::Double(v)) => drop(w.set_double_value(*v)),
        Some(Value::Str(v)) => drop(w.set_string_value(v)),
        Some(Value::Pointer(v)) => drop(w.set_pointer_value(*v)),
        None => {}
    }
    for entry in &a.dict_entries {
        write_generated(entry, &mut w.add_dict_entries());
    }
    for item in &a.array_values {
        write_generated(item, &mut w.add_array_values());
    }
}

fn writer() -> Writer<HeapBuffer> {
    Writer::with_delegate(HeapBuffer::with_slice_sizes(1 << 16, 1 << 16))
}

fn derived_bytes(a: &Annotation) -> Vec<u8> {
    let mut w = writer();
    a.write_fields(&mut w.root());
    w.finish().unwrap()
}

fn generated_bytes(a: &Annotation) -> Vec<u8> {
    let mut w = writer();
    write_generated(a, &mut DebugAnnotation::from_message(w.root()));
    w.finish().unwrap()
}

/// Reads an annotation back with the generated decoder.
fn from_generated_decoder(d: &DebugAnnotationDecoder<'_>) -> Annotation {
    use debug_annotation::{NameField, Value as V};
    let name = d.which_name_field().map(|n| match n {
        NameField::NameIid(v) => Name::Iid(v),
        NameField::Name(v) => Name::Text(v.to_owned()),
    });
    let value = d.which_value().and_then(|v| match v {
        V::BoolValue(v) => Some(Value::Bool(v)),
        V::UintValue(v) => Some(Value::Uint(v)),
        V::IntValue(v) => Some(Value::Int(v)),
        V::DoubleValue(v) => Some(Value::Double(v)),
        V::StringValue(v) => Some(Value::Str(v.to_owned())),
        V::PointerValue(v) => Some(Value::Pointer(v)),
        _ => None,
    });
    let children = |bytes: protozero::RepeatedBytes<'_>| -> Vec<Annotation> {
        bytes
            .map(|b| from_generated_decoder(&DebugAnnotationDecoder::new(b)))
            .collect()
    };
    Annotation {
        name,
        value,
        dict_entries: children(d.dict_entries_bytes()),
        array_values: children(d.array_values_bytes()),
    }
}

fn leaf() -> impl Strategy<Value = Annotation> {
    let name = proptest::option::of(prop_oneof![
        any::<u64>().prop_map(Name::Iid),
        "[a-z_.]{0,12}".prop_map(Name::Text),
    ]);
    let value = proptest::option::of(prop_oneof![
        any::<bool>().prop_map(Value::Bool),
        any::<u64>().prop_map(Value::Uint),
        any::<i64>().prop_map(Value::Int),
        proptest::num::f64::NORMAL.prop_map(Value::Double),
        ".{0,40}".prop_map(Value::Str),
        any::<u64>().prop_map(Value::Pointer),
    ]);
    (name, value).prop_map(|(name, value)| Annotation {
        name,
        value,
        dict_entries: vec![],
        array_values: vec![],
    })
}

fn annotation() -> impl Strategy<Value = Annotation> {
    leaf().prop_recursive(3, 24, 4, |inner| {
        (
            leaf(),
            proptest::collection::vec(inner.clone(), 0..4),
            proptest::collection::vec(inner, 0..4),
        )
            .prop_map(|(mut a, dict, array)| {
                a.dict_entries = dict;
                a.array_values = array;
                a
            })
    })
}

#[test]
fn fixed_example_matches() {
    let a = Annotation {
        name: Some(Name::Text("args".into())),
        value: None,
        dict_entries: vec![Annotation {
            name: Some(Name::Iid(3)),
            value: Some(Value::Int(-1)),
            dict_entries: vec![],
            array_values: vec![],
        }],
        array_values: vec![Annotation {
            name: None,
            value: Some(Value::Str("x".repeat(200))), // longer than 127: 4-byte length
            dict_entries: vec![],
            array_values: vec![],
        }],
    };
    let bytes = derived_bytes(&a);
    assert_eq!(bytes, generated_bytes(&a));
    assert_eq!(Annotation::decode(&bytes).unwrap(), a);
}

proptest! {
    #[test]
    fn derived_and_generated_writers_agree(a in annotation()) {
        let ours = derived_bytes(&a);
        let generated = generated_bytes(&a);
        prop_assert_eq!(&ours, &generated);
        // Each side decodes the other's bytes to the same value.
        prop_assert_eq!(Annotation::decode(&generated).unwrap(), a.clone());
        prop_assert_eq!(from_generated_decoder(&DebugAnnotationDecoder::new(&ours)), a);
    }
}

//! DebugAnnotation, with its nested values, dict entries and array values:
//! recursive strategies over the prost types, and the copy through our
//! writers and back out of our decoders.

use proptest::prelude::*;
use zerotrace_protos::protos as zp;
use zerotrace_protos_prost_check::protos as pb;

use super::{blob, check_enum, checked, double, enum_number, few, maybe, messages, strings, text};

// ---- strategies -------------------------------------------------------------

/// The scalar part of a `DebugAnnotation.NestedValue`.
fn nested_scalars() -> BoxedStrategy<pb::debug_annotation::NestedValue> {
    (
        maybe(enum_number()),
        maybe(any::<i64>()),
        maybe(double()),
        maybe(any::<bool>()),
        maybe(text()),
    )
        .prop_map(
            |(nested_type, int_value, double_value, bool_value, string_value)| {
                pb::debug_annotation::NestedValue {
                    nested_type,
                    int_value,
                    double_value,
                    bool_value,
                    string_value,
                    ..Default::default()
                }
            },
        )
        .boxed()
}

/// A nested value with nested dict and array values, two levels deep.
fn nested_value() -> BoxedStrategy<pb::debug_annotation::NestedValue> {
    nested_scalars()
        .prop_recursive(2, 8, 3, |inner| {
            (
                nested_scalars(),
                few(text()),
                few(inner.clone()),
                few(inner),
            )
                .prop_map(|(mut v, dict_keys, dict_values, array_values)| {
                    v.dict_keys = dict_keys;
                    v.dict_values = dict_values;
                    v.array_values = array_values;
                    v
                })
        })
        .boxed()
}

/// Any member of the `value` oneof.
fn annotation_value() -> BoxedStrategy<pb::debug_annotation::Value> {
    use pb::debug_annotation::Value as V;
    prop_oneof![
        any::<bool>().prop_map(V::BoolValue),
        any::<u64>().prop_map(V::UintValue),
        any::<i64>().prop_map(V::IntValue),
        double().prop_map(V::DoubleValue),
        any::<u64>().prop_map(V::PointerValue),
        nested_value().prop_map(V::NestedValue),
        text().prop_map(V::LegacyJsonValue),
        text().prop_map(V::StringValue),
        any::<u64>().prop_map(V::StringValueIid),
    ]
    .boxed()
}

/// A debug annotation without children.
fn annotation_leaf() -> BoxedStrategy<pb::DebugAnnotation> {
    use pb::debug_annotation::{NameField, ProtoTypeDescriptor};
    let name = prop_oneof![
        any::<u64>().prop_map(NameField::NameIid),
        text().prop_map(NameField::Name),
    ];
    let proto_type = prop_oneof![
        text().prop_map(ProtoTypeDescriptor::ProtoTypeName),
        any::<u64>().prop_map(ProtoTypeDescriptor::ProtoTypeNameIid),
    ];
    (
        maybe(name),
        maybe(annotation_value()),
        maybe(proto_type),
        maybe(blob()),
    )
        .prop_map(
            |(name_field, value, proto_type_descriptor, proto_value)| pb::DebugAnnotation {
                name_field,
                value,
                proto_type_descriptor,
                proto_value,
                ..Default::default()
            },
        )
        .boxed()
}

/// A debug annotation with dict entries and array values, two levels deep.
pub fn debug_annotation() -> BoxedStrategy<pb::DebugAnnotation> {
    annotation_leaf()
        .prop_recursive(2, 8, 3, |inner| {
            (annotation_leaf(), few(inner.clone()), few(inner)).prop_map(|(mut a, dict, array)| {
                a.dict_entries = dict;
                a.array_values = array;
                a
            })
        })
        .boxed()
}

// ---- prost value -> generated writers --------------------------------------

fn write_nested_value(
    v: &pb::debug_annotation::NestedValue,
    w: &mut zp::debug_annotation::NestedValue<'_>,
) {
    use zp::debug_annotation::nested_value::NestedType;
    if let Some(t) = v.nested_type {
        match NestedType::from_i32(t) {
            Some(known) => w.set_nested_type(known),
            None => w.set_nested_type_raw(t),
        };
    }
    for key in &v.dict_keys {
        w.add_dict_keys(key);
    }
    for value in &v.dict_values {
        write_nested_value(value, &mut w.add_dict_values());
    }
    for value in &v.array_values {
        write_nested_value(value, &mut w.add_array_values());
    }
    v.int_value.map(|x| w.set_int_value(x));
    v.double_value.map(|x| w.set_double_value(x));
    v.bool_value.map(|x| w.set_bool_value(x));
    v.string_value.as_deref().map(|x| w.set_string_value(x));
}

/// Copies a debug annotation, children included.
pub fn write_debug_annotation(v: &pb::DebugAnnotation, w: &mut zp::DebugAnnotation<'_>) {
    use pb::debug_annotation::{NameField, ProtoTypeDescriptor, Value};
    match &v.name_field {
        Some(NameField::NameIid(x)) => _ = w.set_name_iid(*x),
        Some(NameField::Name(x)) => _ = w.set_name(x),
        None => {}
    }
    match &v.value {
        Some(Value::BoolValue(x)) => _ = w.set_bool_value(*x),
        Some(Value::UintValue(x)) => _ = w.set_uint_value(*x),
        Some(Value::IntValue(x)) => _ = w.set_int_value(*x),
        Some(Value::DoubleValue(x)) => _ = w.set_double_value(*x),
        Some(Value::PointerValue(x)) => _ = w.set_pointer_value(*x),
        Some(Value::NestedValue(x)) => write_nested_value(x, &mut w.begin_nested_value()),
        Some(Value::LegacyJsonValue(x)) => _ = w.set_legacy_json_value(x),
        Some(Value::StringValue(x)) => _ = w.set_string_value(x),
        Some(Value::StringValueIid(x)) => _ = w.set_string_value_iid(*x),
        None => {}
    }
    match &v.proto_type_descriptor {
        Some(ProtoTypeDescriptor::ProtoTypeName(x)) => _ = w.set_proto_type_name(x),
        Some(ProtoTypeDescriptor::ProtoTypeNameIid(x)) => _ = w.set_proto_type_name_iid(*x),
        None => {}
    }
    v.proto_value.as_deref().map(|x| w.set_proto_value(x));
    for entry in &v.dict_entries {
        write_debug_annotation(entry, &mut w.add_dict_entries());
    }
    for entry in &v.array_values {
        write_debug_annotation(entry, &mut w.add_array_values());
    }
}

// ---- generated decoders -> prost value -------------------------------------

fn read_nested_value(
    d: &zp::debug_annotation::NestedValueDecoder<'_>,
) -> pb::debug_annotation::NestedValue {
    check_enum(d.nested_type(), d.nested_type_raw());
    pb::debug_annotation::NestedValue {
        nested_type: d.nested_type_raw(),
        dict_keys: strings(d.dict_keys()),
        dict_values: messages(d.dict_values(), read_nested_value),
        array_values: messages(d.array_values(), read_nested_value),
        int_value: d.int_value(),
        double_value: d.double_value(),
        bool_value: d.bool_value(),
        string_value: d.string_value().map(str::to_owned),
    }
}

/// Rebuilds a debug annotation, children included.
pub fn read_debug_annotation(d: &zp::DebugAnnotationDecoder<'_>) -> pb::DebugAnnotation {
    use pb::debug_annotation as p;
    use zp::debug_annotation as g;
    let value = d.which_value().map(|v| match v {
        g::Value::BoolValue(x) => p::Value::BoolValue(x),
        g::Value::UintValue(x) => p::Value::UintValue(x),
        g::Value::IntValue(x) => p::Value::IntValue(x),
        g::Value::DoubleValue(x) => p::Value::DoubleValue(x),
        g::Value::PointerValue(x) => p::Value::PointerValue(x),
        g::Value::NestedValue(x) => p::Value::NestedValue(read_nested_value(&checked(x))),
        g::Value::LegacyJsonValue(x) => p::Value::LegacyJsonValue(x.to_owned()),
        g::Value::StringValue(x) => p::Value::StringValue(x.to_owned()),
        g::Value::StringValueIid(x) => p::Value::StringValueIid(x),
    });
    pb::DebugAnnotation {
        name_field: d.which_name_field().map(|n| match n {
            g::NameField::NameIid(x) => p::NameField::NameIid(x),
            g::NameField::Name(x) => p::NameField::Name(x.to_owned()),
        }),
        value,
        proto_type_descriptor: d.which_proto_type_descriptor().map(|t| match t {
            g::ProtoTypeDescriptor::ProtoTypeName(x) => {
                p::ProtoTypeDescriptor::ProtoTypeName(x.to_owned())
            }
            g::ProtoTypeDescriptor::ProtoTypeNameIid(x) => {
                p::ProtoTypeDescriptor::ProtoTypeNameIid(x)
            }
        }),
        proto_value: d.proto_value().map(<[u8]>::to_vec),
        dict_entries: messages(d.dict_entries(), read_debug_annotation),
        array_values: messages(d.array_values(), read_debug_annotation),
    }
}

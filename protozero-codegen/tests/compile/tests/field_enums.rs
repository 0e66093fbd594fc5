//! The generated field enums (`FooField::read`): every field in wire order,
//! typed as the accessors type it, malformed ones as `Other`, nested
//! messages lazily, packed and unpacked occurrences alike.

use protozero::{EnumValue, HeapWriter};
use protozero_codegen_fixtures::fixture::alpha::*;
use protozero_codegen_fixtures::fixture::beta::{Color, Other, OtherField};

fn encode(f: impl FnOnce(&mut HeapWriter)) -> Vec<u8> {
    let mut w = HeapWriter::new();
    f(&mut w);
    w.finish().unwrap()
}

#[test]
fn fields_come_in_wire_order_typed() {
    let bytes = encode(|w| {
        let mut c = CrossPackage::from_message(w.root());
        c.begin_other()
            .set_label("o")
            .set_numbers([1, -2])
            .add_loose(3)
            .add_loose(4)
            .set_maybe(0)
            .set_color(Color::Red)
            .set_colors([Color::Green, Color::Red]);
        c.set_color(Color::Green);
        c.add_others().set_label("x");
    });
    let mut seen = Vec::new();
    let mut it = CrossPackageField::read(&bytes);
    for f in it.by_ref() {
        match f {
            // Field `other` is `Other_`: `Other` holds fields the schema lacks.
            CrossPackageField::Other_(o) => {
                for g in o.fields() {
                    match g {
                        OtherField::Label(s) => seen.push(format!("label {s}")),
                        OtherField::Numbers(n) => {
                            seen.push(format!("numbers {:?}", n.collect::<Vec<_>>()))
                        }
                        OtherField::Loose(n) => {
                            seen.push(format!("loose {:?}", n.collect::<Vec<_>>()))
                        }
                        OtherField::Maybe(v) => seen.push(format!("maybe {v}")),
                        OtherField::Color(c) => seen.push(format!("color {:?}", c.known())),
                        OtherField::Colors(c) => seen.push(format!(
                            "colors {:?}",
                            c.map(|c| c.raw()).collect::<Vec<_>>()
                        )),
                        other => seen.push(format!("other {other:?}")),
                    }
                }
                // The same bytes read for random access.
                assert_eq!(o.decode().label(), Some("o"));
            }
            CrossPackageField::Color(c) => seen.push(format!("outer color {:?}", c.known())),
            CrossPackageField::Others(o) => seen.push(format!("others {:?}", o.decode().label())),
            f => seen.push(format!("unexpected {f:?}")),
        }
    }
    assert_eq!(it.error(), None);
    assert_eq!(
        seen,
        [
            "label o",
            "numbers [1, -2]",
            "loose [3]",
            "loose [4]",
            "maybe 0",
            "color Some(Red)",
            "colors [2, 1]",
            "outer color Some(Green)",
            "others Some(\"x\")",
        ]
    );
}

#[test]
fn malformed_fields_are_other_and_errors_end_the_scan() {
    // label (1) as a varint, then a label that is not UTF-8, then an unknown
    // field 9, then an unnamed color number, then a truncated field.
    let bytes = [0x08, 1, 0x0A, 1, 0xFF, 0x48, 5, 0x28, 77, 0x0A, 5];
    let fields: Vec<_> = OtherField::read(&bytes).collect();
    assert_eq!(fields.len(), 4);
    assert!(matches!(fields[0], OtherField::Other(f) if f.id == 1));
    assert!(matches!(fields[1], OtherField::Other(f) if f.id == 1));
    assert!(matches!(fields[2], OtherField::Other(f) if f.id == 9));
    assert!(matches!(
        fields[3],
        OtherField::Color(EnumValue::Unknown(77))
    ));
    let mut it = OtherField::read(&bytes);
    assert_eq!(it.by_ref().count(), 4);
    assert!(it.error().is_some());
    // A packed run may arrive for a field declared unpacked, and the reverse.
    let loose_packed = encode(|w| {
        Other::from_message(w.root()).set_numbers([5, 6]);
    });
    let relabelled: Vec<u8> = loose_packed
        .iter()
        .enumerate()
        .map(|(i, b)| if i == 0 { (3 << 3) | 2 } else { *b })
        .collect();
    let values: Vec<i32> = OtherField::read(&relabelled)
        .flat_map(|f| match f {
            OtherField::Loose(n) => n.collect::<Vec<_>>(),
            _ => Vec::new(),
        })
        .collect();
    assert_eq!(values, [5, 6]);
}

#[test]
fn oneof_members_and_hostile_bytes() {
    let bytes = encode(|w| {
        Choice::from_message(w.root())
            .set_int_value(5)
            .set_text_value("last");
    });
    let members: Vec<String> = ChoiceField::read(&bytes)
        .map(|f| match f {
            ChoiceField::IntValue(v) => format!("int {v}"),
            ChoiceField::TextValue(v) => format!("text {v}"),
            other => format!("{other:?}"),
        })
        .collect();
    assert_eq!(members, ["int 5", "text last"]);
    for len in 0..64u8 {
        let junk: Vec<u8> = (0..len).map(|i| i.wrapping_mul(37) ^ 0xA5).collect();
        for f in CrossPackageField::read(&junk) {
            if let CrossPackageField::Other_(o) = f {
                let _ = o.fields().count();
            }
        }
    }
}

/// `visit_message` hands every nested message (a singular one, each
/// occurrence of a repeated one, a map entry) to a generic visitor, typed by
/// its decoder: a walk that names no message type reaches them all.
#[test]
fn a_generic_walk_reaches_every_nested_message() {
    use protozero::{FieldEnum, Lazy, MessageFields, MessageVisitor};

    /// The messages met, by full name and depth.
    struct Walk {
        seen: Vec<(&'static str, usize)>,
        depth: usize,
    }
    impl<'a> MessageVisitor<'a> for Walk {
        fn message<D: MessageFields<'a>>(&mut self, message: Lazy<'a, D>) {
            self.seen.push((D::FULL_NAME, self.depth));
            self.depth += 1;
            for f in message.fields() {
                f.visit_message(self);
            }
            self.depth -= 1;
        }
    }

    let bytes = encode(|w| {
        let mut c = CrossPackage::from_message(w.root());
        c.begin_other().set_label("o");
        c.set_color(Color::Green);
        c.add_others().set_label("x");
        c.add_counts().set_key("k").set_value(9);
        c.add_others();
    });
    let mut walk = Walk {
        seen: Vec::new(),
        depth: 0,
    };
    walk.message(Lazy::<CrossPackageDecoder<'_>>::new(&bytes));
    assert_eq!(
        walk.seen,
        [
            ("fixture.alpha.CrossPackage", 0),
            ("fixture.beta.Other", 1),
            ("fixture.beta.Other", 1),
            ("fixture.alpha.CrossPackage.CountsEntry", 1),
            ("fixture.beta.Other", 1),
        ]
    );
    // Scalars hold no message.
    let mut none = Walk {
        seen: Vec::new(),
        depth: 0,
    };
    for f in OtherField::read(&encode(|w| {
        Other::from_message(w.root())
            .set_label("l")
            .set_numbers([1]);
    })) {
        f.visit_message(&mut none);
    }
    assert!(none.seen.is_empty());
}

/// `number()` names the field of any value: the declared number of a
/// typed variant, the wire's for `Other`.
#[test]
fn every_value_knows_its_field_number() {
    let bytes = encode(|w| {
        let mut o = Other::from_message(w.root());
        o.set_label("l").set_numbers([1]).add_loose(2).set_maybe(3);
        o.set_color(Color::Red).set_colors([Color::Green]);
        protozero::MessageWriter::message(&mut o).append_uint32(9, 1);
    });
    let numbers: Vec<u32> = OtherField::read(&bytes).map(|f| f.number()).collect();
    assert_eq!(numbers, [1, 2, 3, 4, 5, 6, 9]);
    // A malformed declared field is `Other` with its own number.
    let malformed = [0x08, 1];
    let f = OtherField::read(&malformed).next().unwrap();
    assert!(matches!(f, OtherField::Other(_)));
    assert_eq!(f.number(), 1);
}

//! Messages in recursion cycles with no name taken (`recursion.proto`):
//! through a oneof, a oneof member that is the message itself, map values,
//! a repeated field behind a oneof, a nested message. Each is written with
//! the generated writers, read back by `protoc --decode`, by the generated
//! decoders and by a generic walk through `visit_message`; and protoc's own
//! encoding walks the same.

mod support;

use protozero_codegen_fixtures::cycles::fixture::cycles::{
    Dir, DirDecoder, Expr, ExprDecoder, ExprField, Outer, OuterDecoder, Plan, PlanDecoder, Type,
    TypeDecoder, expr, outer, plan,
};
use support::{decode_text, encode, encode_text, walk};

const FILE: &str = "fixture/cycles/recursion.proto";

#[test]
fn oneof_member_in_a_cycle() {
    let bytes = encode(|w| {
        let mut t = Type::from_message(w.root());
        let mut c = t.begin_composite();
        c.add_members().set_name("a").begin_type().set_scalar("int");
        let mut m = c.add_members();
        m.set_name("b");
        m.begin_type().begin_composite().add_members().set_name("c");
    });
    assert_eq!(
        decode_text("fixture.cycles.Type", FILE, &bytes),
        "composite {\n  members {\n    name: \"a\"\n    type {\n      scalar: \"int\"\n    }\n  }\n  members {\n    name: \"b\"\n    type {\n      composite {\n        members {\n          name: \"c\"\n        }\n      }\n    }\n  }\n}\n"
    );
    let t = TypeDecoder::new(&bytes);
    let names: Vec<_> = t
        .composite()
        .unwrap()
        .members()
        .map(|m| m.name().unwrap())
        .collect();
    assert_eq!(names, ["a", "b"]);
    let expected = [
        ("cycles.Type", 0),
        ("cycles.Composite", 1),
        ("cycles.Member", 2),
        ("cycles.Type", 3),
        ("cycles.Member", 2),
        ("cycles.Type", 3),
        ("cycles.Composite", 4),
        ("cycles.Member", 5),
    ];
    assert_eq!(walk::<TypeDecoder<'_>>(&bytes), expected);
    let theirs = encode_text(
        "fixture.cycles.Type",
        FILE,
        "composite { members { name: 'a' type { scalar: 'int' } } members { name: 'b' type { composite { members { name: 'c' } } } } }",
    );
    assert_eq!(walk::<TypeDecoder<'_>>(&theirs), expected);
}

#[test]
fn oneof_member_that_is_the_message_itself() {
    // -(-(1 + -2)), then nested 40 deep.
    let bytes = encode(|w| {
        let mut e = Expr::from_message(w.root());
        let mut inner = e.begin_negate();
        let mut again = inner.begin_negate();
        let mut add = again.begin_add();
        add.begin_left().set_value(1);
        add.begin_right().begin_negate().set_value(-2);
    });
    assert_eq!(
        decode_text("fixture.cycles.Expr", FILE, &bytes),
        "negate {\n  negate {\n    add {\n      left {\n        value: 1\n      }\n      right {\n        negate {\n          value: -2\n        }\n      }\n    }\n  }\n}\n"
    );
    let e = ExprDecoder::new(&bytes);
    let Some(expr::Op::Negate(inner)) = e.which_op() else {
        panic!("not a negation: {e:?}");
    };
    let add = inner.negate().unwrap().add().unwrap();
    assert_eq!(add.left().unwrap().value(), Some(1));
    assert_eq!(add.right().unwrap().negate().unwrap().value(), Some(-2));
    assert_eq!(
        walk::<ExprDecoder<'_>>(&bytes),
        [
            ("cycles.Expr", 0),
            ("cycles.Expr", 1),
            ("cycles.Expr", 2),
            ("cycles.Pair", 3),
            ("cycles.Expr", 4),
            ("cycles.Expr", 4),
            ("cycles.Expr", 5),
        ]
    );
    // The field enum names the member itself.
    let first = ExprField::read(&bytes).next();
    assert!(matches!(first, Some(ExprField::Negate(_))), "{first:?}");
    let deep = encode_text(
        "fixture.cycles.Expr",
        FILE,
        &format!("{}value: 7{}", "negate { ".repeat(40), " }".repeat(40)),
    );
    let seen = walk::<ExprDecoder<'_>>(&deep);
    assert_eq!(seen.len(), 41);
    assert_eq!(seen.last(), Some(&("cycles.Expr", 40)));
}

#[test]
fn map_values_in_a_cycle() {
    let bytes = encode(|w| {
        let mut d = Dir::from_message(w.root());
        {
            let mut sub = d.add_subdirs();
            sub.set_key("src");
            sub.begin_value()
                .add_entries()
                .set_key(1)
                .begin_value()
                .set_data(b"main");
        }
        let mut e = d.add_entries();
        e.set_key(2);
        e.begin_value()
            .begin_dir()
            .add_subdirs()
            .set_key("empty")
            .begin_value();
    });
    assert_eq!(
        decode_text("fixture.cycles.Dir", FILE, &bytes),
        "subdirs {\n  key: \"src\"\n  value {\n    entries {\n      key: 1\n      value {\n        data: \"main\"\n      }\n    }\n  }\n}\nentries {\n  key: 2\n  value {\n    dir {\n      subdirs {\n        key: \"empty\"\n        value {\n        }\n      }\n    }\n  }\n}\n"
    );
    let d = DirDecoder::new(&bytes);
    let src = d.subdirs().next().unwrap();
    assert_eq!(src.key(), Some("src"));
    let entry = src.value().unwrap().entries().next().unwrap();
    assert_eq!(entry.value().unwrap().data(), Some(&b"main"[..]));
    let expected = [
        ("cycles.Dir", 0),
        ("cycles.Dir.SubdirsEntry", 1),
        ("cycles.Dir", 2),
        ("cycles.Dir.EntriesEntry", 3),
        ("cycles.Entry", 4),
        ("cycles.Dir.EntriesEntry", 1),
        ("cycles.Entry", 2),
        ("cycles.Dir", 3),
        ("cycles.Dir.SubdirsEntry", 4),
        ("cycles.Dir", 5),
    ];
    assert_eq!(walk::<DirDecoder<'_>>(&bytes), expected);
    let theirs = encode_text(
        "fixture.cycles.Dir",
        FILE,
        "subdirs { key: 'src' value { entries { key: 1 value { data: 'main' } } } } entries { key: 2 value { dir { subdirs { key: 'empty' value {} } } } }",
    );
    assert_eq!(walk::<DirDecoder<'_>>(&theirs), expected);
}

#[test]
fn repeated_field_in_a_cycle_through_a_oneof() {
    let bytes = encode(|w| {
        let mut p = Plan::from_message(w.root());
        let mut j = p.begin_join();
        j.add_inputs().set_scan("a");
        let mut input = j.add_inputs();
        let mut inner = input.begin_join();
        inner.add_inputs().set_scan("b");
        inner.add_inputs().set_scan("c");
    });
    assert_eq!(
        decode_text("fixture.cycles.Plan", FILE, &bytes),
        "join {\n  inputs {\n    scan: \"a\"\n  }\n  inputs {\n    join {\n      inputs {\n        scan: \"b\"\n      }\n      inputs {\n        scan: \"c\"\n      }\n    }\n  }\n}\n"
    );
    let p = PlanDecoder::new(&bytes);
    let Some(plan::Node::Join(j)) = p.which_node() else {
        panic!("not a join: {p:?}");
    };
    let scans: Vec<_> = j.inputs().map(|i| i.scan()).collect();
    assert_eq!(scans, [Some("a"), None]);
    assert_eq!(
        walk::<PlanDecoder<'_>>(&bytes),
        [
            ("cycles.Plan", 0),
            ("cycles.Join", 1),
            ("cycles.Plan", 2),
            ("cycles.Plan", 2),
            ("cycles.Join", 3),
            ("cycles.Plan", 4),
            ("cycles.Plan", 4),
        ]
    );
}

#[test]
fn cycle_through_a_nested_message() {
    let bytes = encode(|w| {
        let mut o = Outer::from_message(w.root());
        let mut i = o.begin_inner();
        i.begin_back().set_label("up");
        i.add_more().add_more().begin_back().begin_inner();
    });
    assert_eq!(
        decode_text("fixture.cycles.Outer", FILE, &bytes),
        "inner {\n  back {\n    label: \"up\"\n  }\n  more {\n    more {\n      back {\n        inner {\n        }\n      }\n    }\n  }\n}\n"
    );
    let o = OuterDecoder::new(&bytes);
    let Some(outer::Choice::Inner(i)) = o.which_choice() else {
        panic!("no inner: {o:?}");
    };
    assert_eq!(i.back().unwrap().label(), Some("up"));
    assert_eq!(
        walk::<OuterDecoder<'_>>(&bytes),
        [
            ("cycles.Outer", 0),
            ("cycles.Outer.Inner", 1),
            ("cycles.Outer", 2),
            ("cycles.Outer.Inner", 2),
            ("cycles.Outer.Inner", 3),
            ("cycles.Outer", 4),
            ("cycles.Outer.Inner", 5),
        ]
    );
}

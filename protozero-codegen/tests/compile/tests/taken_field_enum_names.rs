//! Issue 47 and its neighbours: a message in a recursion cycle whose field
//! enum's usual name `XField` another type holds (DataFusion's `Union` next
//! to its message `UnionField`; an enum, a later message, a oneof enum, a
//! message of another file of the package, a group's sibling). Each now has
//! `XField_`, so its decoder is `MessageFields` and every `visit_message`
//! reaching it compiles; here each is written with the generated writers,
//! read back by `protoc --decode`, by the renamed field enum and by a generic
//! walk, and protoc's own encoding walks the same.

mod support;

use protozero::EnumValue;
use protozero_codegen_fixtures::cycles::fixture::{datafusion, groups, split, split_user, taken};
use support::{decode_text, encode, encode_text, walk};

const DATAFUSION: &str = "fixture/cycles/datafusion.proto";
const TAKEN: &str = "fixture/cycles/taken_names.proto";
const SPLIT_USER: &str = "fixture/cycles/split_user.proto";
const GROUPS: &str = "fixture/cycles/groups.proto";

#[test]
fn datafusion_union_in_the_arrow_type_cycle() {
    use datafusion::{
        ArrowType, ArrowTypeDecoder, ArrowTypeField, UnionField, UnionField_, UnionFieldDecoder,
        UnionFieldField, UnionMode,
    };
    let bytes = encode(|w| {
        let mut t = ArrowType::from_message(w.root());
        let mut u = t.begin_union();
        u.add_union_types()
            .set_name("a")
            .begin_arrow_type()
            .set_fixed_size_binary(4);
        {
            let mut b = u.add_union_types();
            b.set_name("b").set_nullable(true);
            b.begin_arrow_type()
                .begin_union()
                .add_union_types()
                .set_name("c")
                .begin_arrow_type()
                .begin_bool();
        }
        u.set_union_mode(UnionMode::Dense).set_type_ids([0, 1]);
    });
    // protoc prints fields in number order, the walks follow the wire.
    assert_eq!(
        decode_text("fixture.datafusion.ArrowType", DATAFUSION, &bytes),
        "UNION {\n  union_types {\n    name: \"a\"\n    arrow_type {\n      FIXED_SIZE_BINARY: 4\n    }\n  }\n  union_types {\n    name: \"b\"\n    arrow_type {\n      UNION {\n        union_types {\n          name: \"c\"\n          arrow_type {\n            BOOL {\n            }\n          }\n        }\n      }\n    }\n    nullable: true\n  }\n  union_mode: dense\n  type_ids: 0\n  type_ids: 1\n}\n"
    );
    let expected = [
        ("datafusion.ArrowType", 0),
        ("datafusion.Union", 1),
        ("datafusion.Field", 2),
        ("datafusion.ArrowType", 3),
        ("datafusion.Field", 2),
        ("datafusion.ArrowType", 3),
        ("datafusion.Union", 4),
        ("datafusion.Field", 5),
        ("datafusion.ArrowType", 6),
        ("datafusion.EmptyMessage", 7),
    ];
    assert_eq!(walk::<ArrowTypeDecoder<'_>>(&bytes), expected);
    let theirs = encode_text(
        "fixture.datafusion.ArrowType",
        DATAFUSION,
        "UNION { union_types { name: 'a' arrow_type { FIXED_SIZE_BINARY: 4 } } union_types { name: 'b' nullable: true arrow_type { UNION { union_types { name: 'c' arrow_type { BOOL {} } } } } } union_mode: dense type_ids: [0, 1] }",
    );
    assert_eq!(walk::<ArrowTypeDecoder<'_>>(&theirs), expected);

    // `Union`'s own field enum, under its new name.
    let Some(ArrowTypeField::Union(union)) = ArrowTypeField::read(&bytes).next() else {
        panic!("no UNION first");
    };
    let mut seen = Vec::new();
    for f in union.fields() {
        match f {
            UnionField_::UnionTypes(t) => seen.push(format!("type {:?}", t.decode().name())),
            UnionField_::UnionMode(m) => seen.push(format!("mode {m:?}")),
            UnionField_::TypeIds(ids) => seen.push(format!("ids {:?}", ids.collect::<Vec<_>>())),
            other => seen.push(format!("other {other:?}")),
        }
    }
    assert_eq!(
        seen,
        [
            "type Some(\"a\")",
            "type Some(\"b\")",
            format!("mode {:?}", EnumValue::Known(UnionMode::Dense)).as_str(),
            "ids [0, 1]",
        ]
    );
    let u = ArrowTypeDecoder::new(&bytes).union().unwrap();
    assert_eq!(u.union_mode(), Some(UnionMode::Dense));
    assert_eq!(u.type_ids().collect::<Vec<_>>(), [0, 1]);

    // The message that holds the name is untouched: writer, decoder, its
    // own field enum.
    let holder = encode(|w| {
        let mut f = UnionField::from_message(w.root());
        f.set_field_id(3);
        f.begin_field().set_name("d");
    });
    assert_eq!(UnionFieldDecoder::new(&holder).field_id(), Some(3));
    assert!(matches!(
        UnionFieldField::read(&holder).next(),
        Some(UnionFieldField::FieldId(3))
    ));
    assert_eq!(
        walk::<UnionFieldDecoder<'_>>(&holder),
        [("datafusion.UnionField", 0), ("datafusion.Field", 1)]
    );
}

#[test]
fn self_member_of_a_oneof_named_like_an_enum() {
    use taken::{Graph, GraphDecoder, NodeField, NodeField_};
    let bytes = encode(|w| {
        let mut g = Graph::from_message(w.root());
        {
            let mut n = g.add_roots();
            n.begin_child().begin_child().set_leaf(7);
            n.add_siblings().set_leaf(8);
        }
        g.add_roots().set_leaf(9);
    });
    assert_eq!(
        decode_text("fixture.taken.Graph", TAKEN, &bytes),
        "roots {\n  child {\n    child {\n      leaf: 7\n    }\n  }\n  siblings {\n    leaf: 8\n  }\n}\nroots {\n  leaf: 9\n}\n"
    );
    assert_eq!(
        walk::<GraphDecoder<'_>>(&bytes),
        [
            ("taken.Graph", 0),
            ("taken.Node", 1),
            ("taken.Node", 2),
            ("taken.Node", 3),
            ("taken.Node", 2),
            ("taken.Node", 1),
        ]
    );
    let root = GraphDecoder::new(&bytes).roots().next().unwrap();
    let kinds: Vec<_> = NodeField_::read(root.raw_bytes())
        .map(|f| match f {
            NodeField_::Child(c) => format!("child {:?}", c.decode().child().unwrap().leaf()),
            NodeField_::Siblings(s) => format!("sibling {:?}", s.decode().leaf()),
            other => format!("other {other:?}"),
        })
        .collect();
    assert_eq!(kinds, ["child Some(7)", "sibling Some(8)"]);
    // The enum keeps the name.
    assert_eq!(NodeField::Name.as_str_name(), "NODE_FIELD_NAME");
}

#[test]
fn map_value_in_a_cycle_named_like_a_message() {
    use taken::{Bucket, BucketDecoder, BucketField, BucketField_, BucketFieldDecoder};
    let bytes = encode(|w| {
        let mut b = Bucket::from_message(w.root());
        b.set_count(1);
        let mut e = b.add_nested();
        e.set_key("x");
        e.begin_value()
            .set_count(2)
            .add_nested()
            .set_key("y")
            .begin_value()
            .set_count(3);
    });
    assert_eq!(
        decode_text("fixture.taken.Bucket", TAKEN, &bytes),
        "nested {\n  key: \"x\"\n  value {\n    nested {\n      key: \"y\"\n      value {\n        count: 3\n      }\n    }\n    count: 2\n  }\n}\ncount: 1\n"
    );
    let expected = [
        ("taken.Bucket", 0),
        ("taken.Bucket.NestedEntry", 1),
        ("taken.Bucket", 2),
        ("taken.Bucket.NestedEntry", 3),
        ("taken.Bucket", 4),
    ];
    assert_eq!(walk::<BucketDecoder<'_>>(&bytes), expected);
    let theirs = encode_text(
        "fixture.taken.Bucket",
        TAKEN,
        "count: 1 nested { key: 'x' value { count: 2 nested { key: 'y' value { count: 3 } } } }",
    );
    assert_eq!(walk::<BucketDecoder<'_>>(&theirs), expected);
    let counts: Vec<_> = BucketField_::read(&bytes)
        .map(|f| match f {
            BucketField_::Count(c) => c,
            BucketField_::Nested(e) => e.decode().value().unwrap().count().unwrap() * 10,
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(counts, [1, 20]);
    let holder = encode(|w| {
        BucketField::from_message(w.root()).set_key("k");
    });
    assert_eq!(BucketFieldDecoder::new(&holder).key(), Some("k"));
}

#[test]
fn nested_message_named_like_its_parents_oneof() {
    use taken::holder::{PartField, PartField_};
    use taken::{Holder, HolderDecoder};
    let bytes = encode(|w| {
        let mut h = Holder::from_message(w.root());
        let mut p = h.begin_part();
        p.set_tag("t");
        p.begin_parent().begin_part().begin_parent().set_id(5);
    });
    assert_eq!(
        decode_text("fixture.taken.Holder", TAKEN, &bytes),
        "part {\n  parent {\n    part {\n      parent {\n        id: 5\n      }\n    }\n  }\n  tag: \"t\"\n}\n"
    );
    assert_eq!(
        walk::<HolderDecoder<'_>>(&bytes),
        [
            ("taken.Holder", 0),
            ("taken.Holder.Part", 1),
            ("taken.Holder", 2),
            ("taken.Holder.Part", 3),
            ("taken.Holder", 4),
        ]
    );
    // `holder::PartField` is still the oneof; the field enum is `PartField_`.
    let h = HolderDecoder::new(&bytes);
    let Some(PartField::Part(part)) = h.which_part_field() else {
        panic!("no part: {h:?}");
    };
    let tags: Vec<_> = PartField_::read(part.raw_bytes())
        .filter_map(|f| match f {
            PartField_::Tag(t) => Some(t),
            _ => None,
        })
        .collect();
    assert_eq!(tags, ["t"]);
}

#[test]
fn repeated_in_a_cycle_through_a_oneof_named_like_a_later_message() {
    use taken::{Choice, ChoiceDecoder, ChoiceField_};
    let bytes = encode(|w| {
        let mut c = Choice::from_message(w.root());
        let mut many = c.begin_many();
        many.add_items().set_one("a");
        many.add_items().begin_many().add_items().set_one("b");
    });
    assert_eq!(
        decode_text("fixture.taken.Choice", TAKEN, &bytes),
        "many {\n  items {\n    one: \"a\"\n  }\n  items {\n    many {\n      items {\n        one: \"b\"\n      }\n    }\n  }\n}\n"
    );
    assert_eq!(
        walk::<ChoiceDecoder<'_>>(&bytes),
        [
            ("taken.Choice", 0),
            ("taken.Choices", 1),
            ("taken.Choice", 2),
            ("taken.Choice", 2),
            ("taken.Choices", 3),
            ("taken.Choice", 4),
        ]
    );
    assert!(matches!(
        ChoiceField_::read(&bytes).next(),
        Some(ChoiceField_::Many(_))
    ));
}

#[test]
fn cycle_in_one_file_name_held_in_another_reached_from_another_package() {
    use split::{TreeField, TreeField_, TreeFieldDecoder};
    use split_user::{Query, QueryDecoder, QueryField};
    let bytes = encode(|w| {
        let mut q = Query::from_message(w.root());
        let mut t = q.begin_tree();
        let mut f = t.begin_forest();
        f.add_trees().begin_left().set_leaf("l");
        f.add_trees().set_leaf("r");
    });
    assert_eq!(
        decode_text("fixture.split_user.Query", SPLIT_USER, &bytes),
        "tree {\n  forest {\n    trees {\n      left {\n        leaf: \"l\"\n      }\n    }\n    trees {\n      leaf: \"r\"\n    }\n  }\n}\n"
    );
    let expected = [
        ("split_user.Query", 0),
        ("split.Tree", 1),
        ("split.Forest", 2),
        ("split.Tree", 3),
        ("split.Tree", 4),
        ("split.Tree", 3),
    ];
    assert_eq!(walk::<QueryDecoder<'_>>(&bytes), expected);
    let theirs = encode_text(
        "fixture.split_user.Query",
        SPLIT_USER,
        "tree { forest { trees { left { leaf: 'l' } } trees { leaf: 'r' } } }",
    );
    assert_eq!(walk::<QueryDecoder<'_>>(&theirs), expected);
    let Some(QueryField::Tree(tree)) = QueryField::read(&bytes).next() else {
        panic!("no tree first");
    };
    assert!(matches!(
        TreeField_::read(tree.bytes()).next(),
        Some(TreeField_::Forest(_))
    ));
    let note = encode(|w| {
        TreeField::from_message(w.root()).set_note("n");
    });
    assert_eq!(TreeFieldDecoder::new(&note).note(), Some("n"));
}

#[test]
fn proto2_groups_in_a_cycle_named_like_their_siblings() {
    use groups::tree::{BranchField_, NodeField, NodeField_, NodeFieldDecoder};
    use groups::{Tree, TreeDecoder, TreeField};
    let bytes = encode(|w| {
        let mut t = Tree::from_message(w.root());
        {
            let mut n = t.begin_node();
            n.begin_subtree().begin_node().add_weights(1);
            n.add_weights(2).add_weights(3);
        }
        t.add_branch().begin_down().set_leaf("x");
        t.add_branch();
    });
    assert_eq!(
        decode_text("fixture.groups.Tree", GROUPS, &bytes),
        "Node {\n  subtree {\n    Node {\n      weights: 1\n    }\n  }\n  weights: 2\n  weights: 3\n}\nBranch {\n  down {\n    leaf: \"x\"\n  }\n}\nBranch {\n}\n"
    );
    let expected = [
        ("groups.Tree", 0),
        ("groups.Tree.Node", 1),
        ("groups.Tree", 2),
        ("groups.Tree.Node", 3),
        ("groups.Tree.Branch", 1),
        ("groups.Tree", 2),
        ("groups.Tree.Branch", 1),
    ];
    assert_eq!(walk::<TreeDecoder<'_>>(&bytes), expected);
    let theirs = encode_text(
        "fixture.groups.Tree",
        GROUPS,
        "Node { subtree { Node { weights: 1 } } weights: 2 weights: 3 } Branch { down { leaf: 'x' } } Branch {}",
    );
    assert_eq!(walk::<TreeDecoder<'_>>(&theirs), expected);
    let mut weights = Vec::new();
    let mut downs = 0;
    for f in TreeField::read(&bytes) {
        match f {
            TreeField::Node(n) => {
                for g in NodeField_::read(n.bytes()) {
                    if let NodeField_::Weights(w) = g {
                        weights.extend(w);
                    }
                }
            }
            TreeField::Branch(b) => {
                downs += BranchField_::read(b.bytes())
                    .filter(|g| matches!(g, BranchField_::Down(_)))
                    .count();
            }
            other => panic!("{other:?}"),
        }
    }
    assert_eq!((weights, downs), (vec![2, 3], 1));
    let x = encode(|w| {
        NodeField::from_message(w.root()).set_x(4);
    });
    assert_eq!(NodeFieldDecoder::new(&x).x(), Some(4));
}

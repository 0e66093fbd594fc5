//! Seeds that are made rather than recorded: the `derive_decoders` seeds
//! are encodings of sample values of the target's types, kept in step with
//! those types here (`ZEROTRACE_FUZZ_BLESS=1 cargo test -p
//! zerotrace-fuzz-logic --test seeds` rewrites them after a change).

use std::borrow::Cow;
use std::path::Path;

use protozero::{ProtoRead, ProtoWrite};
use zerotrace_fuzz_logic::derive_decoders::{Level, Node, Payload, Scalars};

fn leaf(name: &str) -> Node<'_> {
    Node {
        name,
        owned: String::new(),
        cow: Cow::Borrowed(""),
        blob: &[],
        bytes: None,
        level: Level::Unset,
        maybe_level: None,
        scalars: None,
        children: Vec::new(),
        packed: Vec::new(),
        deltas: Vec::new(),
        points: Vec::new(),
        levels: Vec::new(),
        names: Vec::new(),
        bools: Vec::new(),
        boxed: None,
        payload: None,
    }
}

/// A value with every field set.
fn everything() -> Node<'static> {
    Node {
        name: "root",
        owned: "owned".into(),
        cow: Cow::Borrowed("cow"),
        blob: &[0, 0xff, 0x80],
        bytes: Some(vec![]),
        level: Level::Negative,
        maybe_level: Some(Level::Unset),
        scalars: Some(Scalars {
            u32: u32::MAX,
            u64: 1 << 40,
            i32: -1,
            i64: i64::MIN,
            s32: -2,
            s64: i64::MAX,
            f32_bits: 0xdead_beef,
            f64_bits: 1,
            sf32: -3,
            sf64: -4,
            flag: true,
            float: -0.0,
            double: 1.5e300,
            maybe_u32: Some(0),
            maybe_flag: Some(false),
            maybe_s64: Some(-1),
            scratch: 0,
        }),
        children: vec![leaf("a"), leaf("b")],
        packed: vec![0, 1, 300, u32::MAX],
        deltas: vec![-1, 0, 1],
        points: vec![0.5, f32::INFINITY],
        levels: vec![Level::Low, Level::High, Level::Negative],
        names: vec!["x", "", "z"],
        bools: vec![true, false],
        boxed: Some(Box::new(leaf("boxed"))),
        payload: Some(Payload::Child(Box::new(leaf("child")))),
    }
}

/// A smaller value: a oneof scalar and nesting through children.
fn nested() -> Node<'static> {
    let mut inner = leaf("inner");
    inner.payload = Some(Payload::Delta(-7));
    inner.children = vec![leaf("deep")];
    let mut outer = leaf("outer");
    outer.children = vec![inner];
    outer.payload = Some(Payload::Text("text"));
    outer
}

/// `name`'s seed is `split` followed by `value`'s encoding.
fn check(name: &str, split: u8, value: &Node<'_>) {
    let mut seed = vec![split];
    seed.extend(value.write_to_vec().expect("encodes"));
    assert_eq!(
        format!("{:?}", Node::decode(&seed[1..]).expect("decodes")),
        format!("{value:?}")
    );
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../seeds/derive_decoders")
        .join(name);
    if std::env::var_os("ZEROTRACE_FUZZ_BLESS").is_some() {
        std::fs::write(&path, &seed).expect("write the seed");
    }
    let committed = std::fs::read(&path).expect("the seed is committed");
    assert!(
        committed == seed,
        "{} is stale (ZEROTRACE_FUZZ_BLESS=1 rewrites it)",
        path.display()
    );
}

#[test]
fn derive_decoders_seeds_are_encodings_of_the_samples() {
    check("every-field", 0x40, &everything());
    check("nested", 0x11, &nested());
}

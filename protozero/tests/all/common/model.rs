//! The message-tree model shared by the property tests: one `prost` struct that
//! uses every protobuf field kind (it is also the independent oracle), and
//! proptest strategies that build random trees of it, bushy or as a narrow chain
//! up to 64 levels deep, with strings and bytes up to 100 KiB.

use proptest::collection::vec;
use proptest::option::weighted;
use proptest::prelude::*;

/// An enum for the `enum` field kind; values outside it are kept (open enum).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
#[repr(i32)]
pub enum Kind {
    /// Zero value.
    Unspecified = 0,
    /// A small value.
    One = 1,
    /// A negative value (sign-extended to 10 bytes on the wire).
    Negative = -2,
}

/// Every field kind: singular scalars (with presence), packed and unpacked
/// repeated fields, strings, bytes, nested messages, and high field ids.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Node {
    #[prost(int32, optional, tag = "1")]
    pub i32: Option<i32>,
    #[prost(int64, optional, tag = "2")]
    pub i64: Option<i64>,
    #[prost(uint32, optional, tag = "3")]
    pub u32: Option<u32>,
    #[prost(uint64, optional, tag = "4")]
    pub u64: Option<u64>,
    #[prost(sint32, optional, tag = "5")]
    pub s32: Option<i32>,
    #[prost(sint64, optional, tag = "6")]
    pub s64: Option<i64>,
    #[prost(bool, optional, tag = "7")]
    pub b: Option<bool>,
    #[prost(enumeration = "Kind", optional, tag = "8")]
    pub e: Option<i32>,
    #[prost(fixed32, optional, tag = "9")]
    pub fx32: Option<u32>,
    #[prost(fixed64, optional, tag = "10")]
    pub fx64: Option<u64>,
    #[prost(sfixed32, optional, tag = "11")]
    pub sfx32: Option<i32>,
    #[prost(sfixed64, optional, tag = "12")]
    pub sfx64: Option<i64>,
    #[prost(float, optional, tag = "13")]
    pub fl: Option<f32>,
    #[prost(double, optional, tag = "14")]
    pub db: Option<f64>,
    #[prost(string, optional, tag = "15")]
    pub s: Option<String>,
    #[prost(bytes = "vec", optional, tag = "16")]
    pub by: Option<Vec<u8>>,

    #[prost(int32, repeated, tag = "17")]
    pub p_i32: Vec<i32>,
    #[prost(int64, repeated, tag = "18")]
    pub p_i64: Vec<i64>,
    #[prost(uint32, repeated, tag = "19")]
    pub p_u32: Vec<u32>,
    #[prost(uint64, repeated, tag = "20")]
    pub p_u64: Vec<u64>,
    #[prost(sint32, repeated, tag = "21")]
    pub p_s32: Vec<i32>,
    #[prost(sint64, repeated, tag = "22")]
    pub p_s64: Vec<i64>,
    #[prost(bool, repeated, tag = "23")]
    pub p_b: Vec<bool>,
    #[prost(enumeration = "Kind", repeated, tag = "24")]
    pub p_e: Vec<i32>,
    #[prost(fixed32, repeated, tag = "25")]
    pub p_fx32: Vec<u32>,
    #[prost(fixed64, repeated, tag = "26")]
    pub p_fx64: Vec<u64>,
    #[prost(sfixed32, repeated, tag = "27")]
    pub p_sfx32: Vec<i32>,
    #[prost(sfixed64, repeated, tag = "28")]
    pub p_sfx64: Vec<i64>,
    #[prost(float, repeated, tag = "29")]
    pub p_fl: Vec<f32>,
    #[prost(double, repeated, tag = "30")]
    pub p_db: Vec<f64>,

    #[prost(int32, repeated, packed = "false", tag = "31")]
    pub u_i32: Vec<i32>,
    #[prost(sint64, repeated, packed = "false", tag = "32")]
    pub u_s64: Vec<i64>,
    #[prost(fixed64, repeated, packed = "false", tag = "33")]
    pub u_fx64: Vec<u64>,
    #[prost(string, repeated, tag = "34")]
    pub u_s: Vec<String>,
    #[prost(bytes = "vec", repeated, tag = "35")]
    pub u_by: Vec<Vec<u8>>,

    #[prost(message, repeated, tag = "36")]
    pub children: Vec<Node>,
    #[prost(message, optional, boxed, tag = "37")]
    pub child: Option<Box<Node>>,

    /// Above the dense table of the typed decoder (spills).
    #[prost(string, repeated, tag = "1000")]
    pub hi: Vec<String>,
    /// The largest field id, a 5-byte tag.
    #[prost(uint64, optional, tag = "536870911")]
    pub max_id: Option<u64>,
}

/// Largest string/bytes payload the strategies generate (100 KiB).
pub const MAX_BIG: usize = 100 * 1024;

/// Deterministic filler so 100 KiB strings cost nothing to generate or shrink:
/// mixes 1-, 2-, 3- and 4-byte UTF-8 characters, at most `len` bytes.
pub fn make_string(len: usize, seed: u64) -> String {
    const CHARS: [char; 8] = ['a', 'Z', '0', ' ', 'é', '€', '😀', '\u{7f}'];
    let mut s = String::with_capacity(len);
    let mut x = seed | 1;
    loop {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let c = CHARS[(x % CHARS.len() as u64) as usize];
        if s.len() + c.len_utf8() > len {
            return s;
        }
        s.push(c);
    }
}

/// Bytes of exactly `len`, derived from `seed`.
pub fn make_bytes(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    (0..len)
        .map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 56) as u8
        })
        .collect()
}

/// Mostly short, sometimes up to 100 KiB.
fn payload_len() -> impl Strategy<Value = usize> {
    prop_oneof![
        12 => 0..24usize,
        4 => 100..200usize,
        1 => 0..=MAX_BIG,
    ]
}

fn string() -> impl Strategy<Value = String> {
    (payload_len(), any::<u64>()).prop_map(|(len, seed)| make_string(len, seed))
}

fn bytes() -> impl Strategy<Value = Vec<u8>> {
    (payload_len(), any::<u64>()).prop_map(|(len, seed)| make_bytes(len, seed))
}

/// Lists are usually short; sometimes long enough to pass 127 bytes packed.
fn list<S: Strategy + Clone>(s: S) -> impl Strategy<Value = Vec<S::Value>> {
    prop_oneof![6 => vec(s.clone(), 0..6), 1 => vec(s, 20..200)]
}

fn opt<S: Strategy>(s: S) -> impl Strategy<Value = Option<S::Value>> {
    weighted(0.3, s)
}

fn enum_value() -> impl Strategy<Value = i32> + Clone {
    prop_oneof![Just(0), Just(1), Just(-2), any::<i32>()]
}

/// One node's own fields (no children).
pub fn node_fields() -> impl Strategy<Value = Node> {
    let singular = (
        (
            opt(any::<i32>()),
            opt(any::<i64>()),
            opt(any::<u32>()),
            opt(any::<u64>()),
            opt(any::<i32>()),
            opt(any::<i64>()),
            opt(any::<bool>()),
            opt(enum_value()),
        ),
        (
            opt(any::<u32>()),
            opt(any::<u64>()),
            opt(any::<i32>()),
            opt(any::<i64>()),
            opt(any::<f32>()),
            opt(any::<f64>()),
            opt(string()),
            opt(bytes()),
        ),
    );
    let packed = (
        (
            list(any::<i32>()),
            list(any::<i64>()),
            list(any::<u32>()),
            list(any::<u64>()),
            list(any::<i32>()),
            list(any::<i64>()),
            list(any::<bool>()),
            list(enum_value()),
        ),
        (
            list(any::<u32>()),
            list(any::<u64>()),
            list(any::<i32>()),
            list(any::<i64>()),
            list(any::<f32>()),
            list(any::<f64>()),
        ),
    );
    let unpacked = (
        list(any::<i32>()),
        list(any::<i64>()),
        list(any::<u64>()),
        vec(string(), 0..3),
        vec(bytes(), 0..3),
        vec(string(), 0..2),
        opt(any::<u64>()),
    );
    (singular, packed, unpacked).prop_map(|(s, p, u)| {
        let ((i32, i64, u32, u64, s32, s64, b, e), (fx32, fx64, sfx32, sfx64, fl, db, st, by)) = s;
        let (
            (p_i32, p_i64, p_u32, p_u64, p_s32, p_s64, p_b, p_e),
            (p_fx32, p_fx64, p_sfx32, p_sfx64, p_fl, p_db),
        ) = p;
        let (u_i32, u_s64, u_fx64, u_s, u_by, hi, max_id) = u;
        Node {
            i32,
            i64,
            u32,
            u64,
            s32,
            s64,
            b,
            e,
            fx32,
            fx64,
            sfx32,
            sfx64,
            fl,
            db,
            s: st,
            by,
            p_i32,
            p_i64,
            p_u32,
            p_u64,
            p_s32,
            p_s64,
            p_b,
            p_e,
            p_fx32,
            p_fx64,
            p_sfx32,
            p_sfx64,
            p_fl,
            p_db,
            u_i32,
            u_s64,
            u_fx64,
            u_s,
            u_by,
            children: Vec::new(),
            child: None,
            hi,
            max_id,
        }
    })
}

/// A bushy tree a few levels deep.
pub fn bushy_tree() -> impl Strategy<Value = Node> {
    node_fields().prop_recursive(4, 24, 4, |inner| {
        (
            node_fields(),
            vec(inner.clone(), 0..4),
            weighted(0.3, inner),
        )
            .prop_map(|(mut n, children, child)| {
                n.children = children;
                n.child = child.map(Box::new);
                n
            })
    })
}

/// A narrow chain of up to 64 nested levels below the root, alternating the
/// repeated and the singular message field, with few fields per level.
pub fn chain_tree() -> impl Strategy<Value = Node> {
    let level = (opt(any::<i32>()), opt(string()), list(any::<u64>()));
    vec(level, 1..=65).prop_map(|levels| {
        let mut node: Option<Node> = None;
        for (depth, (i32, s, p_u64)) in levels.into_iter().enumerate().rev() {
            let mut n = Node {
                i32,
                s,
                p_u64,
                ..Node::default()
            };
            if let Some(inner) = node.take() {
                if depth % 2 == 0 {
                    n.children.push(inner);
                } else {
                    n.child = Some(Box::new(inner));
                }
            }
            node = Some(n);
        }
        node.unwrap_or_default()
    })
}

/// Either shape.
pub fn tree() -> impl Strategy<Value = Node> {
    prop_oneof![3 => bushy_tree(), 1 => chain_tree()]
}

/// Nesting depth of a tree (a lone root is 0).
pub fn depth(n: &Node) -> usize {
    n.children
        .iter()
        .chain(n.child.as_deref())
        .map(|c| 1 + depth(c))
        .max()
        .unwrap_or(0)
}

/// Exact equality, NaN payloads included: both sides re-encoded by prost.
#[track_caller]
pub fn assert_same(expected: &Node, actual: &Node) {
    use prost::Message as _;
    if expected.encode_to_vec() != actual.encode_to_vec() {
        let e = format!("{expected:?}");
        let a = format!("{actual:?}");
        let cut = |s: &str| s.chars().take(4000).collect::<String>();
        panic!("trees differ\nexpected: {}\nactual:   {}", cut(&e), cut(&a));
    }
}

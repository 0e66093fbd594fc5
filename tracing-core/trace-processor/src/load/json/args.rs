//! A JSON event's `args` into an arg set, keyed as Perfetto keys them:
//! `args.a.b` for nested objects, `args.list[0]` for array elements (the
//! flat key leaves the index out), nulls left out, booleans as booleans.
//! A trace repeats the same few key paths in millions of events:
//! [`KeyCache`] finds a path's interned key from its parent's and the
//! member's name, so that a key is built and interned once per path.

use std::borrow::Cow;
use std::hash::{BuildHasher, Hash, Hasher};

use crate::column_store::strings::StrId;
use crate::hash::HashMap;
use crate::storage::Storage;
use crate::storage::args::{ArgSetBuilder, ArgValue};

use super::scan::{Elements, Fields, ScanError, Value, skip_space, string_bytes, value};

/// Deepest nesting of objects and arrays read (a hostile `args` cannot
/// make the reading recurse without bound).
const MAX_NESTING: u32 = 64;

/// Adds the args of the object `obj` under `prefix` (`args`) to `out`.
/// An error leaves the args read before it.
pub fn add(
    storage: &mut Storage,
    obj: &[u8],
    prefix: &str,
    out: &mut ArgSetBuilder,
) -> Result<(), ScanError> {
    let mut flat = prefix.to_owned();
    let mut key = prefix.to_owned();
    let mut counters: Vec<(String, usize)> = Vec::new();
    walk(
        storage,
        &Value::Object(obj),
        &mut flat,
        &mut key,
        out,
        &mut counters,
        0,
    )
}

fn leaf(storage: &mut Storage, v: &Value<'_>) -> Option<ArgValue> {
    Some(match v {
        Value::Int(i) => ArgValue::Int(*i),
        Value::Float(d) => ArgValue::Real(*d),
        Value::Bool(b) => ArgValue::Bool(*b),
        Value::Str(s) => ArgValue::String(storage.strings.intern(s)),
        _ => return None,
    })
}

fn walk(
    storage: &mut Storage,
    v: &Value<'_>,
    flat: &mut String,
    key: &mut String,
    out: &mut ArgSetBuilder,
    counters: &mut Vec<(String, usize)>,
    depth: u32,
) -> Result<(), ScanError> {
    if depth > MAX_NESTING {
        return Err(ScanError::Invalid("args nested too deep".to_owned()));
    }
    let (flat_len, key_len) = (flat.len(), key.len());
    match v {
        Value::Object(bytes) => {
            let mut f = Fields::new(bytes, 0)?;
            while let Some((k, child)) = f.next_field()? {
                if child == Value::Null {
                    continue;
                }
                flat.truncate(flat_len);
                key.truncate(key_len);
                flat.push('.');
                flat.push_str(&k);
                key.push('.');
                key.push_str(&k);
                walk(storage, &child, flat, key, out, counters, depth + 1)?;
            }
        }
        Value::Array(bytes) => {
            let mut e = Elements::new(bytes, 0)?;
            while let Some(child) = e.next_element()? {
                if child == Value::Null {
                    continue;
                }
                flat.truncate(flat_len);
                key.truncate(key_len);
                // The next index of this key within the set.
                let base = key.clone();
                let idx = match counters.iter_mut().find(|(k, _)| *k == base) {
                    Some((_, n)) => {
                        *n += 1;
                        *n - 1
                    }
                    None => {
                        counters.push((base, 1));
                        0
                    }
                };
                push_index(key, idx);
                walk(storage, &child, flat, key, out, counters, depth + 1)?;
            }
        }
        other => {
            if let Some(val) = leaf(storage, other) {
                let fk = storage.strings.intern(flat);
                // Outside arrays both keys are one string.
                let k = if flat == key {
                    fk
                } else {
                    storage.strings.intern(key)
                };
                out.add(fk, k, val);
            }
        }
    }
    flat.truncate(flat_len);
    key.truncate(key_len);
    Ok(())
}

/// Key paths a cache holds at most (a trace of a new key in every event
/// costs no more than this beyond the string pool).
const MAX_CACHED_KEYS: usize = 1 << 16;

/// One cached key path: its parent path, the member's name, the interned
/// flat key (`args.a.b`).
#[derive(Debug)]
struct KeyNode {
    parent: u32,
    /// The member's name as its bytes (unescaped).
    name: Box<[u8]>,
    flat: StrId,
    /// The name holds no quote or backslash: written plainly, its raw
    /// bytes are the name, so it is matched where it lies.
    plain: bool,
    /// The member first in the last object read at this path
    /// ([`NO_NODE`] when none yet): the guess for the next such object.
    first_child: u32,
    /// The member that came after this one the last time ([`NO_NODE`]
    /// when none): the guess for the next time.
    next: u32,
}

/// No node (a guess not made yet).
const NO_NODE: u32 = u32::MAX;

/// A key path while walking: its node when cached, its flat key.
#[derive(Debug, Clone, Copy)]
struct Path {
    node: Option<u32>,
    flat: StrId,
}

/// Full keys (inside arrays) a cache holds at most.
const MAX_CACHED_FULL_KEYS: usize = 1 << 16;

/// Categories and names a cache holds at most.
const MAX_CACHED_NAMES: usize = 1 << 14;

/// A full key's step that is an array index (below: a member's node).
const INDEX_STEP: u32 = 1 << 31;

/// Interned flat keys by path, below one prefix (node 0), and the full
/// keys inside arrays (`args.a[0].b`) by their parent's full key and the
/// step from it, so that an array element's key is not written and
/// interned again for every event.
#[derive(Debug)]
pub struct KeyCache {
    prefix: String,
    nodes: Vec<KeyNode>,
    /// Hash of (parent, name) → node.
    by_hash: HashMap<u64, u32>,
    state: foldhash::fast::RandomState,
    /// (parent's full key, member node or [`INDEX_STEP`] | index) → the
    /// full key.
    full: HashMap<(u32, u32), StrId>,
    /// The set being read: the next index of each array (by its full key).
    counters: Vec<(StrId, usize)>,
    /// Events' categories and names by their bytes (unescaped): a trace
    /// repeats a few hundred of them millions of times, and a hit costs
    /// neither the UTF-8 check nor the string pool's lookup.
    names: HashMap<Box<[u8]>, StrId>,
}

impl KeyCache {
    /// A cache of the keys under `prefix`.
    pub fn new(prefix: &str) -> KeyCache {
        KeyCache {
            prefix: prefix.to_owned(),
            nodes: Vec::new(),
            by_hash: HashMap::default(),
            state: foldhash::fast::RandomState::default(),
            full: HashMap::default(),
            counters: Vec::new(),
            names: HashMap::default(),
        }
    }

    /// The interned id of the string whose unescaped bytes are `bytes`
    /// (what interning `String::from_utf8_lossy(bytes)` gives).
    pub fn intern_name(&mut self, storage: &mut Storage, bytes: &[u8]) -> StrId {
        if let Some(&id) = self.names.get(bytes) {
            return id;
        }
        let id = storage.strings.intern(&String::from_utf8_lossy(bytes));
        if self.names.len() < MAX_CACHED_NAMES {
            self.names.insert(Box::from(bytes), id);
        }
        id
    }

    /// The full key `parent` followed by what `suffix` writes (`.name` or
    /// `[idx]`), found by `step` when the step has one (and made and
    /// interned otherwise, or when the cache is full).
    fn full_child(
        &mut self,
        storage: &mut Storage,
        parent: StrId,
        step: Option<u32>,
        suffix: impl FnOnce(&mut String),
    ) -> StrId {
        if let Some(s) = step {
            if let Some(&k) = self.full.get(&(parent.0, s)) {
                return k;
            }
        }
        let mut text = String::with_capacity(64);
        text.push_str(storage.strings.get(parent).unwrap_or(""));
        suffix(&mut text);
        let k = storage.strings.intern(&text);
        if let Some(s) = step {
            if self.full.len() < MAX_CACHED_FULL_KEYS {
                self.full.insert((parent.0, s), k);
            }
        }
        k
    }

    /// The next index of the array whose full key is `array` within the
    /// set being read.
    fn next_index(&mut self, array: StrId) -> usize {
        match self.counters.iter_mut().find(|(k, _)| *k == array) {
            Some((_, n)) => {
                *n += 1;
                *n - 1
            }
            None => {
                self.counters.push((array, 1));
                0
            }
        }
    }

    /// The prefix's path.
    fn root(&mut self, storage: &mut Storage) -> Path {
        if self.nodes.is_empty() {
            let flat = storage.strings.intern(&self.prefix);
            self.nodes.push(KeyNode {
                parent: 0,
                name: Box::from(&b""[..]),
                flat,
                plain: true,
                first_child: NO_NODE,
                next: NO_NODE,
            });
        }
        Path {
            node: Some(0),
            flat: self.nodes.first().map_or(StrId::NULL, |n| n.flat),
        }
    }

    /// The node `guess` when the key string opening at `pos` of `buf` is
    /// its name written plainly: its path and where the string ends.
    fn guessed(&self, guess: u32, buf: &[u8], pos: usize) -> Option<(Path, usize)> {
        let n = self.nodes.get(guess as usize)?;
        let len = n.name.len();
        let start = pos + 1;
        if n.plain
            && buf.get(start + len) == Some(&b'"')
            && buf.get(start..start + len) == Some(&*n.name)
        {
            return Some((
                Path {
                    node: Some(guess),
                    flat: n.flat,
                },
                start + len + 1,
            ));
        }
        None
    }

    /// The guess for the member after `prev` (the first member of an
    /// object at `parent` when `prev` is None).
    fn guess_after(&self, parent: Option<u32>, prev: Option<u32>) -> u32 {
        let at = match prev {
            Some(p) => Some((p, false)),
            None => parent.map(|p| (p, true)),
        };
        match at.and_then(|(n, first)| Some((self.nodes.get(n as usize)?, first))) {
            Some((n, true)) => n.first_child,
            Some((n, false)) => n.next,
            None => NO_NODE,
        }
    }

    /// Remembers that `node` came after `prev` (first in an object at
    /// `parent` when `prev` is None).
    fn link(&mut self, parent: Option<u32>, prev: Option<u32>, node: u32) {
        match (prev, parent) {
            (Some(p), _) => {
                if let Some(n) = self.nodes.get_mut(p as usize) {
                    n.next = node;
                }
            }
            (None, Some(p)) => {
                if let Some(n) = self.nodes.get_mut(p as usize) {
                    n.first_child = node;
                }
            }
            (None, None) => {}
        }
    }

    /// The path `parent.name`, its flat key made and interned when the
    /// path is first met (or every time, once the cache is full).
    fn child(&mut self, storage: &mut Storage, parent: Path, name: &[u8]) -> Path {
        let mut hash = None;
        if let Some(p) = parent.node {
            let mut h = self.state.build_hasher();
            p.hash(&mut h);
            name.hash(&mut h);
            let h = h.finish();
            match self.by_hash.get(&h) {
                Some(&id) => {
                    if let Some(n) = self.nodes.get(id as usize) {
                        if n.parent == p && *n.name == *name {
                            return Path {
                                node: Some(id),
                                flat: n.flat,
                            };
                        }
                    }
                }
                None => hash = Some(h),
            }
        }
        let mut text = String::with_capacity(self.prefix.len() + name.len() + 32);
        text.push_str(storage.strings.get(parent.flat).unwrap_or(""));
        text.push('.');
        text.push_str(&String::from_utf8_lossy(name));
        let flat = storage.strings.intern(&text);
        // Cached when its parent is and the map has room and no other
        // path with its hash.
        let node = match (hash, parent.node) {
            (Some(h), Some(p)) if self.nodes.len() < MAX_CACHED_KEYS => {
                let id = u32::try_from(self.nodes.len()).unwrap_or(u32::MAX);
                self.nodes.push(KeyNode {
                    parent: p,
                    name: Box::from(name),
                    flat,
                    plain: !name.iter().any(|&c| c == b'"' || c == b'\\'),
                    first_child: NO_NODE,
                    next: NO_NODE,
                });
                self.by_hash.insert(h, id);
                Some(id)
            }
            _ => None,
        };
        Path { node, flat }
    }
}

/// Adds the args of the object `obj` under the cache's prefix to `out`,
/// finding the keys outside arrays in `cache`. The same args as [`add`]
/// gives, read in one pass (nested objects and arrays are walked as they
/// are met, not first scanned for their ends); an error leaves the args
/// read before it, as upstream's reading of args leaves them.
pub fn add_cached(
    storage: &mut Storage,
    cache: &mut KeyCache,
    obj: &[u8],
    out: &mut ArgSetBuilder,
) -> Result<(), ScanError> {
    let root = cache.root(storage);
    cache.counters.clear();
    let mut w = CachedWalk {
        storage,
        cache,
        out,
    };
    let pos = skip_space(obj, 0);
    if obj.get(pos) != Some(&b'{') {
        return Err(ScanError::Invalid("expected '{'".to_owned()));
    }
    w.value(obj, pos, root, root.flat, 0).map(|_| ())
}

/// Like [`add_cached`], for the object opening at `pos` of `buf` (an
/// event's `args` keyed where the event is read): where the object ends.
pub fn add_cached_at(
    storage: &mut Storage,
    cache: &mut KeyCache,
    buf: &[u8],
    pos: usize,
    out: &mut ArgSetBuilder,
) -> Result<usize, ScanError> {
    if buf.get(pos) != Some(&b'{') {
        return Err(ScanError::Invalid("expected '{'".to_owned()));
    }
    let root = cache.root(storage);
    cache.counters.clear();
    let mut w = CachedWalk {
        storage,
        cache,
        out,
    };
    w.value(buf, pos, root, root.flat, 0)
}

/// Appends `[idx]` to a key (what `write!(key, "[{idx}]")` writes,
/// without the formatting machinery, which was most of an array
/// element's keying).
fn push_index(key: &mut String, idx: usize) {
    let mut digits = [0u8; 20];
    let mut n = idx;
    let mut at = digits.len();
    loop {
        at -= 1;
        if let Some(d) = digits.get_mut(at) {
            *d = b'0' + (n % 10) as u8;
        }
        n /= 10;
        if n == 0 || at == 0 {
            break;
        }
    }
    key.push('[');
    for &d in digits.get(at..).unwrap_or(&[]) {
        key.push(char::from(d));
    }
    key.push(']');
}

/// One `args` object being read through the key cache.
struct CachedWalk<'w> {
    storage: &'w mut Storage,
    cache: &'w mut KeyCache,
    out: &'w mut ArgSetBuilder,
}

/// After a member or element: a comma (where the next one starts) or the
/// scope's `close` (where the scope ends, and true).
fn separator(buf: &[u8], pos: usize, close: u8) -> Result<(usize, bool), ScanError> {
    let pos = skip_space(buf, pos);
    match buf.get(pos) {
        None => Err(ScanError::Incomplete),
        Some(b',') => Ok((skip_space(buf, pos + 1), false)),
        Some(&c) if c == close => Ok((pos + 1, true)),
        Some(_) => Err(ScanError::Invalid(format!(
            "expected ',' or '{}'",
            char::from(close)
        ))),
    }
}

impl CachedWalk<'_> {
    /// The value at `pos` under `path`, whose full key is `full` (the
    /// flat key outside arrays; longer, with indexes, inside them); where
    /// it ends.
    fn value(
        &mut self,
        buf: &[u8],
        pos: usize,
        path: Path,
        full: StrId,
        depth: u32,
    ) -> Result<usize, ScanError> {
        if depth > MAX_NESTING {
            return Err(ScanError::Invalid("args nested too deep".to_owned()));
        }
        match buf.get(pos) {
            Some(b'{') => self.object(buf, pos, path, full, depth),
            Some(b'[') => self.array(buf, pos, path, full, depth),
            _ => {
                let (v, end) = value(buf, pos)?;
                if let Some(val) = leaf(self.storage, &v) {
                    self.out.add(path.flat, full, val);
                }
                Ok(end)
            }
        }
    }

    /// Whether the value at `pos` is `null` (left out, with its key), and
    /// where it ends.
    fn null_at(buf: &[u8], pos: usize) -> Result<Option<usize>, ScanError> {
        if buf.get(pos) != Some(&b'n') {
            return Ok(None);
        }
        match value(buf, pos)? {
            (Value::Null, end) => Ok(Some(end)),
            _ => Ok(None),
        }
    }

    /// The object opening at `pos`.
    fn object(
        &mut self,
        buf: &[u8],
        pos: usize,
        path: Path,
        full: StrId,
        depth: u32,
    ) -> Result<usize, ScanError> {
        let mut pos = skip_space(buf, pos + 1);
        // The member read last (its node), for the guess of the next.
        let mut prev: Option<u32> = None;
        loop {
            match buf.get(pos) {
                None => return Err(ScanError::Incomplete),
                Some(b'}') => return Ok(pos + 1),
                Some(b'"') => {}
                Some(_) => return Err(ScanError::Invalid("expected a key".to_owned())),
            }
            // The member the last object at this path had here, matched
            // by its bytes where it lies; else the key is read.
            let guess = self.cache.guess_after(path.node, prev);
            let (known, name, next) = match self.cache.guessed(guess, buf, pos) {
                // Plain: its raw bytes are its name.
                Some((child, next)) => (
                    Some(child),
                    Cow::Borrowed(buf.get(pos + 1..next - 1).unwrap_or(&[])),
                    next,
                ),
                None => {
                    let (name, next) = string_bytes(buf, pos)?;
                    (None, name, next)
                }
            };
            pos = skip_space(buf, next);
            match buf.get(pos) {
                None => return Err(ScanError::Incomplete),
                Some(b':') => {}
                Some(_) => return Err(ScanError::Invalid("expected ':'".to_owned())),
            }
            pos = skip_space(buf, pos + 1);
            let end = match Self::null_at(buf, pos)? {
                Some(end) => {
                    prev = known.and_then(|c| c.node);
                    end
                }
                None => {
                    let child = match known {
                        Some(c) => c,
                        None => {
                            let c = self.cache.child(self.storage, path, &name);
                            if let Some(n) = c.node {
                                self.cache.link(path.node, prev, n);
                            }
                            c
                        }
                    };
                    prev = child.node;
                    // Outside arrays (where the full key is the flat key)
                    // the child's full key is its flat key.
                    let child_full = if full == path.flat {
                        child.flat
                    } else {
                        self.cache.full_child(self.storage, full, child.node, |t| {
                            t.push('.');
                            t.push_str(&String::from_utf8_lossy(&name));
                        })
                    };
                    self.value(buf, pos, child, child_full, depth + 1)?
                }
            };
            let (next, closed) = separator(buf, end, b'}')?;
            if closed {
                return Ok(next);
            }
            pos = next;
        }
    }

    /// The array opening at `pos`: each element keyed with its index
    /// (per key within the set), nulls left out without an index.
    fn array(
        &mut self,
        buf: &[u8],
        pos: usize,
        path: Path,
        full: StrId,
        depth: u32,
    ) -> Result<usize, ScanError> {
        let mut pos = skip_space(buf, pos + 1);
        loop {
            match buf.get(pos) {
                None => return Err(ScanError::Incomplete),
                Some(b']') => return Ok(pos + 1),
                Some(_) => {}
            }
            let end = match Self::null_at(buf, pos)? {
                Some(end) => end,
                None => {
                    // The next index of this key within the set.
                    let idx = self.cache.next_index(full);
                    let step = u32::try_from(idx).ok().filter(|&i| i < INDEX_STEP);
                    let element = self.cache.full_child(
                        self.storage,
                        full,
                        step.map(|i| INDEX_STEP | i),
                        |t| push_index(t, idx),
                    );
                    self.value(buf, pos, path, element, depth + 1)?
                }
            };
            let (next, closed) = separator(buf, end, b']')?;
            if closed {
                return Ok(next);
            }
            pos = next;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A name found by its bytes has the id interning its text gives,
    /// the first time and from the cache, invalid UTF-8 included.
    #[test]
    fn names_by_their_bytes_are_the_interned_text() {
        let mut st = Storage::default();
        let mut cache = KeyCache::new("args");
        for _ in 0..2 {
            for bytes in [&b"MojoTask::Run"[..], b"", b"caf\xc3\xa9", b"bad \xff byte"] {
                let want = st.strings.intern(&String::from_utf8_lossy(bytes));
                assert_eq!(cache.intern_name(&mut st, bytes), want);
            }
        }
    }

    #[test]
    fn an_index_is_written_as_formatting_writes_it() {
        for idx in (0..1100).chain([9_999, 10_000, 1_000_000_007, usize::MAX]) {
            let mut key = "args.a".to_owned();
            push_index(&mut key, idx);
            assert_eq!(key, format!("args.a[{idx}]"));
        }
    }

    #[test]
    fn nested_objects_and_arrays_get_upstreams_keys() {
        let mut st = Storage::default();
        let mut b = ArgSetBuilder::default();
        add(
            &mut st,
            br#"{"s":"x","n":null,"o":{"i":1,"b":true},"a":[1.5,{"k":2}],}"#,
            "args",
            &mut b,
        )
        .unwrap();
        let got: Vec<(String, String, ArgValue)> = b
            .args()
            .iter()
            .map(|a| {
                (
                    st.strings.get(a.flat_key).unwrap().to_owned(),
                    st.strings.get(a.key).unwrap().to_owned(),
                    a.value,
                )
            })
            .collect();
        let s = st.strings.find("x").unwrap();
        assert_eq!(
            got,
            vec![
                ("args.s".into(), "args.s".into(), ArgValue::String(s)),
                ("args.o.i".into(), "args.o.i".into(), ArgValue::Int(1)),
                ("args.o.b".into(), "args.o.b".into(), ArgValue::Bool(true)),
                ("args.a".into(), "args.a[0]".into(), ArgValue::Real(1.5)),
                ("args.a.k".into(), "args.a[1].k".into(), ArgValue::Int(2)),
            ]
        );
    }

    /// The cached reading gives the same args as the plain one, on the
    /// same object read again (from the cache) and on keys that only
    /// differ by where they sit.
    #[test]
    fn cached_keys_give_the_same_args() {
        // Objects at one path with their keys in other orders, keys
        // that start alike, escaped keys (never matched where they lie).
        let objs: [&[u8]; 11] = [
            br#"{"s":"x","n":null,"o":{"i":1,"b":true},"a":[1.5,{"k":2},[3,{"z":null,"y":4}]],}"#,
            br#"{"o":{"i":{"i":2}},"i":3,"a":{"k":[5,6]},"q\"":{"r":[[1],[2]]}}"#,
            br#"{"s":"y","o":{"i":7,"b":false},"a":[{"k":[8]},{"k":9}]}"#,
            br#"{}"#,
            br#"{"x":1,"y":2,"a\\":3,"a\\\"b":4}"#,
            br#"{"y":1,"x":2,"a\\\"b":3,"a\\":4}"#,
            br#"{"x":1,"xy":2,"y":null,"yy":3}"#,
            br#"{"xy":1,"x":2,"yy":null,"y":3}"#,
            br#"{"x":{"y":1},"y":[{"x":2,"y":3},{"y":4,"x":5}]}"#,
            br#"{"x":[{"y":1}],"y":{"x":2}}"#,
            br#"{"\u0078":1,"y":2}"#,
        ];
        let mut st = Storage::default();
        let mut cache = KeyCache::new("args");
        for round in 0..2 {
            for obj in objs {
                let mut plain = ArgSetBuilder::default();
                add(&mut st, obj, "args", &mut plain).unwrap();
                let mut cached = ArgSetBuilder::default();
                add_cached(&mut st, &mut cache, obj, &mut cached).unwrap();
                let text = |b: &ArgSetBuilder| -> Vec<(String, String, ArgValue)> {
                    b.args()
                        .iter()
                        .map(|a| {
                            (
                                st.strings.get(a.flat_key).unwrap().to_owned(),
                                st.strings.get(a.key).unwrap().to_owned(),
                                a.value,
                            )
                        })
                        .collect()
                };
                assert_eq!(text(&cached), text(&plain), "round {round}");
                assert_eq!(cached.args(), plain.args());
            }
        }
        // A failure part way keeps the args before it, as the plain one.
        let bad = br#"{"a":1,"b":tru}"#;
        let mut cached = ArgSetBuilder::default();
        assert!(add_cached(&mut st, &mut cache, bad, &mut cached).is_err());
        assert_eq!(cached.args().len(), 1);
    }
}

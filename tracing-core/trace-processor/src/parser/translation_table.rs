//! `TranslationTable` packets, as upstream applies them: a trace recorded
//! with names left out (hashed or obfuscated, for privacy or size) carries
//! tables mapping them back. The loader hands each table over as it reads
//! it (upstream reads them before sorting), and at the end of the trace
//! they are applied: a slice's name by the slice-name table; a process
//! track's name by the process-track-name table; and the hashes among a
//! slice's args (Chrome histogram samples, user events, performance marks'
//! sites and marks, triggers' study names) each followed by the name it
//! stands for, under the key upstream gives it. Two more translations of
//! slices' args use what other packets teach: a mojo method's native
//! symbol (a mapping row and relative pc) becomes its method name and
//! interface tag when the module symbols name the address, and the view
//! class names of Chrome's Android view dumps are deobfuscated by the
//! first package's deobfuscation map.

use super::Parser;
use crate::column_store::strings::StrId;
use crate::hash::HashMap;
use crate::storage::args::{ArgSetBuilder, ArgValue};
use protozero::{Decoder, FieldValue};

/// The hashes translated in slices' args: (hash key, name key).
const HASH_KEYS: [(&str, &str); 5] = [
    (
        "chrome_histogram_sample.name_hash",
        "chrome_histogram_sample.name",
    ),
    ("chrome_user_event.action_hash", "chrome_user_event.action"),
    (
        "chrome_hashed_performance_mark.site_hash",
        "chrome_hashed_performance_mark.site",
    ),
    (
        "chrome_hashed_performance_mark.mark_hash",
        "chrome_hashed_performance_mark.mark",
    ),
    ("chrome_trigger.name_hash", "chrome_trigger.name"),
];

/// Which table of [`HASH_KEYS`]' order a hash is looked up in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum HashTable {
    Histogram,
    UserEvent,
    PerformanceMarkSite,
    PerformanceMarkMark,
    Study,
}

const HASH_TABLES: [HashTable; 5] = [
    HashTable::Histogram,
    HashTable::UserEvent,
    HashTable::PerformanceMarkSite,
    HashTable::PerformanceMarkMark,
    HashTable::Study,
];

/// The flat key of the Java class names deobfuscated in slices' args.
const CLASS_NAME_FLAT_KEY: &str = "android_view_dump.activity.view.class_name";
/// The keys of a mojo method's name and interface tag.
const MOJO_METHOD_NAME_KEY: &str = "chrome_mojo_event_info.mojo_method_name";
const MOJO_INTERFACE_TAG_KEY: &str = "chrome_mojo_event_info.mojo_interface_tag";

/// The tables read so far.
#[derive(Debug, Default)]
pub struct TranslationTables {
    hashes: HashMap<(HashTable, u64), String>,
    slice_names: HashMap<String, String>,
    process_track_names: HashMap<String, String>,
    /// (mapping row, address) → the function name the module symbols give
    /// (the address's last line).
    native_symbols: HashMap<(u32, u64), String>,
    /// The package whose deobfuscation map names classes (the first map's).
    class_package: Option<(String, u64)>,
    /// Obfuscated class name → deobfuscated, of [`Self::class_package`].
    classes: HashMap<String, String>,
}

impl TranslationTables {
    fn is_empty(&self) -> bool {
        self.hashes.is_empty()
            && self.slice_names.is_empty()
            && self.process_track_names.is_empty()
            && self.native_symbols.is_empty()
            && self.classes.is_empty()
    }

    /// Records what the module symbols say a mapping's address is.
    pub fn add_native_symbol(&mut self, mapping: u32, address: u64, function: &str) {
        self.native_symbols
            .insert((mapping, address), function.to_owned());
    }

    /// Learns the class names of a `DeobfuscationMapping` (package_name 1,
    /// version_code 2, obfuscated_classes 3 of obfuscated_name 1 and
    /// deobfuscated_name 2) when it is the first package's map; a map
    /// without a package is skipped.
    pub fn add_deobfuscation_map(&mut self, map: &[u8]) {
        let d = Decoder::new(map);
        let package = d
            .find_last(1)
            .and_then(|f| f.as_bytes().ok())
            .map(|b| String::from_utf8_lossy(b).into_owned())
            .unwrap_or_default();
        if package.is_empty() {
            return;
        }
        let version = d.find_last(2).and_then(|f| f.as_u64().ok()).unwrap_or(0);
        let first = self.class_package.get_or_insert((package.clone(), version));
        if *first != (package, version) {
            return;
        }
        for f in Decoder::new(map).map_while(Result::ok) {
            let (3, FieldValue::Bytes(cls)) = (f.id, f.value) else {
                continue;
            };
            let c = Decoder::new(cls);
            let name = |n| {
                c.find_last(n)
                    .and_then(|f| f.as_bytes().ok())
                    .map(|b| String::from_utf8_lossy(b).into_owned())
                    .unwrap_or_default()
            };
            self.classes.entry(name(1)).or_insert_with(|| name(2));
        }
    }
}

/// A mojo method's name from its symbol: without a trailing `()` and
/// Chromium's `_Sym::IPCStableHash` suffix.
fn mojo_method(symbol: &str) -> &str {
    let s = symbol.strip_suffix("()").unwrap_or(symbol);
    s.strip_suffix("_Sym::IPCStableHash").unwrap_or(s)
}

/// A mojo interface's tag from its method's symbol: the `::` parts but the
/// last two joined by `.`; the symbol itself when it has two parts or fewer.
fn mojo_interface_tag(symbol: &str) -> String {
    let parts: Vec<&str> = symbol.split("::").collect();
    if parts.len() <= 2 {
        return symbol.to_owned();
    }
    parts[..parts.len() - 2].join(".")
}

/// The entries of a map field (`key` 1, `value` 2), each as its key's
/// field and value's bytes.
fn entries<'a>(
    bytes: &'a [u8],
    field: u32,
) -> impl Iterator<Item = (Option<FieldValue<'a>>, Option<&'a [u8]>)> + 'a {
    Decoder::new(bytes)
        .map_while(Result::ok)
        .filter(move |f| f.id == field)
        .filter_map(|f| match f.value {
            FieldValue::Bytes(b) => Some(b),
            _ => None,
        })
        .map(|entry| {
            let mut key = None;
            let mut value = None;
            for g in Decoder::new(entry).map_while(Result::ok) {
                match (g.id, g.value) {
                    (1, v) => key = Some(v),
                    (2, FieldValue::Bytes(b)) => value = Some(b),
                    _ => {}
                }
            }
            (key, value)
        })
}

fn text(b: Option<&[u8]>) -> String {
    String::from_utf8_lossy(b.unwrap_or_default()).into_owned()
}

/// Reads one `TranslationTable` packet (its first table, as upstream
/// reads the oneof).
pub fn on_packet(p: &mut Parser, bytes: &[u8]) {
    let Some(table) = Decoder::new(bytes)
        .map_while(Result::ok)
        .find(|f| (1..=6).contains(&f.id) && matches!(f.value, FieldValue::Bytes(_)))
    else {
        return;
    };
    let FieldValue::Bytes(b) = table.value else {
        return;
    };
    let t = &mut p.translation;
    match table.id {
        1 => read_hashes(&mut t.hashes, b, HashTable::Histogram, 1),
        2 => read_hashes(&mut t.hashes, b, HashTable::UserEvent, 1),
        3 => {
            read_hashes(&mut t.hashes, b, HashTable::PerformanceMarkSite, 1);
            read_hashes(&mut t.hashes, b, HashTable::PerformanceMarkMark, 2);
        }
        6 => read_hashes(&mut t.hashes, b, HashTable::Study, 1),
        4 | 5 => {
            let names = if table.id == 4 {
                &mut t.slice_names
            } else {
                &mut t.process_track_names
            };
            for (k, v) in entries(b, 1) {
                let key = match k {
                    Some(FieldValue::Bytes(b)) => String::from_utf8_lossy(b).into_owned(),
                    _ => String::new(),
                };
                names.insert(key, text(v));
            }
        }
        _ => {}
    }
}

/// The entries of a hash-keyed map field into `hashes`.
fn read_hashes(
    hashes: &mut HashMap<(HashTable, u64), String>,
    b: &[u8],
    kind: HashTable,
    field: u32,
) {
    for (k, v) in entries(b, field) {
        let key = match k {
            Some(FieldValue::Varint(v)) | Some(FieldValue::Fixed64(v)) => v,
            _ => 0,
        };
        // The site and mark maps are keyed by uint32.
        let key = match kind {
            HashTable::PerformanceMarkSite | HashTable::PerformanceMarkMark => key & 0xffff_ffff,
            _ => key,
        };
        hashes.insert((kind, key), text(v));
    }
}

/// The end of the trace: the tables applied to what was imported.
pub fn finish(p: &mut Parser) {
    if p.translation.is_empty() {
        return;
    }
    let t = std::mem::take(&mut p.translation);
    let s = &mut p.storage;
    if !t.slice_names.is_empty() {
        let mut done: HashMap<StrId, StrId> = HashMap::default();
        for i in 0..s.slices.len() {
            let Some(name) = s.slices.get(i).map(|r| r.name) else {
                continue;
            };
            let to = match done.get(&name) {
                Some(&to) => to,
                None => {
                    let to = match s.strings.get(name).and_then(|n| t.slice_names.get(n)) {
                        Some(new) => {
                            let new = new.clone();
                            s.strings.intern(&new)
                        }
                        None => name,
                    };
                    done.insert(name, to);
                    to
                }
            };
            if let Some(r) = s.slices.get_mut(i) {
                r.name = to;
            }
        }
    }
    if !t.process_track_names.is_empty() {
        for i in 0..s.tracks.len() {
            let Some((name, upid)) = s.tracks.get(i).map(|r| (r.name, r.upid)) else {
                continue;
            };
            if upid.is_none() {
                continue;
            }
            let new = s
                .strings
                .get(name)
                .and_then(|n| t.process_track_names.get(n))
                .cloned();
            if let Some(new) = new {
                let id = s.strings.intern(&new);
                if let Some(r) = s.tracks.get_mut(i) {
                    r.name = id;
                }
            }
        }
    }
    if !t.hashes.is_empty() || !t.native_symbols.is_empty() || !t.classes.is_empty() {
        translate_args(p, &t);
    }
}

/// Adds to `args`, a slice's args being made, the name each hash among
/// them stands for in the tables read so far, as upstream translates args
/// when they are stored (those the tables learn later are added at the
/// end, by [`finish`]). Translating as the set is made keeps the
/// untranslated set out of the args table.
pub fn translate_hashes(p: &mut Parser, args: &mut ArgSetBuilder) {
    if p.translation.hashes.is_empty() {
        return;
    }
    for (&(hash_key, name_key), kind) in HASH_KEYS.iter().zip(HASH_TABLES) {
        let Some(h) = p.storage.strings.find(hash_key) else {
            continue;
        };
        let found = args.args().iter().find_map(|a| match a.value {
            ArgValue::Uint(v) if a.key == h => Some(v),
            _ => None,
        });
        let Some(name) = found.and_then(|v| p.translation.hashes.get(&(kind, v))) else {
            continue;
        };
        let name = p.storage.strings.intern(name);
        let k = p.storage.strings.intern(name_key);
        args.add(k, k, ArgValue::String(name));
    }
}

/// The keys of the args [`translate_args`] looks at, as pool ids (those
/// the pool lacks are in no arg).
struct Keys {
    hashes: Vec<(StrId, StrId, HashTable)>,
    mojo_mapping: Option<StrId>,
    mojo_rel_pc: Option<StrId>,
    mojo_name: StrId,
    mojo_tag: StrId,
    class_name: Option<StrId>,
}

impl Keys {
    fn wanted(&self, a: &crate::storage::args::Arg) -> bool {
        match a.value {
            ArgValue::Uint(_) => {
                Some(a.key) == self.mojo_mapping
                    || Some(a.key) == self.mojo_rel_pc
                    || self.hashes.iter().any(|k| k.0 == a.key)
            }
            ArgValue::String(_) => Some(a.flat_key) == self.class_name,
            _ => false,
        }
    }
}

/// Rewrites the arg sets of slices holding what the tables translate, as
/// upstream translates a slice's args when the trace ends: a hash is
/// followed by its name; a native symbol's mapping row and pc become the
/// method name and interface tag the module symbols give (an interface
/// tag the event gave is kept), or stay when they give none; a class name
/// is replaced by its deobfuscated name.
fn translate_args(p: &mut Parser, t: &TranslationTables) {
    use super::track_event_reflect::{MOJO_MAPPING_ID_KEY, MOJO_REL_PC_KEY};
    let s = &mut p.storage;
    let keys = Keys {
        hashes: HASH_KEYS
            .iter()
            .zip(HASH_TABLES)
            .filter_map(|(&(hash_key, name_key), kind)| {
                let h = s.strings.find(hash_key)?;
                Some((h, s.strings.intern(name_key), kind))
            })
            .collect(),
        mojo_mapping: s.strings.find(MOJO_MAPPING_ID_KEY),
        mojo_rel_pc: s.strings.find(MOJO_REL_PC_KEY),
        mojo_name: s.strings.intern(MOJO_METHOD_NAME_KEY),
        mojo_tag: s.strings.intern(MOJO_INTERFACE_TAG_KEY),
        class_name: s.strings.find(CLASS_NAME_FLAT_KEY),
    };
    let mut done: HashMap<u32, Option<u32>> = HashMap::default();
    for i in 0..s.slices.len() {
        let Some(set) = s.slices.get(i).and_then(|r| r.arg_set_id.get()) else {
            continue;
        };
        let new = match done.get(&set) {
            Some(&n) => n,
            None => {
                let args: Vec<_> = s.args.set(set).copied().collect();
                let n = if args.iter().any(|a| keys.wanted(a)) {
                    let b = translated(s, t, &keys, &args);
                    let n = s.args.add_set(&b);
                    if n != Some(set) {
                        retire(&mut s.args, set);
                    }
                    n
                } else {
                    Some(set)
                };
                done.insert(set, n);
                n
            }
        };
        if let Some(r) = s.slices.get_mut(i) {
            r.arg_set_id = new.into();
        }
    }
}

/// Takes a set replaced by its translation out of the args table, as
/// upstream stores only the translated set.
fn retire(args: &mut crate::storage::args::ArgTable, set: u32) {
    args.retire(set);
}

/// One arg set translated (see [`translate_args`]).
fn translated(
    s: &mut crate::storage::Storage,
    t: &TranslationTables,
    keys: &Keys,
    args: &[crate::storage::args::Arg],
) -> ArgSetBuilder {
    let mut b = ArgSetBuilder::default();
    let (mut mapping, mut rel_pc) = (None, None);
    for a in args {
        match a.value {
            ArgValue::Uint(v) if Some(a.key) == keys.mojo_mapping => mapping = Some(v),
            ArgValue::Uint(v) if Some(a.key) == keys.mojo_rel_pc => rel_pc = Some(v),
            ArgValue::Uint(v) => {
                b.add(a.flat_key, a.key, a.value);
                let Some(&(_, name_key, kind)) = keys.hashes.iter().find(|k| k.0 == a.key) else {
                    continue;
                };
                // Translated when the slice was made.
                if args.iter().any(|x| x.key == name_key) {
                    continue;
                }
                if let Some(name) = t.hashes.get(&(kind, v)) {
                    let name = s.strings.intern(name);
                    b.add(name_key, name_key, ArgValue::String(name));
                }
            }
            ArgValue::String(v) if Some(a.flat_key) == keys.class_name => {
                let name = s.strings.get(v).and_then(|n| t.classes.get(n)).cloned();
                let value = name.map_or(a.value, |n| ArgValue::String(s.strings.intern(&n)));
                b.add(a.flat_key, a.key, value);
            }
            _ => b.add(a.flat_key, a.key, a.value),
        }
    }
    if let (Some(mapping), Some(rel_pc)) = (mapping, rel_pc) {
        let symbol = u32::try_from(mapping)
            .ok()
            .and_then(|m| t.native_symbols.get(&(m, rel_pc)));
        match symbol {
            Some(symbol) => {
                let name = s.strings.intern(mojo_method(symbol));
                b.add(keys.mojo_name, keys.mojo_name, ArgValue::String(name));
                if !args.iter().any(|a| a.key == keys.mojo_tag) {
                    let tag = s.strings.intern(&mojo_interface_tag(symbol));
                    b.add(keys.mojo_tag, keys.mojo_tag, ArgValue::String(tag));
                }
            }
            None => {
                let (m, r) = (keys.mojo_mapping, keys.mojo_rel_pc);
                if let (Some(m), Some(r)) = (m, r) {
                    b.add(m, m, ArgValue::Uint(mapping));
                    b.add(r, r, ArgValue::Uint(rel_pc));
                }
            }
        }
    }
    b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mojo_symbols_give_method_names_and_interface_tags() {
        let unix = "storage::mojom::Directory::OpenFile_Sym::IPCStableHash";
        assert_eq!(mojo_method(unix), "storage::mojom::Directory::OpenFile");
        assert_eq!(mojo_interface_tag(unix), "storage.mojom.Directory");
        let windows = "storage::mojom::File::Close_Sym::IPCStableHash()";
        assert_eq!(mojo_method(windows), "storage::mojom::File::Close");
        assert_eq!(mojo_interface_tag(windows), "storage.mojom.File");
        // Symbols of another shape are kept whole.
        assert_eq!(mojo_method("Class::Method"), "Class::Method");
        assert_eq!(mojo_interface_tag("Class::Method"), "Class::Method");
    }

    #[test]
    fn the_first_packages_map_names_classes() {
        fn ld(id: u8, payload: &[u8]) -> Vec<u8> {
            let mut out = vec![(id << 3) | 2, payload.len() as u8];
            out.extend_from_slice(payload);
            out
        }
        let class = |obf: &str, deobf: &str| {
            ld(
                3,
                &[ld(1, obf.as_bytes()), ld(2, deobf.as_bytes())].concat(),
            )
        };
        let mut t = TranslationTables::default();
        t.add_deobfuscation_map(&[ld(1, b"app"), vec![2 << 3, 7], class("a", "A")].concat());
        t.add_deobfuscation_map(&[ld(1, b"other"), class("b", "B")].concat());
        t.add_deobfuscation_map(&class("c", "C"));
        assert_eq!(t.classes.get("a").map(String::as_str), Some("A"));
        assert!(!t.classes.contains_key("b"));
        assert!(!t.classes.contains_key("c"));
    }
}

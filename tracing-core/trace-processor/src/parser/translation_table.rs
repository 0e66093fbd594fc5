//! `TranslationTable` packets, as upstream applies them: a trace recorded
//! with names left out (hashed or obfuscated, for privacy or size) carries
//! tables mapping them back. The loader hands each table over as it reads
//! it (upstream reads them before sorting), and at the end of the trace
//! they are applied: a slice's name by the slice-name table; a process
//! track's name by the process-track-name table; and the hashes among a
//! slice's args (Chrome histogram samples, user events, performance marks'
//! sites and marks, triggers' study names) each followed by the name it
//! stands for, under the key upstream gives it.

use super::Parser;
use crate::hash::HashMap;
use crate::storage::args::{ArgSetBuilder, ArgValue};
use crate::storage::strings::StrId;
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

/// The tables read so far.
#[derive(Debug, Default)]
pub struct TranslationTables {
    hashes: HashMap<(HashTable, u64), String>,
    slice_names: HashMap<String, String>,
    process_track_names: HashMap<String, String>,
}

impl TranslationTables {
    fn is_empty(&self) -> bool {
        self.hashes.is_empty() && self.slice_names.is_empty() && self.process_track_names.is_empty()
    }
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
    if !t.hashes.is_empty() {
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

/// Rewrites the arg sets of slices holding a hash the tables know.
fn translate_args(p: &mut Parser, t: &TranslationTables) {
    let s = &mut p.storage;
    let keys: Vec<(StrId, StrId, HashTable)> = HASH_KEYS
        .iter()
        .zip(HASH_TABLES)
        .filter_map(|(&(hash_key, name_key), kind)| {
            let h = s.strings.find(hash_key)?;
            Some((h, s.strings.intern(name_key), kind))
        })
        .collect();
    if keys.is_empty() {
        return;
    }
    let mut done: HashMap<u32, Option<u32>> = HashMap::default();
    for i in 0..s.slices.len() {
        let Some(set) = s.slices.get(i).and_then(|r| r.arg_set_id) else {
            continue;
        };
        let new = match done.get(&set) {
            Some(&n) => n,
            None => {
                let args: Vec<_> = s.args.set(set).copied().collect();
                let mut b = ArgSetBuilder::default();
                let mut changed = false;
                for a in &args {
                    b.add(a.flat_key, a.key, a.value);
                    let ArgValue::Uint(v) = a.value else {
                        continue;
                    };
                    let Some(&(_, name_key, kind)) = keys.iter().find(|k| k.0 == a.key) else {
                        continue;
                    };
                    // Translated when the slice was made.
                    if args.iter().any(|x| x.key == name_key) {
                        continue;
                    }
                    if let Some(name) = t.hashes.get(&(kind, v)) {
                        let name = s.strings.intern(name);
                        b.add(name_key, name_key, ArgValue::String(name));
                        changed = true;
                    }
                }
                let n = if changed {
                    s.args.add_set(&b)
                } else {
                    Some(set)
                };
                done.insert(set, n);
                n
            }
        };
        if let Some(r) = s.slices.get_mut(i) {
            r.arg_set_id = new;
        }
    }
}

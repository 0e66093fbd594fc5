//! `DeobfuscationMapping`: ProGuard/R8 maps of obfuscated Java names. Held
//! to the end of the trace, then applied to the Java frames (names with a
//! `.`) of the map's package (an installed app's `/data/app/` path, or its
//! dex extracted in memory) and of JIT caches (`/memfd:` mappings):
//! `class.method` obfuscated gets the deobfuscated name, ambiguous ones
//! all of them joined by " | ". A `/data/app/` path without a package
//! counts `deobfuscate_location_parse_error`. A Java frame whose mapping
//! names no package takes the package of the app (`package_list`) of a
//! process whose allocations, samples or OOME stack use it. When a frame's
//! symbols give its obfuscated line and R8's line ranges cover it, the
//! covering methods become the frame's inline chain in
//! `stack_profile_symbol`. The maps also name the
//! Java heap graph's classes (`heap_graph_class.deobfuscated_name`, array
//! and class-object shapes kept) and fields
//! (`heap_graph_reference.deobfuscated_field_name`).

use crate::hash::HashMap;
use std::collections::BTreeSet;

use protozero::Decoder;

use super::Parser;
use crate::column_store::strings::StrId;
use crate::storage::profiling_rows::SymbolRow;
use crate::tracker::heap_graph::{app_package, denormalize_type, normalize_type};

fn str_field(msg: &[u8], id: u32) -> &str {
    Decoder::new(msg)
        .find_last(id)
        .and_then(|f| f.as_str().ok())
        .unwrap_or("")
}

fn repeated(msg: &[u8], id: u32) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut d = Decoder::new(msg);
    while let Some(Ok(f)) = d.read_field() {
        if f.id == id {
            if let Ok(b) = f.as_bytes() {
                out.push(b);
            }
        }
    }
    out
}

/// The package of an app's file under `/data/app/`: the directory name
/// before its `-` (after an optional `~~random/` level); None when the
/// path has none.
fn package_from_app(location: &str) -> Option<&str> {
    let rest = location.strip_prefix("/data/app/")?;
    let start = if rest.starts_with('~') {
        rest.find('/')? + 1
    } else {
        0
    };
    let tail = rest.get(start..)?;
    let end = tail.get(1..)?.find('/')? + 1;
    let dir = tail.get(..end)?;
    Some(&dir[..dir.find('-')?])
}

/// Which package a frame's mapping belongs to: Ok(None) when not an
/// app's, Err when an app's path does not name one.
pub(crate) fn package_of(location: &str) -> Result<Option<String>, ()> {
    const IN_MEMORY_DEX: &str = "dex extracted in memory from ";
    if location.starts_with("/data/app/") {
        return package_from_app(location)
            .map(|p| Some(p.to_owned()))
            .ok_or(());
    }
    if let Some(pos) = location.find(IN_MEMORY_DEX) {
        let path = &location[pos + IN_MEMORY_DEX.len()..];
        if path.starts_with("/data/app/") {
            return package_from_app(path).map(|p| Some(p.to_owned())).ok_or(());
        }
    }
    Ok(None)
}

/// Applies the held mappings to the frames.
pub fn finish(p: &mut Parser) {
    let packets = std::mem::take(&mut p.profiling.deobfuscation);
    if packets.is_empty() {
        return;
    }
    // (frame, name, package or "memfd") of every Java frame.
    let mut java: Vec<(usize, String, String)> = Vec::new();
    let mut to_guess: BTreeSet<usize> = BTreeSet::new();
    for (i, frame) in p.storage.profiling.frames.iter().enumerate() {
        let name = p.storage.strings.get(frame.name).unwrap_or("");
        if !name.contains('.') {
            continue;
        }
        let mapping = p
            .storage
            .profiling
            .mappings
            .get(frame.mapping as usize)
            .and_then(|m| p.storage.strings.get(m.name))
            .unwrap_or("");
        match package_of(mapping) {
            Ok(Some(package)) => java.push((i, name.to_owned(), package)),
            Ok(None) if mapping.starts_with("/memfd:") => {
                java.push((i, name.to_owned(), "memfd".to_owned()));
            }
            Ok(None) => {
                to_guess.insert(i);
            }
            Err(()) => {
                p.storage.stats.incr("deobfuscate_location_parse_error");
                to_guess.insert(i);
            }
        }
    }
    if !to_guess.is_empty() {
        guess_packages(p, &mut to_guess, &mut java);
    }
    for packet in &packets {
        deobfuscate_heap_graph(p, packet);
    }
    for packet in &packets {
        let package = str_field(packet, 1);
        if package.is_empty() {
            continue;
        }
        // obfuscated "class.method" -> its mappings.
        let mut methods: HashMap<String, Vec<MethodMapping>> = HashMap::default();
        for cls in repeated(packet, 3) {
            let obf_cls = str_field(cls, 1);
            let deobf_cls = str_field(cls, 2);
            for m in repeated(cls, 4) {
                let line = |id| {
                    Decoder::new(m)
                        .find_last(id)
                        .and_then(|f| f.as_u64().ok())
                        .map(|v| v as u32)
                };
                methods
                    .entry(format!("{obf_cls}.{}", str_field(m, 1)))
                    .or_default()
                    .push(MethodMapping {
                        name: qualified(deobf_cls, str_field(m, 2)),
                        obfuscated_start: line(3),
                        obfuscated_end: line(4),
                        source_start: line(5),
                    });
            }
        }
        for (i, name, frame_package) in &java {
            if frame_package != package && frame_package != "memfd" {
                continue;
            }
            let Some(mappings) = methods.get(name) else {
                continue;
            };
            deobfuscate_frame(p, *i, mappings);
        }
    }
}

/// One method of a map: its deobfuscated name and, for R8's inlined
/// frames, the obfuscated lines it covers and its source line.
struct MethodMapping {
    name: String,
    obfuscated_start: Option<u32>,
    obfuscated_end: Option<u32>,
    source_start: Option<u32>,
}

impl MethodMapping {
    fn covers(&self, line: u32) -> bool {
        self.obfuscated_start.is_none_or(|s| line >= s)
            && self.obfuscated_end.is_none_or(|e| line <= e)
    }
}

/// Names a frame from the mappings of its `class.method`: when its
/// symbols give an obfuscated line that mappings cover, those mappings in
/// order are its inline chain (new symbols, innermost first, all but the
/// last inlined) and the last names it; else every distinct name, joined
/// by " | " when more than one.
fn deobfuscate_frame(p: &mut Parser, frame: usize, mappings: &[MethodMapping]) {
    let line = p
        .storage
        .profiling
        .frames
        .get(frame)
        .and_then(|f| f.symbol_set_id)
        .and_then(|set| {
            // A set's rows are contiguous from the row its id names.
            p.storage
                .profiling
                .symbols
                .get(set as usize..)
                .unwrap_or_default()
                .iter()
                .take_while(|s| s.symbol_set_id == set)
                .find_map(|s| s.line_number)
        });
    let chain: Vec<&MethodMapping> = match line {
        Some(l) => mappings.iter().filter(|m| m.covers(l)).collect(),
        None => Vec::new(),
    };
    if let Some(last) = chain.last() {
        let set = u32::try_from(p.storage.profiling.symbols.len()).unwrap_or(u32::MAX);
        for (k, m) in chain.iter().enumerate() {
            let name = p.storage.strings.intern(&m.name);
            p.storage.profiling.symbols.push(SymbolRow {
                symbol_set_id: set,
                name,
                source_file: StrId::NULL,
                line_number: m.source_start,
                inlined: Some(u32::from(k + 1 < chain.len())),
            });
        }
        let id = p.storage.strings.intern(&last.name);
        if let Some(f) = p.storage.profiling.frames.get_mut(frame) {
            f.symbol_set_id = Some(set);
            f.deobfuscated_name = id;
        }
        return;
    }
    let unique: BTreeSet<&str> = mappings.iter().map(|m| m.name.as_str()).collect();
    let joined = unique.into_iter().collect::<Vec<_>>().join(" | ");
    let id = p.storage.strings.intern(&joined);
    if let Some(f) = p.storage.profiling.frames.get_mut(frame) {
        f.deobfuscated_name = id;
    }
}

/// Gives the Java frames whose mapping names no package the package of
/// the app of a process that used them (heapprofd allocations, samples,
/// OOME stacks), through `package_list`.
fn guess_packages(
    p: &mut Parser,
    to_guess: &mut BTreeSet<usize>,
    java: &mut Vec<(usize, String, String)>,
) {
    let mut uses: Vec<(u32, u32)> = Vec::new();
    let prof = &p.storage.profiling;
    uses.extend(
        prof.heap_allocations
            .iter()
            .map(|a| (a.upid, a.callsite_id)),
    );
    for s in &prof.samples {
        let upid = s
            .task_context_id
            .and_then(|t| prof.task_contexts.get(t as usize))
            .and_then(|t| t.upid);
        if let (Some(upid), Some(cs)) = (upid, s.callsite_id) {
            uses.push((upid, cs));
        }
    }
    for t in &prof.heap_graph_thread_callsites {
        let upid = prof
            .heap_graphs
            .get(t.heap_graph_id as usize)
            .map(|g| g.upid);
        if let (Some(upid), Some(cs)) = (upid, t.callsite_id) {
            uses.push((upid, cs));
        }
    }
    for (upid, callsite) in uses {
        if to_guess.is_empty() {
            return;
        }
        let Some(package) = app_package(&p.storage, upid) else {
            continue;
        };
        let mut cur = Some(callsite);
        let mut steps = 0usize;
        while let Some(c) = cur {
            let Some(row) = p.storage.profiling.callsites.get(c as usize) else {
                break;
            };
            let frame = row.frame_id as usize;
            if to_guess.remove(&frame) {
                let name = p
                    .storage
                    .profiling
                    .frames
                    .get(frame)
                    .and_then(|f| p.storage.strings.get(f.name))
                    .unwrap_or("")
                    .to_owned();
                java.push((frame, name, package.clone()));
            }
            cur = row.parent_id;
            steps += 1;
            if steps > p.storage.profiling.callsites.len() {
                break;
            }
        }
    }
}

/// `class.member`'s deobfuscated name: the member's own when it is fully
/// qualified (has a `.`), else the class's deobfuscated name before it.
fn qualified(deobf_cls: &str, deobf_member: &str) -> String {
    if deobf_member.contains('.') {
        deobf_member.to_owned()
    } else {
        format!("{deobf_cls}.{deobf_member}")
    }
}

/// Names the heap graph's classes (of no package, and of the map's
/// package) and the references through the map's fields.
fn deobfuscate_heap_graph(p: &mut Parser, packet: &[u8]) {
    let package = str_field(packet, 1);
    let package = (!package.is_empty()).then(|| package.to_owned());
    for cls in repeated(packet, 3) {
        let obf_cls = str_field(cls, 1);
        let deobf_cls = str_field(cls, 2);
        let mut keys = vec![(None, obf_cls.to_owned())];
        if let Some(pkg) = &package {
            keys.push((Some(pkg.clone()), obf_cls.to_owned()));
        }
        for key in keys {
            let Some(rows) = p.profiling.heap_graph.class_rows.get(&key) else {
                continue;
            };
            for &row in rows {
                let Some(name) = p
                    .storage
                    .profiling
                    .heap_graph_classes
                    .get(row as usize)
                    .and_then(|c| p.storage.strings.get(c.name))
                else {
                    continue;
                };
                let shape = normalize_type(name);
                let deobf = denormalize_type(&shape, deobf_cls);
                let id = p.storage.strings.intern(&deobf);
                if let Some(c) = p.storage.profiling.heap_graph_classes.get_mut(row as usize) {
                    c.deobfuscated_name = id;
                }
            }
        }
        for member in repeated(cls, 3) {
            let obf = format!("{obf_cls}.{}", str_field(member, 1));
            let Some(field) = p.storage.strings.find(&obf) else {
                continue;
            };
            let Some(rows) = p.profiling.heap_graph.field_rows.get(&field) else {
                continue;
            };
            let deobf = qualified(deobf_cls, str_field(member, 2));
            let id = p.storage.strings.intern(&deobf);
            for &row in rows {
                if let Some(r) = p
                    .storage
                    .profiling
                    .heap_graph_references
                    .get_mut(row as usize)
                {
                    r.deobfuscated_field_name = id;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::package_of;

    #[test]
    fn packages_come_from_app_paths() {
        assert_eq!(
            package_of("/data/app/com.example.app-abc==/base.apk"),
            Ok(Some("com.example.app".to_owned()))
        );
        assert_eq!(
            package_of("/data/app/~~r4nd0m==/com.example.app-xyz==/oat/arm64/base.odex"),
            Ok(Some("com.example.app".to_owned()))
        );
        assert_eq!(
            package_of(
                "[anon:dalvik-classes.dex extracted in memory from /data/app/com.x-1/base.apk]"
            ),
            Ok(Some("com.x".to_owned()))
        );
        assert_eq!(package_of("/data/app/nodash/base.apk"), Err(()));
        assert_eq!(package_of("/system/framework/framework.jar"), Ok(None));
    }
}

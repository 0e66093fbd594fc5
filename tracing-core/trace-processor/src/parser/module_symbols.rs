//! `ModuleSymbols`: symbols of a binary (by path and build id) at
//! addresses; each address's lines become one symbol set, and every frame
//! of that binary at that rel_pc points at it. The build id is raw bytes,
//! as upstream reads it, or hex text (what `zerotrace symbolize` writes). A binary no mapping has
//! counts `stackprofile_invalid_mapping_id`, an address no frame has
//! `stackprofile_invalid_frame_id`, as upstream counts them.

use zerotrace_protos::protos::ModuleSymbolsDecoder;

use super::Parser;
use crate::storage::profiling_rows::SymbolRow;

/// The raw bytes of a build id written as hex text, if it is hex.
fn unhex(text: &[u8]) -> Option<Vec<u8>> {
    if text.len() % 2 != 0 {
        return None;
    }
    let digit = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    text.chunks_exact(2)
        .map(|p| Some(digit(p[0])? << 4 | digit(p[1])?))
        .collect()
}

/// Entries the profile views leave out: an undecodable message, no path,
/// or an address entry without an address or a named line.
fn malformed_entries(m: &ModuleSymbolsDecoder<'_>) -> u64 {
    let mut n = u64::from(m.decode_error().is_some());
    if m.path_bytes().is_none() {
        return n + 1;
    }
    for a in m.address_symbols() {
        if a.address().is_none() || a.lines().all(|l| l.function_name().is_none()) {
            n += 1;
        }
    }
    n
}

/// Parses one `ModuleSymbols`.
pub fn parse(p: &mut Parser, bytes: &[u8]) {
    let m = ModuleSymbolsDecoder::new(bytes);
    p.storage.profile_facts.losses.perf_malformed += malformed_entries(&m);
    let build_id = m.build_id_bytes().filter(|b| !b.is_empty());
    let path = String::from_utf8_lossy(m.path_bytes().unwrap_or(&[])).into_owned();
    let mut mappings = p.profiling.stacks.find_mappings(&path, build_id);
    if mappings.is_empty() {
        // A symbolizer that wrote the build id as hex text (as
        // `zerotrace symbolize` does) names the mappings of its raw bytes.
        if let Some(raw) = build_id.and_then(unhex) {
            mappings = p.profiling.stacks.find_mappings(&path, Some(&raw));
        }
    }
    if mappings.is_empty() {
        p.storage.stats.incr("stackprofile_invalid_mapping_id");
        return;
    }
    for a in m.address_symbols() {
        let set = u32::try_from(p.storage.profiling.symbols.len()).unwrap_or(u32::MAX);
        let mut has_lines = false;
        // The last line's function names the address in slices' args.
        let mut last_function = "";
        for line in a.lines() {
            last_function = line.function_name().unwrap_or("");
            let file = line.source_file_name().unwrap_or("");
            let row = SymbolRow {
                symbol_set_id: set,
                name: p.storage.strings.intern(line.function_name().unwrap_or("")),
                source_file: if file.is_empty() {
                    crate::column_store::strings::StrId::NULL
                } else {
                    p.storage.strings.intern(file)
                },
                line_number: if file.is_empty() {
                    None
                } else {
                    line.line_number()
                },
                inlined: None,
            };
            p.storage.profiling.symbols.push(row);
            has_lines = true;
        }
        if !has_lines {
            continue;
        }
        let address = a.address().unwrap_or(0);
        let mut found = false;
        for mapping in &mappings {
            (p.translation).add_native_symbol(*mapping, address, last_function);
            for f in p.profiling.stacks.frames_at(*mapping, address) {
                if let Some(row) = p.storage.profiling.frames.get_mut(f as usize) {
                    row.symbol_set_id = Some(set);
                    found = true;
                }
            }
        }
        if !found {
            p.storage.stats.incr("stackprofile_invalid_frame_id");
        }
    }
}

//! `ModuleSymbols`: symbols of a binary (by path and build id) at
//! addresses; each address's lines become one symbol set, and every frame
//! of that binary at that rel_pc points at it. A binary no mapping has
//! counts `stackprofile_invalid_mapping_id`, an address no frame has
//! `stackprofile_invalid_frame_id`, as upstream counts them.

use zerotrace_protos::protos::ModuleSymbolsDecoder;

use super::Parser;
use crate::storage::profiling_rows::SymbolRow;

/// Parses one `ModuleSymbols`.
pub fn parse(p: &mut Parser, bytes: &[u8]) {
    let m = ModuleSymbolsDecoder::new(bytes);
    let build_id = m.build_id_bytes().filter(|b| !b.is_empty());
    let path = String::from_utf8_lossy(m.path_bytes().unwrap_or(&[])).into_owned();
    let mappings = p.profiling.stacks.find_mappings(&path, build_id);
    if mappings.is_empty() {
        p.storage.stats.incr("stackprofile_invalid_mapping_id");
        return;
    }
    for a in m.address_symbols() {
        let set = u32::try_from(p.storage.profiling.symbols.len()).unwrap_or(u32::MAX);
        let mut has_lines = false;
        for line in a.lines() {
            let file = line.source_file_name().unwrap_or("");
            let row = SymbolRow {
                symbol_set_id: set,
                name: p.storage.strings.intern(line.function_name().unwrap_or("")),
                source_file: if file.is_empty() {
                    crate::storage::strings::StrId::NULL
                } else {
                    p.storage.strings.intern(file)
                },
                line_number: if file.is_empty() {
                    None
                } else {
                    line.line_number()
                },
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

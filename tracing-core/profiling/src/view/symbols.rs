//! Symbols that arrive after the samples. `traceconv symbolize` (and any
//! symbolizer like it) appends `TracePacket.module_symbols` packets to a
//! trace: per module (its path and build id) the function, file and line
//! of each address that samples reached, where the address is a frame's
//! `rel_pc`. They may come before or after the frames they name, and on
//! any sequence, so they are gathered into one table for the whole trace
//! and looked up when a frame is named.
//!
//! A module matches a mapping when the paths are equal and, if the module
//! states a build id, the build ids are too: the raw bytes, or the
//! mapping's bytes written in hex (older symbolizers wrote hex text).

use std::collections::HashMap;

use protozero::Decoder;
use zerotrace_protos::protos::ModuleSymbolsDecoder;

/// One function at an address: the innermost comes first when functions
/// were inlined into each other, as `AddressSymbols.lines` orders them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SymbolLine {
    /// The function's name (demangled, as symbolizers write it).
    pub function_name: String,
    /// The source file, when the symbolizer knew it.
    pub source_file: Option<String>,
    /// The line in that file (0 when unknown).
    pub line: u32,
}

/// Address → lines, for one module.
type AddressTable = HashMap<u64, Vec<SymbolLine>>;

/// Every `ModuleSymbols` of a trace.
#[derive(Debug, Default)]
pub(crate) struct Symbols {
    /// By (path, build id as written), build id empty when not stated.
    modules: HashMap<(String, Vec<u8>), AddressTable>,
}

impl Symbols {
    /// Takes in one encoded `ModuleSymbols`; returns how many of its
    /// entries were malformed (and left out).
    pub(crate) fn add(&mut self, encoded: &[u8]) -> u64 {
        let m = ModuleSymbolsDecoder::new(encoded);
        let mut malformed = u64::from(m.decode_error().is_some());
        let Some(path) = m.path() else {
            return malformed + 1;
        };
        let build_id = m.build_id_bytes().unwrap_or_default().to_vec();
        let table = self.modules.entry((path.to_owned(), build_id)).or_default();
        for a in m.address_symbols() {
            let Some(address) = a.address() else {
                malformed += 1;
                continue;
            };
            let lines: Vec<SymbolLine> = a
                .lines()
                .filter_map(|l| {
                    Some(SymbolLine {
                        function_name: l.function_name()?.to_owned(),
                        source_file: l.source_file_name().map(str::to_owned),
                        line: l.line_number().unwrap_or(0),
                    })
                })
                .collect();
            if lines.is_empty() {
                malformed += 1;
                continue;
            }
            table.insert(address, lines);
        }
        malformed
    }

    /// The lines of `address` in the module at `path` with `build_id`
    /// (raw bytes, empty when the mapping has none).
    pub(crate) fn lookup(
        &self,
        path: &str,
        build_id: &[u8],
        address: u64,
    ) -> Option<&[SymbolLine]> {
        if self.modules.is_empty() {
            return None;
        }
        let get = |id: Vec<u8>| {
            self.modules
                .get(&(path.to_owned(), id))
                .and_then(|t| t.get(&address))
                .map(Vec::as_slice)
        };
        get(build_id.to_vec())
            .or_else(|| get(hex(build_id).into_bytes()))
            .or_else(|| get(hex(build_id).to_uppercase().into_bytes()))
            .or_else(|| get(Vec::new()))
    }
}

/// Whether the packet `packet` (an encoded `TracePacket`) holds
/// `module_symbols` under field `field`; returns its bytes.
pub(crate) fn module_symbols_of(packet: &[u8], field: u32) -> Option<&[u8]> {
    Decoder::new(packet).find_last(field)?.as_bytes().ok()
}

/// Lower-case hex of `bytes`.
pub(crate) fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use zerotrace_protos::protos::ModuleSymbols;

    fn module(path: &str, build_id: &[u8], entries: &[(u64, &[&str])]) -> Vec<u8> {
        let mut w = protozero::HeapWriter::new();
        {
            let mut m = ModuleSymbols::from_message(w.root());
            m.set_path(path);
            // Raw build ids are not UTF-8: written as bytes.
            m.message().append_bytes(2, build_id);
            for (addr, names) in entries {
                let mut a = m.add_address_symbols();
                a.set_address(*addr);
                for n in *names {
                    a.add_lines().set_function_name(n).set_line_number(7);
                }
            }
        }
        w.finish().unwrap()
    }

    #[test]
    fn modules_match_by_path_and_raw_or_hex_build_id() {
        let mut s = Symbols::default();
        assert_eq!(
            s.add(&module(
                "/bin/a",
                &[0xab, 0xcd],
                &[(0x10, &["inner", "outer"])]
            )),
            0
        );
        assert_eq!(s.add(&module("/bin/b", b"00ff", &[(0x20, &["hexed"])])), 0);
        let l = s.lookup("/bin/a", &[0xab, 0xcd], 0x10).unwrap();
        assert_eq!(
            l.iter()
                .map(|l| l.function_name.as_str())
                .collect::<Vec<_>>(),
            ["inner", "outer"]
        );
        assert_eq!(l[0].line, 7);
        assert!(
            s.lookup("/bin/a", &[0xab, 0xce], 0x10).is_none(),
            "other build id"
        );
        assert!(
            s.lookup("/bin/a", &[0xab, 0xcd], 0x11).is_none(),
            "other address"
        );
        assert!(
            s.lookup("/bin/other", &[0xab, 0xcd], 0x10).is_none(),
            "other path"
        );
        assert_eq!(
            s.lookup("/bin/b", &[0x00, 0xff], 0x20).unwrap()[0].function_name,
            "hexed"
        );
    }

    #[test]
    fn a_module_without_build_id_matches_by_path() {
        let mut s = Symbols::default();
        s.add(&module("/bin/c", b"", &[(0x30, &["f"])]));
        assert_eq!(
            s.lookup("/bin/c", &[1, 2, 3], 0x30).unwrap()[0].function_name,
            "f"
        );
    }

    #[test]
    fn malformed_entries_are_counted() {
        let mut s = Symbols::default();
        let mut w = protozero::HeapWriter::new();
        {
            let mut m = ModuleSymbols::from_message(w.root());
            m.set_path("/x");
            m.add_address_symbols().set_address(1); // no lines
            m.add_address_symbols().add_lines().set_function_name("g"); // no address
        }
        assert_eq!(s.add(&w.finish().unwrap()), 2);
        assert_eq!(s.add(&[0xff]), 2, "undecodable and pathless");
    }
}

//! Code locations of a whole trace, as the views name them. The trace
//! processor's `stack_profile_mapping` keeps a process's mapping apart
//! from another process's mapping of the same file, and its frames are
//! per mapping; the views want one mapping per file placed in memory
//! (same path, build id and place) and one frame per (mapping, `rel_pc`,
//! name), however many processes or sequences named them, so the rows
//! are folded into these tables. A frame's `ModuleSymbols` lines (its
//! `stack_profile_symbol` set) take precedence over the recorder's name.

use std::collections::HashMap;

/// A mapped file, as the recorder saw it in a process's memory.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Mapping {
    /// The file's path: its interned components joined, each after a `/`.
    pub path: String,
    /// The ELF build id, raw bytes (empty when unknown).
    pub build_id: Vec<u8>,
    /// First address of the mapping.
    pub start: u64,
    /// Address past its end.
    pub end: u64,
    /// Offset in the file of this mapping.
    pub exact_offset: u64,
    /// Offset in the file of the file's first mapping.
    pub start_offset: u64,
    /// The ELF load bias.
    pub load_bias: u64,
}

impl Mapping {
    /// The path's last component (`libc.so.6`), or the path when it has
    /// no `/`.
    pub fn basename(&self) -> &str {
        self.path.rsplit('/').next().unwrap_or(&self.path)
    }

    /// The build id in lower-case hex (empty when unknown).
    pub fn build_id_hex(&self) -> String {
        hex(&self.build_id)
    }
}

/// A frame: a place in a mapping, with the name the recorder gave it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Frame {
    /// Index of its mapping in the profile (`None`: the recorder named none).
    pub mapping: Option<usize>,
    /// The pc relative to the mapped ELF file.
    pub rel_pc: u64,
    /// The function name the recorder interned (`None`: unnamed).
    pub name: Option<String>,
}

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

/// Lower-case hex of `bytes`.
pub(crate) fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}

/// The deduplicated mappings and frames, and each frame's symbols.
#[derive(Debug, Default)]
pub(crate) struct Tables {
    mappings: Vec<Mapping>,
    mapping_index: HashMap<Mapping, usize>,
    frames: Vec<Frame>,
    frame_index: HashMap<Frame, usize>,
    /// By frame index: its `ModuleSymbols` lines, innermost first.
    symbols: Vec<Option<Vec<SymbolLine>>>,
}

impl Tables {
    /// The index of `m`, added if new.
    pub(crate) fn intern_mapping(&mut self, m: Mapping) -> usize {
        if let Some(&i) = self.mapping_index.get(&m) {
            return i;
        }
        let i = self.mappings.len();
        self.mappings.push(m.clone());
        self.mapping_index.insert(m, i);
        i
    }

    /// The index of `f`, added if new; `symbols` name it unless an
    /// equal frame already had some.
    pub(crate) fn intern_frame(&mut self, f: Frame, symbols: Option<Vec<SymbolLine>>) -> usize {
        if let Some(&i) = self.frame_index.get(&f) {
            if let Some(slot) = self.symbols.get_mut(i).filter(|s| s.is_none()) {
                *slot = symbols;
            }
            return i;
        }
        let i = self.frames.len();
        self.frames.push(f.clone());
        self.symbols.push(symbols);
        self.frame_index.insert(f, i);
        i
    }

    /// Every mapping, by index.
    pub(crate) fn mappings(&self) -> &[Mapping] {
        &self.mappings
    }

    /// Every frame, by index.
    pub(crate) fn frames(&self) -> &[Frame] {
        &self.frames
    }

    /// The `ModuleSymbols` lines of frame `index`, innermost first.
    pub(crate) fn symbol_lines(&self, index: usize) -> Option<&[SymbolLine]> {
        self.symbols
            .get(index)?
            .as_deref()
            .filter(|l| !l.is_empty())
    }

    /// The functions at frame `index`, innermost first (more than one where
    /// `ModuleSymbols` say functions were inlined there): the symbolizer's
    /// names, else the recorder's, else `mapping_basename+0xrel_pc`.
    pub(crate) fn function_names(&self, index: usize) -> Vec<String> {
        let Some(f) = self.frames.get(index) else {
            return vec!["[no such frame]".to_owned()];
        };
        if let Some(lines) = self.symbol_lines(index) {
            return lines.iter().map(|l| l.function_name.clone()).collect();
        }
        if let Some(n) = f.name.as_ref().filter(|n| !n.is_empty()) {
            return vec![n.clone()];
        }
        let base = f
            .mapping
            .and_then(|m| self.mappings.get(m))
            .map_or("[unknown]", Mapping::basename);
        vec![format!("{base}+0x{:x}", f.rel_pc)]
    }

    /// The names along `stack` (frame indices root to leaf), root first,
    /// inlined functions expanded (their caller before them).
    pub(crate) fn stack_names(&self, stack: &[usize]) -> Vec<String> {
        let mut out = Vec::with_capacity(stack.len());
        for &f in stack {
            out.extend(self.function_names(f).into_iter().rev());
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mapping(path: &str) -> Mapping {
        Mapping {
            path: path.into(),
            build_id: vec![0xbe, 0xef],
            start: 0x1000,
            end: 0x2000,
            exact_offset: 0,
            start_offset: 0,
            load_bias: 0,
        }
    }

    #[test]
    fn equal_mappings_and_frames_share_an_index() {
        let mut t = Tables::default();
        let a = t.intern_mapping(mapping("/lib/a.so"));
        assert_eq!(t.intern_mapping(mapping("/lib/a.so")), a);
        let b = t.intern_mapping(mapping("/lib/b.so"));
        assert_ne!(a, b);
        let f = |m, pc| Frame {
            mapping: Some(m),
            rel_pc: pc,
            name: None,
        };
        let x = t.intern_frame(f(a, 0x10), None);
        assert_eq!(t.intern_frame(f(a, 0x10), None), x);
        assert_ne!(t.intern_frame(f(b, 0x10), None), x);
        assert_eq!(t.frames().len(), 2);
        assert_eq!(t.mappings()[b].build_id_hex(), "beef");
    }

    #[test]
    fn unnamed_frames_are_named_by_mapping_and_rel_pc() {
        let mut t = Tables::default();
        let m = t.intern_mapping(mapping("/usr/lib/libc.so.6"));
        let unnamed = t.intern_frame(
            Frame {
                mapping: Some(m),
                rel_pc: 0x2a,
                name: None,
            },
            None,
        );
        let empty = t.intern_frame(
            Frame {
                mapping: None,
                rel_pc: 0x3,
                name: Some(String::new()),
            },
            None,
        );
        let named = t.intern_frame(
            Frame {
                mapping: Some(m),
                rel_pc: 0x2b,
                name: Some("malloc".into()),
            },
            None,
        );
        assert_eq!(t.function_names(unnamed), ["libc.so.6+0x2a"]);
        assert_eq!(t.function_names(empty), ["[unknown]+0x3"]);
        assert_eq!(
            t.stack_names(&[named, unnamed]),
            ["malloc", "libc.so.6+0x2a"]
        );
        assert_eq!(t.function_names(99), ["[no such frame]"]);
    }

    #[test]
    fn symbols_name_a_frame_inlined_expanded() {
        let mut t = Tables::default();
        let line = |n: &str| SymbolLine {
            function_name: n.into(),
            source_file: None,
            line: 0,
        };
        let f = Frame {
            mapping: None,
            rel_pc: 1,
            name: Some("recorded".into()),
        };
        let i = t.intern_frame(f.clone(), None);
        // A later equal frame brings symbols: they name the first.
        assert_eq!(
            t.intern_frame(f, Some(vec![line("inner"), line("outer")])),
            i
        );
        assert_eq!(t.stack_names(&[i]), ["outer", "inner"]);
    }
}

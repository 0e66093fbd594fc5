//! Code locations of a whole trace. Each sequence interns its mappings and
//! frames under ids of its own that a clear reuses, so a sample's frames
//! are copied out of the sequence into these tables, where one mapping
//! (same file, build id and place in memory) or one frame (same mapping,
//! `rel_pc` and name) gets one index however many sequences or clears
//! named it. Viewers read frames by index and name them here, with the
//! trace's `ModuleSymbols` ([`super::symbols`]) taking precedence.

use std::collections::HashMap;

use super::symbols::{SymbolLine, Symbols, hex};

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

/// The deduplicated mappings and frames, and the trace's symbols.
#[derive(Debug, Default)]
pub(crate) struct Tables {
    mappings: Vec<Mapping>,
    mapping_index: HashMap<Mapping, usize>,
    frames: Vec<Frame>,
    frame_index: HashMap<Frame, usize>,
    pub(crate) symbols: Symbols,
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

    /// The index of `f`, added if new.
    pub(crate) fn intern_frame(&mut self, f: Frame) -> usize {
        if let Some(&i) = self.frame_index.get(&f) {
            return i;
        }
        let i = self.frames.len();
        self.frames.push(f.clone());
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

    /// The `ModuleSymbols` lines of frame `f`, innermost function first.
    pub(crate) fn symbol_lines(&self, f: &Frame) -> Option<&[SymbolLine]> {
        let m = self.mappings.get(f.mapping?)?;
        self.symbols.lookup(&m.path, &m.build_id, f.rel_pc)
    }

    /// The functions at frame `index`, innermost first (more than one where
    /// `ModuleSymbols` say functions were inlined there): the symbolizer's
    /// names, else the recorder's, else `mapping_basename+0xrel_pc`.
    pub(crate) fn function_names(&self, index: usize) -> Vec<String> {
        let Some(f) = self.frames.get(index) else {
            return vec!["[no such frame]".to_owned()];
        };
        if let Some(lines) = self.symbol_lines(f) {
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
        let x = t.intern_frame(f(a, 0x10));
        assert_eq!(t.intern_frame(f(a, 0x10)), x);
        assert_ne!(t.intern_frame(f(b, 0x10)), x);
        assert_eq!(t.frames().len(), 2);
        assert_eq!(t.mappings()[b].build_id_hex(), "beef");
    }

    #[test]
    fn unnamed_frames_are_named_by_mapping_and_rel_pc() {
        let mut t = Tables::default();
        let m = t.intern_mapping(mapping("/usr/lib/libc.so.6"));
        let unnamed = t.intern_frame(Frame {
            mapping: Some(m),
            rel_pc: 0x2a,
            name: None,
        });
        let empty = t.intern_frame(Frame {
            mapping: None,
            rel_pc: 0x3,
            name: Some(String::new()),
        });
        let named = t.intern_frame(Frame {
            mapping: Some(m),
            rel_pc: 0x2b,
            name: Some("malloc".into()),
        });
        assert_eq!(t.function_names(unnamed), ["libc.so.6+0x2a"]);
        assert_eq!(t.function_names(empty), ["[unknown]+0x3"]);
        assert_eq!(
            t.stack_names(&[named, unnamed]),
            ["malloc", "libc.so.6+0x2a"]
        );
        assert_eq!(t.function_names(99), ["[no such frame]"]);
    }
}

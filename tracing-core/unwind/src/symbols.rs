//! A module's function symbols, sorted for lookup by address: which
//! function holds a given `rel_pc`. Names are kept as raw bytes in one
//! arena (a large library has tens of thousands) and demangled only when
//! asked for, since a profile names far fewer functions than a file holds.
//! `.symtab` entries come first, so where `.dynsym` repeats an address the
//! fuller table's name wins.

use super::demangle::demangle;

/// A function a pc fell in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Symbol {
    /// The name demangled (Rust legacy and v0, C++ Itanium), or as stored
    /// when it is not mangled.
    pub name: String,
    /// The name exactly as the symbol table has it.
    pub raw_name: String,
    /// The function's first address.
    pub start: u64,
    /// `rel_pc - start`.
    pub offset: u64,
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    start: u64,
    size: u64,
    name_at: u32,
    name_len: u32,
}

/// Function symbols sorted by start address.
#[derive(Debug, Default)]
pub struct SymbolTable {
    entries: Vec<Entry>,
    names: Vec<u8>,
}

impl SymbolTable {
    /// Builds the table from `(address, size, name)`, in priority order
    /// (earlier wins on equal addresses). Names past 4 GiB of arena are
    /// dropped.
    pub fn build(symbols: Vec<(u64, u64, &[u8])>) -> Self {
        let mut names = Vec::new();
        let mut entries = Vec::with_capacity(symbols.len());
        for (start, size, name) in symbols {
            let (Ok(name_at), Ok(name_len)) =
                (u32::try_from(names.len()), u32::try_from(name.len()))
            else {
                continue;
            };
            if name_at.checked_add(name_len).is_none() {
                continue;
            }
            names.extend_from_slice(name);
            entries.push(Entry {
                start,
                size,
                name_at,
                name_len,
            });
        }
        // Stable: among equal starts the earlier (higher-priority) stays first.
        entries.sort_by_key(|e| e.start);
        entries.dedup_by_key(|e| e.start);
        entries.shrink_to_fit();
        names.shrink_to_fit();
        SymbolTable { entries, names }
    }

    /// How many symbols.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there are none (a stripped module).
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The function whose `[start, start + size)` holds `addr` (a symbol of
    /// size 0 holds only its own address).
    pub fn lookup(&self, addr: u64) -> Option<Symbol> {
        let i = self
            .entries
            .partition_point(|e| e.start <= addr)
            .checked_sub(1)?;
        let e = self.entries.get(i)?;
        let offset = addr - e.start;
        if offset >= e.size.max(1) {
            return None;
        }
        let at = e.name_at as usize;
        let raw = self.names.get(at..at + e.name_len as usize)?;
        let raw_name = String::from_utf8_lossy(raw).into_owned();
        Some(Symbol {
            name: demangle(&raw_name),
            raw_name,
            start: e.start,
            offset,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookup_by_range_with_priority() {
        let t = SymbolTable::build(vec![
            (0x2000, 0x10, &b"second"[..]),
            (0x1000, 0x100, b"first"),
            (0x1000, 0x100, b"dynsym_dup"),
            (0x3000, 0, b"sizeless"),
        ]);
        assert_eq!(t.len(), 3);
        assert_eq!(t.lookup(0x1000).map(|s| s.name), Some("first".into()));
        let s = t.lookup(0x10ff).unwrap();
        assert_eq!((s.start, s.offset), (0x1000, 0xff));
        assert_eq!(t.lookup(0x1100), None);
        assert_eq!(t.lookup(0x2005).map(|s| s.name), Some("second".into()));
        assert_eq!(t.lookup(0x3000).map(|s| s.name), Some("sizeless".into()));
        assert_eq!(t.lookup(0x3001), None);
        assert_eq!(t.lookup(0xfff), None);
        assert_eq!(SymbolTable::default().lookup(5), None);
    }
}

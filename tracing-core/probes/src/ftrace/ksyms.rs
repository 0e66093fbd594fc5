//! `/proc/kallsyms` as a sorted table for address → kernel symbol lookup
//! (`symbolize_ksyms`): function addresses in kernel events (workqueue
//! functions, IPs) become names. Parsing is bounded and typed; when
//! `kptr_restrict` hides the addresses (every address reads 0) the table is
//! empty and says so, rather than mapping everything to one symbol.

use std::path::Path;

use super::tracefs::{TracefsError, read_bounded};

/// The largest `/proc/kallsyms` read (real ones are a few MiB).
pub const MAX_KALLSYMS_BYTES: usize = 64 << 20;

/// The symbols that mark the end of a kernel text section.
const TEXT_ENDS: &[&str] = &["_etext", "_einittext"];

/// Why `/proc/kallsyms` did not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KsymsError {
    /// A line is not `ADDRESS TYPE NAME [MODULE]`.
    #[error("kallsyms line {line}: {reason}")]
    BadLine {
        /// 1-based line number.
        line: usize,
        /// What was wrong.
        reason: &'static str,
    },
}

/// Text symbols sorted by address; names kept in one string.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KernelSymbols {
    /// (address, start of the name in `names`, its length), by address.
    entries: Vec<(u64, u32, u32)>,
    names: String,
    /// Lines whose address was 0 (hidden by `kptr_restrict`).
    hidden: usize,
}

impl KernelSymbols {
    /// Parses the text of `/proc/kallsyms`, keeping text symbols (types
    /// `t`, `T`, `w`, `W`).
    pub fn parse(text: &str) -> Result<Self, KsymsError> {
        let mut s = KernelSymbols::default();
        for (i, line) in text.lines().enumerate() {
            let bad = |reason| KsymsError::BadLine {
                line: i + 1,
                reason,
            };
            if line.trim().is_empty() {
                continue;
            }
            let mut words = line.split_whitespace();
            let addr = words.next().ok_or_else(|| bad("empty"))?;
            let ty = words.next().ok_or_else(|| bad("no type"))?;
            let name = words.next().ok_or_else(|| bad("no name"))?;
            let addr = u64::from_str_radix(addr, 16).map_err(|_| bad("address is not hex"))?;
            if ty.len() != 1 {
                return Err(bad("type is not one letter"));
            }
            if !matches!(ty, "t" | "T" | "w" | "W") {
                continue;
            }
            if addr == 0 {
                s.hidden += 1;
                continue;
            }
            let start = u32::try_from(s.names.len()).map_err(|_| bad("names too large"))?;
            let len = u32::try_from(name.len()).map_err(|_| bad("name too long"))?;
            s.names.push_str(name);
            s.entries.push((addr, start, len));
        }
        s.entries.sort_by_key(|e| e.0);
        Ok(s)
    }

    /// Reads and parses `/proc/kallsyms` (or a file shaped like it).
    pub fn read(path: &Path) -> Result<Self, KsymsReadError> {
        let bytes = read_bounded(path, MAX_KALLSYMS_BYTES)?;
        let text = String::from_utf8_lossy(&bytes);
        Ok(KernelSymbols::parse(&text)?)
    }

    /// Symbols in the table (`ftrace_stats.kernel_symbols_parsed`).
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the table is empty.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Text symbols whose address was hidden (0): `kptr_restrict` is on or
    /// the reader lacks the privilege.
    pub fn hidden(&self) -> usize {
        self.hidden
    }

    /// Memory the table takes, KiB (`ftrace_stats.kernel_symbols_mem_kb`).
    pub fn mem_kb(&self) -> u32 {
        let bytes = self.entries.capacity() * std::mem::size_of::<(u64, u32, u32)>()
            + self.names.capacity();
        u32::try_from(bytes.div_ceil(1024)).unwrap_or(u32::MAX)
    }

    /// The symbol containing `addr`: the one with the highest address not
    /// above it, and the offset from it. `None` below the first symbol and
    /// past the end of a text section (`_etext`, `_einittext`: what lies
    /// beyond them is data, not the last function's code).
    pub fn lookup(&self, addr: u64) -> Option<(&str, u64)> {
        let idx = self
            .entries
            .partition_point(|e| e.0 <= addr)
            .checked_sub(1)?;
        let &(start, off, len) = self.entries.get(idx)?;
        let name = self.names.get(off as usize..off as usize + len as usize)?;
        if TEXT_ENDS.contains(&name) {
            return None;
        }
        Some((name, addr - start))
    }
}

/// Why `/proc/kallsyms` could not be had.
#[derive(Debug, thiserror::Error)]
pub enum KsymsReadError {
    /// Reading failed.
    #[error(transparent)]
    Read(#[from] TracefsError),
    /// Parsing failed.
    #[error(transparent)]
    Parse(#[from] KsymsError),
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIXTURE: &str = "\
ffffffff81000000 T _text
ffffffff81001000 T startup_64
ffffffff81001100 t secondary_startup_64
ffffffff81234000 D some_data
ffffffff81002000 W weak_fn
ffffffffc0001000 t ext4_fill_super\t[ext4]
ffffffff81001f00 T do_one_initcall
ffffffff81003000 T _etext
";

    #[test]
    fn looks_up_addresses() {
        let k = KernelSymbols::parse(FIXTURE).expect("parse");
        assert_eq!(k.len(), 7, "data symbol skipped");
        assert_eq!(k.lookup(0xffffffff81000000), Some(("_text", 0)));
        assert_eq!(
            k.lookup(0xffffffff81001104),
            Some(("secondary_startup_64", 4))
        );
        assert_eq!(
            k.lookup(0xffffffff81001f10),
            Some(("do_one_initcall", 0x10))
        );
        assert_eq!(k.lookup(0xffffffff81002001), Some(("weak_fn", 1)));
        assert_eq!(k.lookup(0xffffffffc0001008), Some(("ext4_fill_super", 8)));
        assert_eq!(k.lookup(0x1000), None);
        // Past the end of the kernel's text: data, not weak_fn's code.
        assert_eq!(k.lookup(0xffffffff81234008), None);
        assert!(k.mem_kb() >= 1);
    }

    #[test]
    fn hidden_addresses_and_bad_lines() {
        let k = KernelSymbols::parse("0000000000000000 T _text\n0000000000000000 t x\n")
            .expect("parse");
        assert!(k.is_empty());
        assert_eq!(k.hidden(), 2);
        assert_eq!(k.lookup(5), None);
        for (bad, reason) in [
            ("zzzz T x\n", "address is not hex"),
            ("ffff T\n", "no name"),
            ("ffff\n", "no type"),
            ("ffff TT x\n", "type is not one letter"),
            ("1ffffffffffffffff T x\n", "address is not hex"),
        ] {
            assert_eq!(
                KernelSymbols::parse(bad),
                Err(KsymsError::BadLine { line: 1, reason }),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn reads_the_live_file() {
        // Readable by anyone; addresses may be hidden without privilege.
        match KernelSymbols::read(Path::new("/proc/kallsyms")) {
            Ok(k) => assert!(k.len() + k.hidden() > 1000, "{} + {}", k.len(), k.hidden()),
            Err(e) => println!("/proc/kallsyms not readable here: {e}"),
        }
    }
}

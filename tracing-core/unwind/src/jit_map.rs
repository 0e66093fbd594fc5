//! Names for JIT-compiled code, which lives in anonymous executable memory
//! no ELF describes. By the convention `perf` set, a JIT writes one line per
//! function to `/tmp/perf-PID.map`: `START SIZE NAME`, both numbers hex
//! (`0x` optional), the name the rest of the line. The file is read from
//! the process's own root (`/proc/PID/root/tmp/...`), bounded in size, and
//! re-read when it has grown since, as a JIT appends while it runs.

use std::path::PathBuf;

use crate::ProcRoot;

use super::symbols::Symbol;

/// The largest map file read.
const MAX_JIT_MAP: usize = 64 << 20;

#[derive(Debug, Clone)]
struct JitSymbol {
    start: u64,
    end: u64,
    name: String,
}

/// A parsed `perf-PID.map`.
#[derive(Debug, Default)]
pub struct JitMap {
    symbols: Vec<JitSymbol>,
    read_len: Option<u64>,
}

impl JitMap {
    /// Parses map text; lines that do not parse are skipped.
    pub fn parse(text: &[u8]) -> Self {
        let mut symbols = Vec::new();
        for line in text.split(|&b| b == b'\n') {
            let line = String::from_utf8_lossy(line);
            let mut parts = line.trim_end_matches('\r').splitn(3, ' ');
            let (Some(start), Some(size), Some(name)) = (parts.next(), parts.next(), parts.next())
            else {
                continue;
            };
            let num = |s: &str| u64::from_str_radix(s.trim_start_matches("0x"), 16).ok();
            let (Some(start), Some(size)) = (num(start), num(size)) else {
                continue;
            };
            let Some(end) = start.checked_add(size) else {
                continue;
            };
            if size == 0 || name.is_empty() {
                continue;
            }
            symbols.push(JitSymbol {
                start,
                end,
                name: name.to_owned(),
            });
        }
        // Later lines win (a JIT may reuse addresses): sort stably by start
        // and keep the last of equal starts.
        symbols.sort_by_key(|s| s.start);
        let mut deduped: Vec<JitSymbol> = Vec::with_capacity(symbols.len());
        for s in symbols {
            match deduped.last_mut() {
                Some(last) if last.start == s.start => *last = s,
                _ => deduped.push(s),
            }
        }
        JitMap {
            symbols: deduped,
            read_len: None,
        }
    }

    fn path(proc: &ProcRoot, pid: u32) -> PathBuf {
        proc.path(format!("proc/{pid}/root/tmp/perf-{pid}.map"))
    }

    /// Reads the process's map, if it has one.
    pub fn load(proc: &ProcRoot, pid: u32) -> Self {
        let Ok(bytes) = proc.read(format!("proc/{pid}/root/tmp/perf-{pid}.map"), MAX_JIT_MAP)
        else {
            return JitMap::default();
        };
        let mut map = JitMap::parse(&bytes);
        map.read_len = Some(bytes.len() as u64);
        map
    }

    /// Whether the file on disk has another length than when read.
    pub fn is_stale(&self, proc: &ProcRoot, pid: u32) -> bool {
        let len = std::fs::metadata(Self::path(proc, pid))
            .map(|m| m.len())
            .ok();
        len != self.read_len
    }

    /// How many functions.
    pub fn len(&self) -> usize {
        self.symbols.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.symbols.is_empty()
    }

    /// The function holding the absolute address `pc`.
    pub fn lookup(&self, pc: u64) -> Option<Symbol> {
        let i = self
            .symbols
            .partition_point(|s| s.start <= pc)
            .checked_sub(1)?;
        let s = self.symbols.get(i)?;
        (pc < s.end).then(|| Symbol {
            name: s.name.clone(),
            raw_name: s.name.clone(),
            start: s.start,
            offset: pc - s.start,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn parses_perf_map_lines() {
        let m = JitMap::parse(
            b"7f0000001000 40 LazyCompile:~foo a.js:1\n0x7f0000002000 0x10 bar\nbad line\n7f0000001000 20 newer\n",
        );
        assert_eq!(m.len(), 2);
        let s = m.lookup(0x7f000000101f).unwrap();
        assert_eq!((s.name.as_str(), s.offset), ("newer", 0x1f));
        assert_eq!(m.lookup(0x7f0000001020), None);
        assert_eq!(m.lookup(0x7f0000002005).map(|s| s.name), Some("bar".into()));
    }

    proptest! {
        #[test]
        fn never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..256), pc: u64) {
            let _ = JitMap::parse(&bytes).lookup(pc);
        }
    }
}

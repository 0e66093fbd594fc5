//! simpleperf's protobuf record file (what `simpleperf report-sample
//! --protobuf` writes, and Android Studio reads): the magic `SIMPLEPERF`,
//! a little-endian u16 version (1), then records each framed by a
//! little-endian u32 size, a size of 0 ending the file. It is read as the
//! bytes arrive: file records (a binary's path and symbol table) and meta
//! records are taken at once, as Perfetto takes them before sorting;
//! samples, context switches and thread records (which take the time of
//! the last sample or switch read) are kept with their time and imported
//! in time order at the end (`records.rs`). The times are the monotonic
//! clock's. A file cut short, a wrong magic or version is an error.

pub mod records;

use crate::error::TraceError;
use crate::parser::Parser;

use super::reader::FormatReader;
use records::Symbols;

/// The file's magic.
pub const MAGIC: &[u8] = b"SIMPLEPERF";

const FORMAT: &str = "simpleperf";

/// Where the reader is in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum State {
    /// Before the magic.
    #[default]
    Magic,
    /// Before the version.
    Version,
    /// Before a record's size.
    Size,
    /// Inside a record of this size.
    Record(u32),
    /// Past the end marker: what follows is not read.
    Finished,
}

/// A record kept for the sorted import: its time and bytes.
#[derive(Debug)]
struct Kept {
    ts: i64,
    bytes: Vec<u8>,
}

/// The streaming reader of simpleperf's record file.
#[derive(Debug, Default)]
pub struct SimpleperfLoad {
    state: State,
    /// Bytes of the field or record being read.
    pending: Vec<u8>,
    /// Offset of `pending`'s first byte in the file.
    offset: u64,
    /// The time of the last sample or context switch.
    last_ts: i64,
    kept: Vec<Kept>,
    kept_bytes: u64,
    symbols: Symbols,
}

impl SimpleperfLoad {
    fn error(&self, offset: u64, message: impl Into<String>) -> TraceError {
        TraceError::Malformed {
            format: FORMAT,
            offset,
            message: message.into(),
        }
    }

    /// Bytes the current state waits for.
    fn wanted(&self) -> usize {
        match self.state {
            State::Magic => MAGIC.len(),
            State::Version => 2,
            State::Size => 4,
            State::Record(n) => n as usize,
            State::Finished => 0,
        }
    }

    /// One whole field or record of the current state.
    fn take(&mut self, p: &mut Parser, bytes: &[u8], at: u64) -> Result<(), TraceError> {
        self.state = match self.state {
            State::Magic => {
                if bytes != MAGIC {
                    return Err(self.error(at, "no SIMPLEPERF magic"));
                }
                State::Version
            }
            State::Version => {
                let v = <[u8; 2]>::try_from(bytes).map_or(0, u16::from_le_bytes);
                if v != 1 {
                    return Err(self.error(at, format!("version {v}, not 1")));
                }
                State::Size
            }
            State::Size => {
                let n = <[u8; 4]>::try_from(bytes).map_or(0, u32::from_le_bytes);
                if n == 0 {
                    State::Finished
                } else {
                    State::Record(n)
                }
            }
            State::Record(_) => {
                p.storage.work.step(1);
                if let Some(ts) = records::tokenize(p, &mut self.symbols, bytes, &mut self.last_ts)
                {
                    self.kept_bytes = self.kept_bytes.saturating_add(bytes.len() as u64);
                    self.kept.push(Kept {
                        ts,
                        bytes: bytes.to_vec(),
                    });
                }
                State::Size
            }
            State::Finished => State::Finished,
        };
        Ok(())
    }
}

impl FormatReader for SimpleperfLoad {
    fn push(&mut self, p: &mut Parser, data: &[u8]) -> Result<(), TraceError> {
        let mut rest = data;
        while self.state != State::Finished {
            let wanted = self.wanted();
            if self.pending.is_empty() && rest.len() >= wanted {
                // The whole field is in this push: read it in place.
                let (field, tail) = rest.split_at(wanted);
                let at = self.offset;
                self.take(p, field, at)?;
                self.offset = self.offset.saturating_add(wanted as u64);
                rest = tail;
                continue;
            }
            let need = wanted - self.pending.len();
            let n = need.min(rest.len());
            let (head, tail) = rest.split_at(n);
            self.pending.extend_from_slice(head);
            rest = tail;
            if self.pending.len() < wanted {
                return Ok(());
            }
            let field = std::mem::take(&mut self.pending);
            let at = self.offset;
            self.take(p, &field, at)?;
            self.offset = self.offset.saturating_add(wanted as u64);
        }
        Ok(())
    }

    fn held_bytes(&self) -> u64 {
        let per = std::mem::size_of::<Kept>() as u64;
        self.kept_bytes
            .saturating_add(per.saturating_mul(self.kept.len() as u64))
            .saturating_add(self.pending.len() as u64)
    }

    fn finish(mut self: Box<Self>, p: &mut Parser) -> Result<(), TraceError> {
        if self.state != State::Finished {
            return Err(self.error(self.offset, "the file ends before its end marker"));
        }
        self.kept.sort_by_key(|k| k.ts);
        for k in &self.kept {
            p.storage.work.step(1);
            records::import(p, &mut self.symbols, k.ts, &k.bytes);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::Loader;
    use crate::error::TraceError;
    use crate::storage::Storage;

    /// One `Record`, written by `f` (its fields by number).
    fn record(f: impl FnOnce(&mut protozero::Message<'_>)) -> Vec<u8> {
        let mut w = protozero::HeapWriter::new();
        {
            let mut m = w.root();
            f(&mut m);
        }
        w.finish().expect("heap writer")
    }

    fn file(records: &[Vec<u8>], end: bool) -> Vec<u8> {
        let mut out = b"SIMPLEPERF".to_vec();
        out.extend_from_slice(&1u16.to_le_bytes());
        for r in records {
            out.extend_from_slice(&(r.len() as u32).to_le_bytes());
            out.extend_from_slice(r);
        }
        if end {
            out.extend_from_slice(&0u32.to_le_bytes());
        }
        out
    }

    fn sample(ts: u64, tid: i32, chain: &[(u64, u32, i32)]) -> Vec<u8> {
        record(|r| {
            let mut s = r.begin_nested(1);
            s.append_uint64(1, ts);
            s.append_int32(2, tid);
            for &(vaddr, file, symbol) in chain {
                let mut e = s.begin_nested(3);
                e.append_uint64(1, vaddr);
                e.append_uint32(2, file);
                e.append_int32(3, symbol);
                e.finalize();
            }
            s.finalize();
        })
    }

    fn records() -> Vec<Vec<u8>> {
        vec![
            record(|r| {
                let mut f = r.begin_nested(3);
                f.append_uint32(1, 1);
                f.append_string(2, "/system/lib64/libc.so");
                f.append_string(3, "main");
                f.append_string(3, "work");
                f.finalize();
            }),
            // Leaf first: work called by main; then one whose leaf has no
            // symbol; then one naming a file never described.
            sample(2_000, 7, &[(0x20, 1, 1), (0x10, 1, 0)]),
            sample(1_000, 7, &[(0x30, 1, -1), (0x10, 1, 0)]),
            sample(3_000, 8, &[(0x10, 2, 0)]),
            record(|r| {
                let mut t = r.begin_nested(4);
                t.append_uint32(1, 8);
                t.append_uint32(2, 80);
                t.append_string(3, "worker");
                t.finalize();
            }),
        ]
    }

    fn load(bytes: &[u8], step: usize) -> Result<Storage, TraceError> {
        let mut l = Loader::new();
        for c in bytes.chunks(step) {
            l.push(c)?;
        }
        l.finish()
    }

    /// A simpleperf record file loads: the file record is a mapping of
    /// the binary's path, each sample a callsite root first (frames at
    /// their addresses, named by the file's symbols, NULL when unknown)
    /// and a `simpleperf` profiler sample of its thread in time order; a
    /// sample of an unknown file is counted; a thread record names its
    /// thread and process; whatever the chunks.
    #[test]
    fn simpleperf_records_become_mappings_callsites_and_samples() {
        let bytes = file(&records(), true);
        for step in [bytes.len(), 1, 5] {
            let st = load(&bytes, step).unwrap();
            let p = &st.profiling;
            assert_eq!(p.mappings.len(), 1);
            assert_eq!(
                st.strings.get(p.mappings[0].name),
                Some("/system/lib64/libc.so")
            );
            let name = |frame: u32| st.strings.get(p.frames[frame as usize].name);
            let samples: Vec<(i64, Vec<Option<&str>>)> = p
                .samples
                .iter()
                .map(|s| {
                    let mut chain = Vec::new();
                    let mut c = s.callsite_id;
                    while let Some(id) = c {
                        let cs = &p.callsites[id as usize];
                        chain.push(name(cs.frame_id));
                        c = cs.parent_id;
                    }
                    (s.ts, chain)
                })
                .collect();
            assert_eq!(
                samples,
                [
                    (1_000, vec![None, Some("main")]),
                    (2_000, vec![Some("work"), Some("main")])
                ]
            );
            assert_eq!(st.strings.get(p.samples[0].source), Some("simpleperf"));
            assert_eq!(p.frames.len(), 3, "main's frame is made once");
            assert_eq!(st.stats.get("simpleperf_missing_file_mapping"), 1);
            let worker = st.threads.iter().find(|t| t.tid == 8).unwrap();
            assert_eq!(st.strings.get(worker.name), Some("worker"));
            assert_eq!(st.processes[worker.upid.unwrap() as usize].pid, 80);
        }
    }

    /// The profile views (`zerotrace flamegraph`, `convert --format
    /// pprof`) read simpleperf's samples as they read `linux.perf`'s.
    #[test]
    fn simpleperf_samples_reach_the_profile_views() {
        use crate::profile_view::{Filter, Profile, encode_pprof, folded};
        let prof = Profile::from_trace(&file(&records(), true)).unwrap();
        let lines = folded(&prof, &Filter::default()).lines();
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert!(lines.contains(&"main;work 1".to_owned()), "{lines:?}");
        assert!(!encode_pprof(&prof, &Filter::default()).unwrap().is_empty());
    }

    /// A file cut short, or with another magic or version, is an error
    /// saying where.
    #[test]
    fn a_simpleperf_file_cut_short_is_an_error() {
        let bytes = file(&records(), false);
        let e = load(&bytes, bytes.len()).unwrap_err();
        assert!(
            matches!(e, TraceError::Malformed { offset, .. } if offset == bytes.len() as u64),
            "{e}"
        );
        let mut v2 = file(&[], true);
        v2[10] = 2;
        assert!(matches!(
            load(&v2, 3),
            Err(TraceError::Malformed { offset: 10, .. })
        ));
        assert!(load(&file(&[], true), 1).is_ok());
    }
}

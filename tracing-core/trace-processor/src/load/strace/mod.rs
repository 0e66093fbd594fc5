//! strace text (`strace -f -ttt`, what `strace -f -ttt -o out.txt cmd`
//! writes) as Perfetto reads it: each syscall becomes a slice on its
//! thread's track (category `strace`, named by the syscall, args `args` and
//! `ret` as text), a whole call an instant of zero duration, an interrupted
//! call a slice from its `<unfinished ...>` line to its `resumed>` line.
//! Lines are read as the bytes arrive (`line.rs` splits one) and kept until
//! the end, then imported in time order. What is not imported is counted:
//! lines that are no syscall (`strace_parse_failure`), `-t`/`-tt` times of
//! day (`strace_unsupported_timestamp_format`), lines without `-f`'s pid
//! (`strace_missing_pid`). Times are Unix time (the realtime clock).

pub mod line;

use crate::column_store::strings::StrId;
use crate::error::TraceError;
use crate::hash::HashMap;
use crate::parser::Parser;
use crate::storage::args::{ArgSetBuilder, ArgValue};
use crate::storage::import_logs::LogPlace;
use crate::storage::rows::SliceRow;

use super::reader::FormatReader;
use line::Kind;

/// A syscall line, kept until the end of the trace.
#[derive(Debug, Clone, Copy)]
struct Event {
    ts: i64,
    tid: u32,
    kind: Kind,
    name: StrId,
    args: Option<StrId>,
    ret: Option<StrId>,
}

/// The streaming reader of strace text.
#[derive(Debug, Default)]
pub struct StraceLoad {
    /// Bytes of the line being read.
    pending: Vec<u8>,
    events: Vec<Event>,
    /// Bytes of the text before the data being pushed.
    consumed: u64,
}

/// Whether `head` (a trace's first bytes) starts with an strace syscall
/// line. A first line cut short by the end of `head` is judged by what it
/// shows: a pid and time, a name and its opening parenthesis.
pub fn sniff(head: &[u8]) -> bool {
    let text = String::from_utf8_lossy(head);
    match text.split_once('\n') {
        Some((first, _)) => line::parse(first).is_ok(),
        None => {
            let probe = format!("{text}) = 0");
            line::parse(&probe).is_ok()
        }
    }
}

impl StraceLoad {
    /// One line of text, which ends (its line break included) at byte
    /// `end` of the text: where a line that is refused is logged, as
    /// upstream's reader places it.
    fn line(&mut self, p: &mut Parser, text: &str, end: u64) {
        p.storage.work.step(1);
        let place = LogPlace {
            ts: None,
            byte_offset: i64::try_from(end).ok(),
        };
        let l = match line::parse(text) {
            Ok(l) => l,
            Err(line::Rejected::TimeOfDay) => {
                p.storage
                    .record_import_log("strace_unsupported_timestamp_format", place, &[]);
                return;
            }
            Err(line::Rejected::NotSyscall) => {
                p.storage
                    .record_import_log("strace_parse_failure", place, &[]);
                return;
            }
        };
        let Some(tid) = l.pid else {
            p.storage
                .record_import_log("strace_missing_pid", place, &[]);
            return;
        };
        let s = &mut p.storage.strings;
        let args = (!l.args.is_empty()).then(|| s.intern(l.args));
        let ret = l.ret.map(|r| s.intern(r));
        self.events.push(Event {
            ts: l.ts,
            tid,
            kind: l.kind,
            name: s.intern(l.syscall),
            args,
            ret,
        });
    }
}

impl FormatReader for StraceLoad {
    fn push(&mut self, p: &mut Parser, data: &[u8]) -> Result<(), TraceError> {
        let mut rest = data;
        while let Some(nl) = rest.iter().position(|&c| c == b'\n') {
            let (head, tail) = rest.split_at(nl);
            rest = tail.get(1..).unwrap_or(&[]);
            let end = self.consumed + (data.len() - rest.len()) as u64;
            let text = if self.pending.is_empty() {
                String::from_utf8_lossy(head).into_owned()
            } else {
                self.pending.extend_from_slice(head);
                let t = String::from_utf8_lossy(&self.pending).into_owned();
                self.pending.clear();
                t
            };
            self.line(p, &text, end);
        }
        self.pending.extend_from_slice(rest);
        self.consumed += data.len() as u64;
        Ok(())
    }

    fn held_bytes(&self) -> u64 {
        let events = (self.events.len() as u64).saturating_mul(std::mem::size_of::<Event>() as u64);
        events.saturating_add(self.pending.len() as u64)
    }

    /// The lines in time order (equal times in file order) become slices;
    /// a last line without a line break is not read, as upstream leaves it.
    fn finish(mut self: Box<Self>, p: &mut Parser) -> Result<(), TraceError> {
        self.events.sort_by_key(|e| e.ts);
        let strace = p.storage.strings.intern("strace");
        let args_key = p.storage.strings.intern("args");
        let ret_key = p.storage.strings.intern("ret");
        // Args of the slices still open, by slice id: written when they end.
        let mut open: HashMap<u32, ArgSetBuilder> = HashMap::default();
        let add = |b: &mut ArgSetBuilder, e: &Event| {
            if let Some(a) = e.args {
                b.add(args_key, args_key, ArgValue::String(a));
            }
            if let Some(r) = e.ret {
                b.add(ret_key, ret_key, ArgValue::String(r));
            }
        };
        for e in &self.events {
            p.storage.work.step(1);
            let utid = p
                .processes
                .get_or_create_thread(&mut p.storage, i64::from(e.tid));
            let track = p.tracks.thread_track(&mut p.storage, utid);
            let row = SliceRow {
                ts: e.ts,
                dur: -1,
                track_id: track,
                category: strace,
                name: e.name,
                ..Default::default()
            };
            if matches!(e.kind, Kind::Resumed | Kind::ResumedThenUnfinished) {
                if let Some(id) = p.slices.end(&mut p.storage, track, e.ts, None) {
                    let mut b = open.remove(&id).unwrap_or_default();
                    add(&mut b, e);
                    let set = p.storage.args.add_set(&b);
                    if let Some(s) = p.storage.slices.get_mut(id as usize) {
                        s.arg_set_id = set.into();
                    }
                }
            }
            match e.kind {
                Kind::Complete => {
                    let mut b = ArgSetBuilder::default();
                    add(&mut b, e);
                    let row = SliceRow {
                        dur: 0,
                        arg_set_id: p.storage.args.add_set(&b).into(),
                        ..row
                    };
                    p.slices.begin(&mut p.storage, row);
                }
                Kind::Unfinished | Kind::ResumedThenUnfinished => {
                    if let Some(id) = p.slices.begin(&mut p.storage, row) {
                        let mut b = ArgSetBuilder::default();
                        add(&mut b, e);
                        open.insert(id, b);
                    }
                }
                Kind::Resumed => {}
            }
        }
        // Calls still interrupted at the end keep the args of their start.
        let mut left: Vec<(u32, ArgSetBuilder)> = open.into_iter().collect();
        left.sort_by_key(|(id, _)| *id);
        for (id, b) in left {
            let set = p.storage.args.add_set(&b);
            if let Some(s) = p.storage.slices.get_mut(id as usize) {
                s.arg_set_id = set.into();
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::Loader;
    use crate::storage::Storage;

    const TEXT: &str = "1000 1700000000.000000 openat(AT_FDCWD, \"/etc/hosts\", O_RDONLY) = 3\n\
1000 1700000000.000100 futex(0x1, FUTEX_WAIT, 0 <unfinished ...>\n\
1234 1700000000.000200 write(1, \"hi\", 2) = 2\n\
--- SIGCHLD {si_signo=SIGCHLD} ---\n\
1700000000.000250 close(3) = 0\n\
10:00:00.000000 close(4) = 0\n\
1000 1700000000.000600 <... futex resumed>) = 0\n";

    fn load(step: usize) -> Storage {
        let mut l = Loader::new();
        for c in TEXT.as_bytes().chunks(step) {
            l.push(c).unwrap();
        }
        l.finish().unwrap()
    }

    fn args(st: &Storage, set: Option<u32>) -> Vec<(String, String)> {
        st.args
            .set(set.unwrap_or(u32::MAX))
            .map(|a| {
                let v = match a.value {
                    crate::storage::args::ArgValue::String(s) => st.strings.get(s).unwrap_or(""),
                    _ => "?",
                };
                (st.strings.get(a.key).unwrap_or("").to_owned(), v.to_owned())
            })
            .collect()
    }

    /// strace text loads: whole calls are instants with their args and
    /// return value, an interrupted call a slice to its resumption on
    /// its thread's track, and what is no syscall line of `-f -ttt` is
    /// counted by why; whatever the chunks.
    #[test]
    fn strace_lines_become_syscall_slices_on_their_threads() {
        for step in [TEXT.len(), 1, 7] {
            let st = load(step);
            let slices: Vec<(i64, i64, &str)> = st
                .slices
                .iter()
                .map(|s| (s.ts, s.dur, st.strings.get(s.name).unwrap_or("")))
                .collect();
            let t0 = 1_700_000_000_000_000_000;
            assert_eq!(
                slices,
                [
                    (t0, 0, "openat"),
                    (t0 + 100_000, 500_000, "futex"),
                    (t0 + 200_000, 0, "write")
                ]
            );
            let open = &st.slices[0];
            assert_eq!(
                args(&st, open.arg_set_id.get()),
                [
                    (
                        "args".to_owned(),
                        "AT_FDCWD, \"/etc/hosts\", O_RDONLY".to_owned()
                    ),
                    ("ret".to_owned(), "3".to_owned())
                ]
            );
            let futex = &st.slices[1];
            assert_eq!(
                args(&st, futex.arg_set_id.get()),
                [
                    ("args".to_owned(), "0x1, FUTEX_WAIT, 0".to_owned()),
                    ("ret".to_owned(), "0".to_owned())
                ]
            );
            assert_eq!(st.strings.get(futex.category), Some("strace"));
            let tid = |i: usize| {
                let track = &st.tracks[st.slices[i].track_id as usize];
                track.utid.map(|u| st.threads[u as usize].tid)
            };
            assert_eq!(
                (tid(0), tid(1), tid(2)),
                (Some(1000), Some(1000), Some(1234))
            );
            assert_eq!(st.stats.get("strace_parse_failure"), 1);
            assert_eq!(st.stats.get("strace_missing_pid"), 1);
            assert_eq!(st.stats.get("strace_unsupported_timestamp_format"), 1);
            // Each refused line is logged where it ends in the text.
            let ends: Vec<i64> = TEXT
                .match_indices('\n')
                .map(|(i, _)| i as i64 + 1)
                .collect();
            let logged: Vec<(&str, Option<i64>)> = st
                .import_logs
                .iter()
                .map(|r| {
                    (
                        crate::storage::stats::STATS[r.stat_key as usize].0,
                        r.byte_offset,
                    )
                })
                .collect();
            assert_eq!(
                logged,
                [
                    ("strace_parse_failure", Some(ends[3])),
                    ("strace_missing_pid", Some(ends[4])),
                    ("strace_unsupported_timestamp_format", Some(ends[5])),
                ],
                "step {step}"
            );
        }
    }
}

//! Systrace and ftrace text (what `atrace`, `adb shell atrace > out.txt`,
//! `trace-cmd report` and systrace's HTML pages hold), read line by line as
//! the bytes arrive, as Perfetto reads it: anything before a `TRACE:` line
//! and a `cpus=N` header are dropped, an HTML page's systrace section is
//! found between its `<script class="trace-data">` tags (its process dump
//! names processes and threads), `#` lines are comments. Each event line
//! (`line.rs`) is kept until the end of the trace, then the lines are
//! sorted by time and imported (`events.rs`) through the same importers
//! as protobuf ftrace events.

pub mod events;
pub mod line;

use crate::parser::Parser;
use crate::tracker::process::NamePriority;

use line::SystraceLine;

/// The section of the text being read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Nothing read yet.
    Before,
    /// An HTML page, outside a trace data section.
    HtmlBefore,
    /// Inside an HTML trace data section, before its content says what
    /// it is.
    TraceData,
    /// Event lines.
    Systrace,
    /// A process dump, long form (`USER PID PPID VSZ ...`).
    DumpLong,
    /// A process dump, short form (`USER PID TID CMD`).
    DumpShort,
    /// A cgroup dump (skipped).
    Cgroup,
    /// Past the systrace section of an HTML page.
    End,
}

/// The streaming reader of systrace text.
#[derive(Debug)]
pub struct SystraceLoad {
    state: State,
    /// Bytes of the line being read.
    pending: Vec<u8>,
    /// The event lines read.
    lines: Vec<SystraceLine>,
}

impl Default for SystraceLoad {
    fn default() -> Self {
        SystraceLoad {
            state: State::Before,
            pending: Vec::new(),
            lines: Vec::new(),
        }
    }
}

/// Whether `line` is a `cpus=<digits>` header.
fn is_cpus_header(line: &[u8]) -> bool {
    line.strip_prefix(b"cpus=")
        .is_some_and(|rest| rest.iter().all(u8::is_ascii_digit))
}

fn contains(hay: &str, needle: &str) -> bool {
    hay.contains(needle)
}

impl SystraceLoad {
    /// Memory held: the line being read and the lines kept.
    pub fn held_bytes(&self) -> u64 {
        let per_line = std::mem::size_of::<SystraceLine>() as u64;
        let text: u64 = self
            .lines
            .iter()
            .map(|l| (l.task.len() + l.tgid.len() + l.event.len() + l.args.len()) as u64)
            .sum();
        (self.pending.len() as u64)
            .saturating_add(per_line.saturating_mul(self.lines.len() as u64))
            .saturating_add(text)
    }

    /// Reads the next bytes; the first push holds at least the bytes the
    /// format was told by.
    pub fn push(&mut self, p: &mut Parser, data: &[u8]) {
        if self.state == State::End {
            return;
        }
        self.pending.extend_from_slice(data);
        if self.state == State::Before {
            self.start();
        }
        let buf = std::mem::take(&mut self.pending);
        let mut start = 0;
        while let Some(nl) = buf
            .get(start..)
            .and_then(|b| b.iter().position(|&c| c == b'\n'))
        {
            let line = buf.get(start..start + nl).unwrap_or(&[]);
            start += nl + 1;
            self.line(p, &String::from_utf8_lossy(line));
            if self.state == State::End {
                return;
            }
        }
        self.pending = buf.get(start..).unwrap_or(&[]).to_vec();
    }

    /// The first bytes: what comes before `TRACE:` and a `cpus=` header
    /// go; an HTML page is told.
    fn start(&mut self) {
        let look = self.pending.len().min(super::format::LOOKAHEAD);
        let marker = b"TRACE:\n";
        if let Some(i) = self
            .pending
            .get(..look)
            .and_then(|h| h.windows(marker.len()).position(|w| w == marker))
        {
            self.pending.drain(..i + marker.len());
        }
        if let Some(nl) = self.pending.iter().position(|&c| c == b'\n') {
            if is_cpus_header(self.pending.get(..nl).unwrap_or(&[])) {
                self.pending.drain(..=nl);
            }
        }
        self.state = if self.pending.first() == Some(&b'<') {
            State::HtmlBefore
        } else {
            State::Systrace
        };
    }

    /// One line of text.
    fn line(&mut self, p: &mut Parser, line: &str) {
        p.storage.work.step(1);
        match self.state {
            State::HtmlBefore => {
                if contains(
                    line,
                    r#"<script class="trace-data" type="application/text">"#,
                ) {
                    self.state = State::TraceData;
                }
            }
            State::TraceData => {
                if line.starts_with('#') && contains(line, "TASK-PID") {
                    self.state = State::Systrace;
                } else if line.starts_with("PROCESS DUMP") {
                    self.state = State::DumpLong;
                } else if line.starts_with("CGROUP DUMP") {
                    self.state = State::Cgroup;
                } else if contains(line, "</script>") {
                    self.state = State::HtmlBefore;
                }
            }
            State::Systrace => {
                if contains(line, "</script>") {
                    self.state = State::End;
                    return;
                }
                if line.starts_with('#') || line.is_empty() {
                    return;
                }
                match line::tokenize(line) {
                    Some(l) => self.lines.push(l),
                    None => p.storage.stats.incr("systrace_parse_failure"),
                }
            }
            State::DumpLong | State::DumpShort => {
                if contains(line, "</script>") {
                    self.state = State::HtmlBefore;
                    return;
                }
                self.dump_line(p, line);
            }
            State::Cgroup => {
                if contains(line, "</script>") {
                    self.state = State::HtmlBefore;
                }
            }
            State::Before | State::End => {}
        }
    }

    /// A line of an HTML page's process dump.
    fn dump_line(&mut self, p: &mut Parser, line: &str) {
        let tokens: Vec<&str> = line.split(' ').filter(|t| !t.is_empty()).collect();
        if tokens.len() == 4 && tokens[..] == ["USER", "PID", "TID", "CMD"] {
            self.state = State::DumpShort;
            return;
        }
        if tokens.len() > 4 && tokens[..4] == ["USER", "PID", "PPID", "VSZ"] {
            self.state = State::DumpLong;
            return;
        }
        let num = |i: usize| tokens.get(i).and_then(|t| t.parse::<u32>().ok());
        if self.state == State::DumpLong && tokens.len() >= 10 {
            let (Some(pid), Some(ppid)) = (num(1), num(2)) else {
                p.storage.stats.incr("systrace_parse_failure");
                return;
            };
            let parent = p
                .processes
                .get_or_create_process(&mut p.storage, i64::from(ppid));
            let upid = p
                .processes
                .get_or_create_process(&mut p.storage, i64::from(pid));
            let name = p
                .storage
                .strings
                .intern(tokens.get(8).copied().unwrap_or(""));
            if let Some(row) = p.storage.processes.get_mut(upid as usize) {
                row.parent_upid = Some(parent);
            }
            p.processes
                .set_process_name(&mut p.storage, upid, name, NamePriority::Other);
        } else if self.state == State::DumpShort && tokens.len() >= 4 {
            let (Some(tgid), Some(tid)) = (num(1), num(2)) else {
                p.storage.stats.incr("systrace_parse_failure");
                return;
            };
            // The command line may hold spaces: all from the fourth token.
            let cmd_at = line.find(tokens[3]).unwrap_or(0);
            let cmd = p.storage.strings.intern(line.get(cmd_at..).unwrap_or(""));
            let utid = p
                .processes
                .update_thread(&mut p.storage, i64::from(tid), i64::from(tgid));
            p.processes
                .set_thread_name(&mut p.storage, utid, cmd, NamePriority::Other);
        }
    }

    /// The lines read, in time order (the last line even without its
    /// newline).
    pub fn finish(mut self, p: &mut Parser) -> Vec<SystraceLine> {
        if !self.pending.is_empty() && self.state != State::End {
            let last = std::mem::take(&mut self.pending);
            self.line(p, &String::from_utf8_lossy(&last));
        }
        let mut lines = std::mem::take(&mut self.lines);
        lines.sort_by_key(|l| l.ts);
        lines
    }
}

/// Imports lines in time order.
pub fn import(p: &mut Parser, lines: &[SystraceLine]) {
    for l in lines {
        events::import(p, l);
        p.storage.work.step(1);
    }
}

#[cfg(test)]
mod tests {
    use crate::Loader;
    use crate::storage::Storage;
    use crate::storage::args::ArgValue;

    const TEXT: &str = "TRACE:\n# tracer: nop\n#\n\
#           TASK-PID    TGID   CPU#  ||||    TIMESTAMP  FUNCTION\n\
          <idle>-0     (-----) [000] d..3     1.000000: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=app next_pid=42 next_prio=110\n\
             app-42    (   40) [000] ...1     1.000100: tracing_mark_write: B|40|work\n\
             app-42    (   40) [000] ...1     1.000300: tracing_mark_write: E|40\n\
             app-42    (   40) [000] d..3     1.000500: sched_blocked_reason: pid=42 iowait=1 caller=io_schedule\n\
             app-42    (   40) [000] d..3     1.000400: sched_switch: prev_comm=app prev_pid=42 prev_prio=110 prev_state=D ==> next_comm=swapper/0 next_pid=0 next_prio=120\n\
           <...>-43    (   40) [001] ...1     1.000600: cpu_frequency: state=300000 cpu_id=1";

    fn load(step: usize) -> Storage {
        let mut l = Loader::new();
        for c in TEXT.as_bytes().chunks(step) {
            l.push(c).unwrap();
        }
        l.finish().unwrap()
    }

    /// Systrace text loads through the ftrace importers: a CPU's runs
    /// from its switches (the lines sorted by time), the task names its
    /// thread and the tgid its process, atrace slices from the marker
    /// writes, the blocked reason on the thread's sleep, a CPU frequency
    /// counter; whatever the chunks.
    #[test]
    fn systrace_lines_fill_sched_slices_states_and_atrace_slices() {
        for step in [TEXT.len(), 1, 50] {
            let st = load(step);
            let runs: Vec<(i64, i64)> = st.sched.slices.iter().map(|s| (s.ts, s.dur)).collect();
            assert!(runs.contains(&(1_000_000_000, 400_000)), "{runs:?}");
            let app = st.threads.iter().find(|t| t.tid == 42).unwrap();
            assert_eq!(st.strings.get(app.name), Some("app"));
            let upid = app.upid.unwrap() as usize;
            assert_eq!(st.processes[upid].pid, 40);
            let slice = st
                .slices
                .iter()
                .find(|s| st.strings.get(s.name) == Some("work"));
            assert_eq!(slice.map(|s| (s.ts, s.dur)), Some((1_000_100_000, 200_000)));
            let sleep = st
                .sched
                .thread_states
                .iter()
                .find(|s| st.strings.get(s.state) == Some("D"))
                .unwrap();
            assert_eq!(st.strings.get(sleep.blocked_function), Some("io_schedule"));
            assert_eq!(sleep.io_wait, Some(true));
            assert!(st.counters.iter().any(|c| c.value == 300_000.0));
        }
    }

    fn load_text(text: &str) -> Storage {
        let mut l = Loader::new();
        l.push(text.as_bytes()).unwrap();
        l.finish().unwrap()
    }

    fn slices(st: &Storage) -> Vec<(String, i64, i64, i64)> {
        let mut v: Vec<_> = st
            .slices
            .iter()
            .map(|s| {
                let track = &st.tracks[s.track_id as usize];
                let utid = track.utid.unwrap() as usize;
                (
                    st.strings.get(s.name).unwrap().to_string(),
                    st.threads[utid].tid,
                    s.ts,
                    s.dur,
                )
            })
            .collect();
        v.sort_by_key(|s| s.2);
        v
    }

    /// A synchronous binder call in systrace text: the caller's `binder
    /// transaction` from its send to the reply's arrival, the callee's
    /// `binder reply` from the arrival to its reply, a flow from the first
    /// to the second, and the transaction's args with the callee's thread.
    #[test]
    fn a_binder_call_is_a_transaction_and_a_reply_joined_by_a_flow() {
        let text = "# tracer: nop\n\
 caller-100  [001] ..... 50.000010: binder_command: cmd=0x40406300 BC_TRANSACTION\n\
 caller-100  [001] ..... 50.000020: binder_transaction: transaction=7 dest_node=3 dest_proc=200 dest_thread=0 reply=0 flags=0x10 code=0x5\n\
 callee-200  [002] ..... 50.000050: binder_transaction_received: transaction=7\n\
 callee-200  [002] ..... 50.000051: binder_return: cmd=0x80407202 BR_TRANSACTION\n\
 callee-200  [002] ..... 50.000070: binder_command: cmd=0x40406301 BC_REPLY\n\
 callee-200  [002] ..... 50.000080: binder_transaction: transaction=8 dest_node=0 dest_proc=100 dest_thread=100 reply=1 flags=0x0 code=0x5\n\
 callee-200  [002] ..... 50.000085: binder_return: cmd=0x7206 BR_TRANSACTION_COMPLETE\n\
 caller-100  [001] ..... 50.000090: binder_return: cmd=0x7206 BR_TRANSACTION_COMPLETE\n\
 caller-100  [001] ..... 50.000100: binder_transaction_received: transaction=8\n\
 caller-100  [001] ..... 50.000101: binder_return: cmd=0x80407203 BR_REPLY\n";
        let st = load_text(text);
        assert_eq!(
            slices(&st),
            vec![
                (
                    "binder transaction".to_string(),
                    100,
                    50_000_020_000,
                    80_000
                ),
                ("binder reply".to_string(), 200, 50_000_050_000, 30_000),
            ]
        );
        assert_eq!(st.flows.len(), 1);
        assert_eq!((st.flows[0].slice_out, st.flows[0].slice_in), (0, 1));
        let args: Vec<(String, String)> = st
            .args
            .set(st.slices[0].arg_set_id.get().unwrap())
            .map(|a| {
                let v = match a.value {
                    ArgValue::String(s) => st.strings.get(s).unwrap().to_string(),
                    v => format!("{v:?}"),
                };
                (st.strings.get(a.key).unwrap().to_string(), v)
            })
            .collect();
        let get = |k: &str| {
            args.iter()
                .find(|(key, _)| key == k)
                .map(|(_, v)| v.as_str())
        };
        assert_eq!(get("transaction id"), Some("Int(7)"));
        assert_eq!(
            get("flags"),
            Some("0x10 allow replies with file descriptors; ")
        );
        assert_eq!(get("code"), Some("0x5 Java Layer Dependent"));
        assert_eq!(get("destination thread"), Some("Uint(200)"));
        assert_eq!(get("destination name"), Some("callee"));
        assert_eq!(get("calling tid"), Some("Uint(100)"));
    }

    /// A failed reply still ends the caller's transaction; a one-way call
    /// is two instants.
    #[test]
    fn a_failed_binder_call_ends_and_a_one_way_call_is_two_instants() {
        let text = "# tracer: nop\n\
 caller-100  [001] ..... 50.000010: binder_command: cmd=0x40406300 BC_TRANSACTION\n\
 caller-100  [001] ..... 50.000020: binder_transaction: transaction=7 dest_node=3 dest_proc=200 dest_thread=0 reply=0 flags=0x0 code=0x5\n\
 caller-100  [001] ..... 50.000300: binder_return: cmd=0x7211 BR_FAILED_REPLY\n\
 caller-101  [001] ..... 50.000400: binder_command: cmd=0x40406300 BC_TRANSACTION\n\
 caller-101  [001] ..... 50.000410: binder_transaction: transaction=9 dest_node=3 dest_proc=200 dest_thread=0 reply=0 flags=0x1 code=0x5\n\
 caller-101  [001] ..... 50.000420: binder_return: cmd=0x7206 BR_TRANSACTION_COMPLETE\n\
 callee-200  [002] ..... 50.000500: binder_transaction_received: transaction=9\n";
        let st = load_text(text);
        assert_eq!(
            slices(&st),
            vec![
                (
                    "binder transaction".to_string(),
                    100,
                    50_000_020_000,
                    280_000
                ),
                (
                    "binder transaction async".to_string(),
                    101,
                    50_000_410_000,
                    0
                ),
                ("binder async rcv".to_string(), 200, 50_000_500_000, 0),
            ]
        );
        assert_eq!(st.flows.len(), 1);
    }
}

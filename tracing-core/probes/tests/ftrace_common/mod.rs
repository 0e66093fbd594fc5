//! What the ftrace tests share: recording a known workload into a dedicated
//! tracefs instance (raw per-CPU pages plus the kernel's own text output of
//! the same buffer), loading and saving such a recording as fixtures, and
//! checking every event our parser reads against the kernel's text line.
//!
//! Each test binary uses part of this module, hence the `dead_code` allow.
#![allow(dead_code)]

use std::collections::HashMap;
use std::fs;
use std::io::{ErrorKind, Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
pub mod read_back;
pub mod tracecmd;

use zerotrace_probes::ftrace::{
    EventFormat, FormatTable, HeaderPage, MissedEvents, PageLayout, Value,
};

/// Where tracefs is mounted (or gets mounted).
pub const TRACEFS: &str = "/sys/kernel/tracing";

/// The events a recording enables (`group/name`).
pub const EVENTS: &[&str] = &[
    "sched/sched_switch",
    "sched/sched_waking",
    "sched/sched_wakeup",
    "sched/sched_wakeup_new",
    "sched/sched_process_fork",
    "sched/sched_process_exec",
    "sched/sched_process_exit",
    "task/task_newtask",
    "ftrace/print",
    "irq/irq_handler_entry",
    "irq/irq_handler_exit",
    "irq/softirq_entry",
    "irq/softirq_exit",
    "raw_syscalls/sys_enter",
    "raw_syscalls/sys_exit",
];

/// Events filtered to the recording thread's own pid (they would flood
/// the buffer otherwise).
const OWN_PID_ONLY: &[&str] = &["raw_syscalls/sys_enter", "raw_syscalls/sys_exit"];

/// The calling thread's id, from `/proc/thread-self` (`PID/task/TID`).
fn own_tid() -> Result<String, String> {
    let link = fs::read_link("/proc/thread-self").map_err(|e| format!("/proc/thread-self: {e}"))?;
    link.file_name()
        .and_then(|n| n.to_str())
        .map(str::to_owned)
        .ok_or_else(|| "bad /proc/thread-self".to_owned())
}

/// One recording: the layouts, the raw pages per CPU and the kernel's text.
pub struct Recording {
    /// `events/header_page`.
    pub header_page: String,
    /// `(group/name, format text)` for every enabled event.
    pub formats: Vec<(String, String)>,
    /// The bytes read from `per_cpu/cpuN/trace_pipe_raw`, by CPU.
    pub raw: Vec<Vec<u8>>,
    /// The instance's `trace` file, read before the raw pages.
    pub text: String,
    /// `saved_cmdlines` (the kernel's pid → comm cache the text uses), read
    /// just after the text.
    pub cmdlines: String,
    /// `saved_cmdlines` read just before the text. The cache is global and
    /// changes under us (any instance's sched_switch adds to it, new tasks
    /// evict), so the text's comm column must match one of the two reads.
    pub cmdlines_before: String,
    /// The sub-buffer size the pages were read with.
    pub subbuf_size: usize,
    /// `uname -r` of the recording kernel.
    pub kernel: String,
    /// The sum over CPUs of `per_cpu/cpuN/stats`' `overrun` (events the
    /// writer overwrote before they were read), read before the raw pages.
    pub overrun: u64,
}

/// What a recording runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Workload {
    /// The ping-pong threads, a spawned process and markers, in a buffer
    /// large enough to lose nothing.
    Normal,
    /// 2000 markers into an 8 KiB-per-CPU buffer in overwrite mode, so the
    /// writer overwrites unread pages and the first page read carries the
    /// missed-events flags and count.
    Overflow,
}

/// Makes tracefs available: mounted already, or mounted now. `Err` says why not.
pub fn tracefs() -> Result<PathBuf, String> {
    let root = Path::new(TRACEFS);
    if root.join("events/header_page").exists() {
        return Ok(root.to_path_buf());
    }
    if !root.exists() {
        return Err(format!("{TRACEFS} does not exist"));
    }
    let status = std::process::Command::new("mount")
        .args(["-t", "tracefs", "nodev", TRACEFS])
        .stderr(std::process::Stdio::null())
        .status()
        .map_err(|e| format!("cannot run mount: {e}"))?;
    if status.success() && root.join("events/header_page").exists() {
        Ok(root.to_path_buf())
    } else {
        Err(format!(
            "tracefs is not mounted at {TRACEFS} and mounting it failed (not root?)"
        ))
    }
}

/// A tracefs instance of our own, removed when dropped (also on panic).
pub struct Instance {
    /// Its directory.
    pub dir: PathBuf,
}

impl Instance {
    /// Creates `instances/<name>`.
    pub fn create(root: &Path, name: &str) -> Result<Self, String> {
        let dir = root.join("instances").join(name);
        fs::create_dir(&dir).map_err(|e| format!("mkdir {}: {e}", dir.display()))?;
        Ok(Instance { dir })
    }

    /// Writes `value` to the instance file `rel`.
    pub fn write(&self, rel: &str, value: &str) -> Result<(), String> {
        let p = self.dir.join(rel);
        let mut f = fs::OpenOptions::new()
            .write(true)
            .open(&p)
            .map_err(|e| format!("open {}: {e}", p.display()))?;
        f.write_all(value.as_bytes())
            .map_err(|e| format!("write {}: {e}", p.display()))
    }

    /// Reads the instance file `rel` as text.
    pub fn read(&self, rel: &str) -> Result<String, String> {
        read_text(&self.dir.join(rel))
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        let _ = self.write("tracing_on", "0");
        let _ = self.write("events/enable", "0");
        if let Err(e) = fs::remove_dir(&self.dir) {
            eprintln!("could not remove {}: {e}", self.dir.display());
        }
    }
}

/// Reads a tracefs text file with large reads. `fs::read_to_string` is not
/// enough: it starts with a 32-byte probe read, and `events/header_page`
/// answers a read that does not start at offset 0 with end-of-file.
pub fn read_text(path: &Path) -> Result<String, String> {
    let mut f = fs::File::open(path).map_err(|e| format!("open {}: {e}", path.display()))?;
    let mut out = Vec::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        match f.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(format!("read {}: {e}", path.display())),
        }
    }
    String::from_utf8(out).map_err(|e| format!("{}: {e}", path.display()))
}

/// Reads every page of one CPU's `trace_pipe_raw` without blocking.
fn read_raw(path: &Path, subbuf: usize) -> Result<Vec<u8>, String> {
    // O_NONBLOCK on Linux.
    let mut f = fs::OpenOptions::new()
        .read(true)
        .custom_flags(0o4000)
        .open(path)
        .map_err(|e| format!("open {}: {e}", path.display()))?;
    let mut out = Vec::new();
    let mut buf = vec![0u8; subbuf];
    loop {
        match f.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                // trace_pipe_raw hands out whole sub-buffers; pad a short read.
                let mut page = buf[..n].to_vec();
                page.resize(subbuf, 0);
                out.extend_from_slice(&page);
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => break,
            Err(e) => return Err(format!("read {}: {e}", path.display())),
        }
    }
    Ok(out)
}

/// Two named threads ping-ponging through pipes, a spawned process (fork,
/// exec, exit) and `trace_marker` writes, with the instance recording.
pub fn workload(inst: &Instance) -> Result<(), String> {
    inst.write("trace_marker", "zt-begin")?;
    let (mut a_tx, mut b_rx) = pipe()?;
    let (mut b_tx, mut a_rx) = pipe()?;
    let pong = std::thread::Builder::new()
        .name("zt-pong".into())
        .spawn(move || {
            let mut byte = [0u8; 1];
            for _ in 0..ROUND_TRIPS {
                if b_rx.read_exact(&mut byte).is_err() || b_tx.write_all(&byte).is_err() {
                    break;
                }
            }
        })
        .map_err(|e| format!("spawn: {e}"))?;
    let ping = std::thread::Builder::new()
        .name("zt-ping".into())
        .spawn(move || {
            let mut byte = [7u8; 1];
            for _ in 0..ROUND_TRIPS {
                if a_tx.write_all(&byte).is_err() || a_rx.read_exact(&mut byte).is_err() {
                    break;
                }
            }
        })
        .map_err(|e| format!("spawn: {e}"))?;
    let _ = ping.join();
    let _ = pong.join();
    let status = std::process::Command::new("/bin/true")
        .status()
        .map_err(|e| format!("spawn /bin/true: {e}"))?;
    if !status.success() {
        return Err("/bin/true failed".into());
    }
    // Idle long enough for a time delta past 27 bits (a time-extend record).
    std::thread::sleep(std::time::Duration::from_millis(300));
    inst.write(
        "trace_marker",
        "zt-end with a longer marker text, spaces and : colons\n",
    )?;
    // Longer than the 112 bytes a record's type_len can size: its length
    // goes into the array word.
    inst.write(
        "trace_marker",
        &format!("zt-long {}", "0123456789".repeat(20)),
    )?;
    Ok(())
}

/// How many times the two threads wake each other.
const ROUND_TRIPS: usize = 150;

/// A connected byte channel as two files: a socket pair, which blocks and
/// wakes its reader exactly as a pipe does (`std::io::pipe` is newer than
/// the workspace's minimum Rust).
fn pipe() -> Result<(fs::File, fs::File), String> {
    let (a, b) = std::os::unix::net::UnixStream::pair().map_err(|e| format!("socketpair: {e}"))?;
    let a: std::os::fd::OwnedFd = a.into();
    let b: std::os::fd::OwnedFd = b.into();
    Ok((fs::File::from(a), fs::File::from(b)))
}

/// Markers enough to overwrite an 8 KiB buffer several times.
fn overflow_workload(inst: &Instance) -> Result<(), String> {
    let p = inst.dir.join("trace_marker");
    let mut f = fs::OpenOptions::new()
        .write(true)
        .open(&p)
        .map_err(|e| format!("open {}: {e}", p.display()))?;
    for i in 0..2000 {
        // 14 bytes: with the kernel's newline and NUL a 36-byte record,
        // 113 of which leave 12 bytes of a 4080-byte page free, room for
        // the stored missed-events count (a full page has none, and the
        // count is then only flagged).
        f.write_all(format!("zt-ovf {i:07}").as_bytes())
            .map_err(|e| format!("write {}: {e}", p.display()))?;
    }
    Ok(())
}

/// The kernel's overrun count of `inst`, summed over its CPUs.
pub fn overruns(inst: &Instance) -> Result<u64, String> {
    let mut overrun = 0;
    let mut cpu = 0;
    while let Ok(stats) = inst.read(&format!("per_cpu/cpu{cpu}/stats")) {
        overrun += stats
            .lines()
            .find_map(|l| l.strip_prefix("overrun:"))
            .and_then(|v| v.trim().parse::<u64>().ok())
            .ok_or_else(|| format!("no overrun in cpu{cpu}/stats"))?;
        cpu += 1;
    }
    Ok(overrun)
}

/// Records the normal workload into a fresh instance called `name`.
pub fn record(name: &str) -> Result<Recording, String> {
    record_workload(name, Workload::Normal)
}

/// Records `workload` into a fresh instance called `name`.
pub fn record_workload(name: &str, workload_kind: Workload) -> Result<Recording, String> {
    // One recording at a time in this binary: the tests' instances would
    // otherwise change each other's view of the global saved_cmdlines.
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let root = tracefs()?;
    let inst = Instance::create(&root, name)?;
    inst.write("tracing_on", "0")?;
    inst.write("trace_clock", "boot")?;
    let normal = workload_kind == Workload::Normal;
    inst.write("buffer_size_kb", if normal { "512" } else { "8" })?;
    for ev in EVENTS.iter().filter(|_| normal) {
        // `ftrace/*` events (trace_marker's `print`) have no enable file:
        // they are recorded whenever their source writes.
        if OWN_PID_ONLY.contains(ev) {
            inst.write(
                &format!("events/{ev}/filter"),
                &format!("common_pid == {}", own_tid()?),
            )?;
        }
        if !ev.starts_with("ftrace/") {
            inst.write(&format!("events/{ev}/enable"), "1")?;
        }
    }
    let subbuf_size = match inst.read("buffer_subbuf_size_kb") {
        Ok(kb) => {
            kb.trim()
                .parse::<usize>()
                .map_err(|e| format!("subbuf size: {e}"))?
                * 1024
        }
        Err(_) => 4096,
    };
    inst.write("trace", "")?;
    inst.write("tracing_on", "1")?;
    let run = if normal {
        workload(&inst)
    } else {
        overflow_workload(&inst)
    };
    inst.write("tracing_on", "0")?;
    run?;
    let cmdlines_before = read_text(&root.join("saved_cmdlines"))?;
    let text = inst.read("trace")?;
    let cmdlines = read_text(&root.join("saved_cmdlines"))?;
    let overrun = overruns(&inst)?;
    let mut raw = Vec::new();
    let mut cpu = 0;
    loop {
        let p = inst.dir.join(format!("per_cpu/cpu{cpu}/trace_pipe_raw"));
        if !p.exists() {
            break;
        }
        raw.push(read_raw(&p, subbuf_size)?);
        cpu += 1;
    }
    let header_page = read_text(&root.join("events/header_page"))?;
    let mut formats = Vec::new();
    for ev in EVENTS {
        let t = inst.read(&format!("events/{ev}/format"))?;
        formats.push(((*ev).to_owned(), t));
    }
    let kernel = fs::read_to_string("/proc/sys/kernel/osrelease")
        .unwrap_or_default()
        .trim()
        .to_owned();
    drop(inst);
    Ok(Recording {
        header_page,
        formats,
        raw,
        text,
        cmdlines,
        cmdlines_before,
        subbuf_size,
        kernel,
        overrun,
    })
}

/// The fixture directory.
pub fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ftrace")
}

impl Recording {
    /// Writes the recording as fixture files under `dir`.
    pub fn save(&self, dir: &Path) -> std::io::Result<()> {
        if dir.join("events").exists() {
            fs::remove_dir_all(dir.join("events"))?;
        }
        for entry in fs::read_dir(dir)? {
            let p = entry?.path();
            if p.extension().is_some_and(|e| e == "raw") {
                fs::remove_file(p)?;
            }
        }
        fs::write(dir.join("header_page"), &self.header_page)?;
        for (ev, text) in &self.formats {
            let d = dir.join("events").join(ev);
            fs::create_dir_all(&d)?;
            fs::write(d.join("format"), text)?;
        }
        for (cpu, bytes) in self.raw.iter().enumerate() {
            fs::write(dir.join(format!("cpu{cpu}.raw")), bytes)?;
        }
        fs::write(dir.join("trace.txt"), &self.text)?;
        fs::write(dir.join("saved_cmdlines"), &self.cmdlines)?;
        fs::write(
            dir.join("meta"),
            format!(
                "kernel {}\nsubbuf_size {}\ncpus {}\noverrun {}\n",
                self.kernel,
                self.subbuf_size,
                self.raw.len(),
                self.overrun
            ),
        )
    }

    /// Loads a recording saved by [`Recording::save`].
    pub fn load(dir: &Path) -> std::io::Result<Self> {
        let meta = fs::read_to_string(dir.join("meta"))?;
        let get = |key: &str| {
            meta.lines()
                .find_map(|l| l.strip_prefix(key).map(|v| v.trim().to_owned()))
                .unwrap_or_default()
        };
        let cpus: usize = get("cpus ").parse().unwrap_or(0);
        let subbuf_size: usize = get("subbuf_size ").parse().unwrap_or(4096);
        let mut formats = Vec::new();
        for ev in EVENTS {
            let p = dir.join("events").join(ev).join("format");
            formats.push(((*ev).to_owned(), fs::read_to_string(p)?));
        }
        let mut raw = Vec::new();
        for cpu in 0..cpus {
            raw.push(fs::read(dir.join(format!("cpu{cpu}.raw")))?);
        }
        Ok(Recording {
            header_page: fs::read_to_string(dir.join("header_page"))?,
            formats,
            raw,
            text: fs::read_to_string(dir.join("trace.txt"))?,
            cmdlines: fs::read_to_string(dir.join("saved_cmdlines"))?,
            cmdlines_before: fs::read_to_string(dir.join("saved_cmdlines"))?,
            subbuf_size,
            kernel: get("kernel "),
            overrun: get("overrun ").parse().unwrap_or(0),
        })
    }

    /// The format table and page layout of this recording.
    pub fn layout(&self) -> (FormatTable, PageLayout) {
        let mut table = FormatTable::new();
        for (ev, text) in &self.formats {
            let f = EventFormat::parse(text).unwrap_or_else(|e| panic!("{ev}: {e}"));
            table.insert(f).expect("insert format");
        }
        let header = HeaderPage::parse(&self.header_page).expect("header_page");
        let ct = table.common_type().expect("common_type").clone();
        let layout = PageLayout::new(&header, self.subbuf_size, &ct).expect("layout");
        (table, layout)
    }
}

/// One event as the kernel's text shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextEvent {
    /// `comm` column.
    pub comm: String,
    /// `pid` column.
    pub pid: i64,
    /// CPU.
    pub cpu: usize,
    /// Timestamp in µs (the text's `secs.usecs`).
    pub ts_us: u64,
    /// Event name.
    pub name: String,
    /// Everything after `name: `.
    pub fields: String,
}

/// Parses the kernel's `trace` text; also returns the number of
/// `[LOST n EVENTS]` lines.
pub fn parse_text(text: &str) -> (Vec<TextEvent>, usize) {
    let mut out = Vec::new();
    let mut lost = 0;
    for line in text.lines() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        if line.contains("[LOST") {
            lost += 1;
            continue;
        }
        let open = line
            .find(" [")
            .unwrap_or_else(|| panic!("no cpu in {line:?}"));
        let close = open + line[open..].find(']').expect("]");
        let task = line[..open].trim_start();
        let dash = task.rfind('-').expect("comm-pid");
        let comm = task[..dash].to_owned();
        let pid = task[dash + 1..].trim().parse().expect("pid");
        let cpu = line[open + 2..close].parse().expect("cpu");
        let rest = line[close + 1..].trim_start();
        // Skip the irq-flags column, then `secs.usecs: `.
        let rest = rest.split_once(' ').expect("flags").1.trim_start();
        let (ts, rest) = rest.split_once(": ").expect("ts");
        let (secs, usecs) = ts.split_once('.').expect("secs.usecs");
        let ts_us =
            secs.parse::<u64>().expect("secs") * 1_000_000 + usecs.parse::<u64>().expect("usecs");
        let (name, fields) = match rest.split_once(": ") {
            Some((n, f)) => (n.to_owned(), f.to_owned()),
            None => (rest.trim_end_matches(':').to_owned(), String::new()),
        };
        out.push(TextEvent {
            comm,
            pid,
            cpu,
            ts_us,
            name,
            fields,
        });
    }
    (out, lost)
}

/// `saved_cmdlines` as a map.
fn parse_cmdlines(text: &str) -> HashMap<i64, String> {
    text.lines()
        .filter_map(|l| {
            let (pid, comm) = l.split_once(' ')?;
            Some((pid.parse().ok()?, comm.to_owned()))
        })
        .collect()
}

/// A string field as text.
fn s(v: Value<'_>) -> String {
    String::from_utf8_lossy(v.as_bytes().expect("string field")).into_owned()
}

/// An integer field.
fn i(v: Value<'_>) -> i64 {
    v.as_i64().expect("int field")
}

/// The `prev_state` letters as sched_switch's print fmt renders them.
pub fn prev_state(state: i64) -> String {
    const LETTERS: [&str; 8] = ["S", "D", "T", "t", "X", "Z", "P", "I"];
    let masked = state & 0xff;
    let mut out = if masked == 0 {
        "R".to_owned()
    } else {
        LETTERS
            .iter()
            .enumerate()
            .filter(|(bit, _)| masked & (1 << bit) != 0)
            .map(|(_, l)| *l)
            .collect::<Vec<_>>()
            .join("|")
    };
    if state & 0x100 != 0 {
        out.push('+');
    }
    out
}

/// The kernel's text for the fields of the events whose print fmt we know,
/// built from our decoded values; `None` for the others.
fn render(ev: &zerotrace_probes::ftrace::Event<'_>) -> Option<String> {
    let f = |n: &str| ev.field(n).unwrap_or_else(|e| panic!("{}: {e}", ev.name()));
    Some(match ev.name() {
        "sched_switch" => format!(
            "prev_comm={} prev_pid={} prev_prio={} prev_state={} ==> next_comm={} next_pid={} next_prio={}",
            s(f("prev_comm")),
            i(f("prev_pid")),
            i(f("prev_prio")),
            prev_state(i(f("prev_state"))),
            s(f("next_comm")),
            i(f("next_pid")),
            i(f("next_prio"))
        ),
        "sched_waking" | "sched_wakeup" | "sched_wakeup_new" => format!(
            "comm={} pid={} prio={} target_cpu={:03}",
            s(f("comm")),
            i(f("pid")),
            i(f("prio")),
            i(f("target_cpu"))
        ),
        "sched_process_fork" => format!(
            "comm={} pid={} child_comm={} child_pid={}",
            s(f("parent_comm")),
            i(f("parent_pid")),
            s(f("child_comm")),
            i(f("child_pid"))
        ),
        "sched_process_exec" => format!(
            "filename={} pid={} old_pid={}",
            s(f("filename")),
            i(f("pid")),
            i(f("old_pid"))
        ),
        "sched_process_exit" => format!(
            "comm={} pid={} prio={} group_dead={}",
            s(f("comm")),
            i(f("pid")),
            i(f("prio")),
            if i(f("group_dead")) != 0 {
                "true"
            } else {
                "false"
            }
        ),
        "task_newtask" => format!(
            "pid={} comm={} clone_flags={:x} oom_score_adj={}",
            i(f("pid")),
            s(f("comm")),
            f("clone_flags").as_u64().expect("int"),
            i(f("oom_score_adj"))
        ),
        "irq_handler_entry" => format!("irq={} name={}", i(f("irq")), s(f("name"))),
        "irq_handler_exit" => format!(
            "irq={} ret={}",
            i(f("irq")),
            if i(f("ret")) != 0 {
                "handled"
            } else {
                "unhandled"
            }
        ),
        "softirq_entry" | "softirq_exit" => {
            const VEC: [&str; 10] = [
                "HI", "TIMER", "NET_TX", "NET_RX", "BLOCK", "IRQ_POLL", "TASKLET", "SCHED",
                "HRTIMER", "RCU",
            ];
            let v = i(f("vec"));
            format!(
                "vec={v} [action={}]",
                VEC.get(v as usize).copied().unwrap_or("?")
            )
        }
        "sys_enter" => {
            let args = f("args");
            let words: Vec<String> = args
                .as_bytes()
                .expect("array")
                .chunks(8)
                .map(|c| format!("{:x}", u64::from_le_bytes(c.try_into().expect("8 bytes"))))
                .collect();
            format!("NR {} ({})", i(f("id")), words.join(", "))
        }
        "sys_exit" => format!("NR {} = {}", i(f("id")), i(f("ret"))),
        _ => return None,
    })
}

/// What a comparison covered.
#[derive(Debug, Default)]
pub struct Compared {
    /// Events matched against a text line.
    pub events: usize,
    /// Of those, events whose whole field text was compared.
    pub fields_rendered: usize,
    /// `print` events compared (their buf exactly).
    pub prints: usize,
    /// Events by name.
    pub by_name: HashMap<String, usize>,
    /// Pages read.
    pub pages: usize,
    /// Sum of the missed-events counts the pages stored.
    pub missed: u64,
    /// Pages flagged with missed events but no count.
    pub missed_unknown: usize,
}

/// Parses the raw pages and checks every event against the kernel's text:
/// same per-CPU sequence and count; cpu, µs timestamp, pid, comm, name and
/// (for the events we render) the field text; `print` buf exactly.
pub fn compare(rec: &Recording) -> Result<Compared, String> {
    let (table, layout) = rec.layout();
    let cmdlines = parse_cmdlines(&rec.cmdlines);
    let cmdlines_before = parse_cmdlines(&rec.cmdlines_before);
    let (text_events, _lost) = parse_text(&rec.text);
    let mut cmp = Compared::default();
    for (cpu, bytes) in rec.raw.iter().enumerate() {
        let expected: Vec<&TextEvent> = text_events.iter().filter(|e| e.cpu == cpu).collect();
        let mut n = 0;
        for page in layout.pages(bytes) {
            let page = page.map_err(|e| format!("cpu{cpu}: page: {e}"))?;
            cmp.pages += 1;
            match page.missed {
                MissedEvents::None => {}
                MissedEvents::Unknown => cmp.missed_unknown += 1,
                MissedEvents::Count(n) => cmp.missed += n,
            }
            for rec in page.records() {
                let rec = rec.map_err(|e| format!("cpu{cpu}: record: {e}"))?;
                let ev = table.decode(&rec).map_err(|e| format!("cpu{cpu}: {e}"))?;
                let Some(want) = expected.get(n) else {
                    return Err(format!(
                        "cpu{cpu}: more events than the text has ({})",
                        expected.len()
                    ));
                };
                n += 1;
                let ctx = || format!("cpu{cpu} event {n}: text {want:?}");
                let us = (rec.timestamp + 500) / 1000;
                if us != want.ts_us {
                    return Err(format!("{}: our ts {} ns", ctx(), rec.timestamp));
                }
                // The text shows `print` as `<ip symbol>: <buf>`, without
                // the event name.
                if ev.name() != want.name && ev.name() != "print" {
                    return Err(format!("{}: our name {}", ctx(), ev.name()));
                }
                let pid = ev.pid().map_err(|e| e.to_string())?;
                if pid != want.pid {
                    return Err(format!("{}: our pid {pid}", ctx()));
                }
                let lookup = |map: &HashMap<i64, String>| {
                    if pid == 0 {
                        "<idle>".to_owned()
                    } else {
                        map.get(&pid).cloned().unwrap_or_else(|| "<...>".to_owned())
                    }
                };
                let (after, before) = (lookup(&cmdlines), lookup(&cmdlines_before));
                if after != want.comm && before != want.comm {
                    return Err(format!(
                        "{}: comm from saved_cmdlines {after:?} (before the text: {before:?})",
                        ctx()
                    ));
                }
                // Every field of every event decodes.
                for (field, value) in ev.fields() {
                    value.map_err(|e| format!("{}: field {}: {e}", ctx(), field.name))?;
                }
                if ev.name() == "print" {
                    let buf = s(ev.field("buf").map_err(|e| e.to_string())?);
                    if buf.strip_suffix('\n').unwrap_or(&buf) != want.fields {
                        return Err(format!("{}: our buf {buf:?}", ctx()));
                    }
                    cmp.prints += 1;
                } else if let Some(fields) = render(&ev) {
                    if fields != want.fields {
                        return Err(format!("{}: our fields {fields:?}", ctx()));
                    }
                    cmp.fields_rendered += 1;
                }
                *cmp.by_name.entry(ev.name().to_owned()).or_default() += 1;
                cmp.events += 1;
            }
        }
        if n != expected.len() {
            return Err(format!(
                "cpu{cpu}: we read {n} events, the text has {}",
                expected.len()
            ));
        }
    }
    if cmp.events != text_events.len() {
        return Err(format!(
            "{} events read, the text has {}",
            cmp.events,
            text_events.len()
        ));
    }
    Ok(cmp)
}

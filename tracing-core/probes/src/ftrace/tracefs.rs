//! The I/O side of `linux.ftrace`: a tracefs mount found (or mounted), one
//! of its instances (the top level or an existing secondary one), its files
//! read with bounded reads into typed errors, and the [`Write`]s of the
//! session state machine ([`super::session`]) applied to it. Every path is
//! relative to a root directory, so tests can point it at a fake tree.

use std::collections::BTreeSet;
use std::fs;
use std::io::{ErrorKind, Read, Write as _};
use std::path::{Path, PathBuf};

use super::config::EventCatalog;
use super::session::{
    self, BufferSize, EventId, InstanceState, ParseError, SessionError, SessionWants, Sessions,
    Write,
};

/// Where tracefs is normally mounted.
pub const TRACEFS_PATHS: &[&str] = &["/sys/kernel/tracing", "/sys/kernel/debug/tracing"];

/// The largest text file read (a `format`, `set_event`, `available_events`).
pub const MAX_TEXT_BYTES: usize = 1 << 20;

/// Why a tracefs operation failed.
#[derive(Debug, thiserror::Error)]
pub enum TracefsError {
    /// A file could not be opened, read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The system's error.
        #[source]
        source: std::io::Error,
    },
    /// A file is larger than its cap.
    #[error("{path} is larger than {cap} bytes")]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// The cap.
        cap: usize,
    },
    /// A file is not UTF-8.
    #[error("{0} is not UTF-8")]
    NotText(PathBuf),
    /// A file's text has an unexpected shape.
    #[error(transparent)]
    Parse(#[from] ParseError),
    /// No tracefs at the usual paths, and mounting failed.
    #[error("tracefs is not available: {0}")]
    Unavailable(String),
    /// `instance_name` names no existing instance.
    #[error("no tracefs instance {0:?}")]
    NoInstance(String),
    /// Another tracer than `nop` is active on the instance.
    #[error("the instance is in use: current_tracer is {0:?}")]
    TracerInUse(String),
    /// A session call out of order.
    #[error(transparent)]
    Session(#[from] SessionError),
}

fn io(path: &Path, source: std::io::Error) -> TracefsError {
    TracefsError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Reads at most `cap` bytes of `path` with large reads (tracefs answers a
/// read past offset 0 of some files with end-of-file, so no small probe
/// read); more than `cap` is an error.
pub fn read_bounded(path: &Path, cap: usize) -> Result<Vec<u8>, TracefsError> {
    let mut f = fs::File::open(path).map_err(|e| io(path, e))?;
    let mut out = vec![0u8; cap.saturating_add(1).min(64 << 10)];
    let mut len = 0;
    loop {
        if len == out.len() {
            if out.len() > cap {
                return Err(TracefsError::TooLarge {
                    path: path.to_path_buf(),
                    cap,
                });
            }
            let grown = (out.len() * 2).min(cap + 1);
            out.resize(grown, 0);
        }
        match f.read(&mut out[len..]) {
            Ok(0) => break,
            Ok(n) => len += n,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(io(path, e)),
        }
    }
    if len > cap {
        return Err(TracefsError::TooLarge {
            path: path.to_path_buf(),
            cap,
        });
    }
    out.truncate(len);
    Ok(out)
}

/// [`read_bounded`] as text.
pub fn read_text(path: &Path, cap: usize) -> Result<String, TracefsError> {
    String::from_utf8(read_bounded(path, cap)?).map_err(|_| TracefsError::NotText(path.into()))
}

/// Finds tracefs at [`TRACEFS_PATHS`], mounting it at the first when it is
/// not mounted and the process may.
pub fn find_or_mount() -> Result<PathBuf, TracefsError> {
    for p in TRACEFS_PATHS {
        let p = Path::new(p);
        if p.join("trace").exists() {
            return Ok(p.to_path_buf());
        }
    }
    let target = Path::new(TRACEFS_PATHS[0]);
    match rustix::mount::mount(
        "nodev",
        target,
        "tracefs",
        rustix::mount::MountFlags::empty(),
        None,
    ) {
        Ok(()) if target.join("trace").exists() => Ok(target.to_path_buf()),
        Ok(()) => Err(TracefsError::Unavailable(format!(
            "mounted {} but it has no trace file",
            target.display()
        ))),
        Err(e) => Err(TracefsError::Unavailable(format!(
            "not mounted, and mounting at {} failed: {e}",
            target.display()
        ))),
    }
}

/// One tracefs instance: the top level of a mount or `instances/NAME`.
#[derive(Debug, Clone)]
pub struct Instance {
    /// The mount (holds `events/header_page`).
    root: PathBuf,
    /// The instance directory.
    dir: PathBuf,
}

impl Instance {
    /// The instance at `root` (a tracefs mount, or a tree shaped like one):
    /// the top level, or the existing `instances/<name>`.
    pub fn open(root: &Path, name: Option<&str>) -> Result<Self, TracefsError> {
        let dir = match name {
            None => root.to_path_buf(),
            Some(n) => {
                let d = root.join("instances").join(n);
                if !d.is_dir() || n.contains('/') || n == ".." || n == "." {
                    return Err(TracefsError::NoInstance(n.to_owned()));
                }
                d
            }
        };
        Ok(Instance {
            root: root.to_path_buf(),
            dir,
        })
    }

    /// The instance directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Reads the instance file `rel` as text (at most [`MAX_TEXT_BYTES`]).
    pub fn read(&self, rel: &str) -> Result<String, TracefsError> {
        read_text(&self.dir.join(rel), MAX_TEXT_BYTES)
    }

    /// Writes `value` to the instance file `rel` in one write.
    pub fn write(&self, rel: &str, value: &str) -> Result<(), TracefsError> {
        let p = self.dir.join(rel);
        let mut f = fs::OpenOptions::new()
            .write(true)
            .open(&p)
            .map_err(|e| io(&p, e))?;
        f.write_all(value.as_bytes()).map_err(|e| io(&p, e))
    }

    /// `events/header_page` (of the mount: it is the same for every instance).
    pub fn header_page(&self) -> Result<String, TracefsError> {
        read_text(&self.root.join("events/header_page"), MAX_TEXT_BYTES)
    }

    /// `events/<group>/<name>/format`.
    pub fn format(&self, group: &str, name: &str) -> Result<String, TracefsError> {
        self.read(&format!("events/{group}/{name}/format"))
    }

    /// The sub-buffer size in bytes: `buffer_subbuf_size_kb` where the
    /// kernel has it, else the page size.
    pub fn subbuf_size(&self) -> Result<usize, TracefsError> {
        let p = self.dir.join("buffer_subbuf_size_kb");
        if !p.exists() {
            return Ok(rustix::param::page_size());
        }
        let kb = session::parse_u32(
            "buffer_subbuf_size_kb",
            &self.read("buffer_subbuf_size_kb")?,
        )?;
        Ok(kb as usize * 1024)
    }

    /// The CPUs with a `per_cpu/cpuN` directory, sorted.
    pub fn cpus(&self) -> Result<Vec<usize>, TracefsError> {
        let p = self.dir.join("per_cpu");
        let mut cpus: Vec<usize> = fs::read_dir(&p)
            .map_err(|e| io(&p, e))?
            .filter_map(|e| {
                e.ok()?
                    .file_name()
                    .to_str()?
                    .strip_prefix("cpu")?
                    .parse()
                    .ok()
            })
            .collect();
        cpus.sort_unstable();
        Ok(cpus)
    }

    /// The instance's state, as the session machine needs it.
    pub fn state(&self) -> Result<InstanceState, TracefsError> {
        let tracing_on = session::parse_bool("tracing_on", &self.read("tracing_on")?)?;
        let enabled_events = session::parse_set_event(&self.read("set_event")?)?;
        let buffer_size = match session::parse_buffer_size_kb(&self.read("buffer_size_kb")?)? {
            Some(kb) => BufferSize::Uniform(kb),
            None => {
                let mut v = Vec::new();
                for cpu in self.cpus()? {
                    let t = self.read(&format!("per_cpu/cpu{cpu}/buffer_size_kb"))?;
                    v.push(session::parse_buffer_size_kb(&t)?.unwrap_or(0));
                }
                BufferSize::PerCpu(v)
            }
        };
        let (clock, available_clocks) = session::parse_trace_clock(&self.read("trace_clock")?)?;
        let buffer_percent = if self.dir.join("buffer_percent").exists() {
            Some(session::parse_u32(
                "buffer_percent",
                &self.read("buffer_percent")?,
            )?)
        } else {
            None
        };
        Ok(InstanceState {
            tracing_on,
            enabled_events,
            buffer_size,
            clock,
            available_clocks,
            buffer_percent,
        })
    }

    /// Applies one write.
    pub fn apply(&self, w: &Write) -> Result<(), TracefsError> {
        match w {
            Write::TracingOn(b) => self.write("tracing_on", if *b { "1" } else { "0" }),
            Write::ClearTrace => {
                let p = self.dir.join("trace");
                fs::OpenOptions::new()
                    .write(true)
                    .truncate(true)
                    .open(&p)
                    .map(drop)
                    .map_err(|e| io(&p, e))
            }
            Write::Clock(c) => self.write("trace_clock", c),
            Write::BufferSizeKb(kb) => self.write("buffer_size_kb", &kb.to_string()),
            Write::CpuBufferSizeKb { cpu, kb } => {
                self.write(&format!("per_cpu/cpu{cpu}/buffer_size_kb"), &kb.to_string())
            }
            Write::BufferPercent(p) => self.write("buffer_percent", &p.to_string()),
            Write::SyscallFilter(f) => self
                .write("events/raw_syscalls/sys_enter/filter", f)
                .and_then(|()| self.write("events/raw_syscalls/sys_exit/filter", f)),
            Write::Event { event, enable } => self.write(
                &format!("events/{}/{}/enable", event.0, event.1),
                if *enable { "1" } else { "0" },
            ),
        }
    }
}

impl EventCatalog for Instance {
    fn has_event(&self, group: &str, name: &str) -> bool {
        !group.contains('/')
            && !name.contains('/')
            && self
                .dir
                .join("events")
                .join(group)
                .join(name)
                .join("format")
                .is_file()
    }

    fn group_events(&self, group: &str) -> Vec<String> {
        if group.contains('/') || group == ".." {
            return Vec::new();
        }
        let d = self.dir.join("events").join(group);
        let mut v: Vec<String> = fs::read_dir(d)
            .into_iter()
            .flatten()
            .filter_map(|e| {
                let e = e.ok()?;
                e.path().join("format").is_file().then_some(())?;
                e.file_name().into_string().ok()
            })
            .collect();
        v.sort();
        v
    }

    fn group_of(&self, name: &str) -> Option<String> {
        if name.contains('/') {
            return None;
        }
        let mut groups: Vec<String> = fs::read_dir(self.dir.join("events"))
            .ok()?
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .collect();
        groups.sort();
        groups.into_iter().find(|g| self.has_event(g, name))
    }
}

/// What a session's start did beyond the writes that had to succeed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StartReport {
    /// Events whose `enable` write failed (`ftrace_stats.failed_ftrace_events`).
    pub failed_events: Vec<String>,
}

/// The sessions of one instance, driving it through the state machine.
#[derive(Debug)]
pub struct Controller {
    instance: Instance,
    sessions: Sessions,
}

impl Controller {
    /// A controller for `instance` with no sessions.
    pub fn new(instance: Instance) -> Self {
        Controller {
            instance,
            sessions: Sessions::new(),
        }
    }

    /// The instance.
    pub fn instance(&self) -> &Instance {
        &self.instance
    }

    /// The session machine.
    pub fn sessions(&self) -> &Sessions {
        &self.sessions
    }

    /// Applies `writes`; a failed event write is reported, any other
    /// failure is an error.
    fn apply(&self, writes: &[Write]) -> Result<StartReport, TracefsError> {
        let mut report = StartReport::default();
        for w in writes {
            match (self.instance.apply(w), w) {
                (Ok(()), _) => {}
                (Err(_), Write::Event { event, .. }) => {
                    report
                        .failed_events
                        .push(format!("{}/{}", event.0, event.1));
                }
                (Err(e), _) => return Err(e),
            }
        }
        Ok(report)
    }

    /// Session `id` starts recording what `wants` asks. The first session
    /// refuses an instance whose `current_tracer` is not `nop` (someone
    /// else is using it).
    pub fn start(&mut self, id: u64, wants: SessionWants) -> Result<StartReport, TracefsError> {
        let state = if self.sessions.is_idle() {
            if self.instance.dir.join("current_tracer").exists() {
                let tracer = self.instance.read("current_tracer")?;
                if tracer.trim() != "nop" {
                    return Err(TracefsError::TracerInUse(tracer.trim().to_owned()));
                }
            }
            self.instance.state()?
        } else {
            // Only read for the first session.
            InstanceState {
                tracing_on: false,
                enabled_events: BTreeSet::<EventId>::new(),
                buffer_size: BufferSize::Uniform(0),
                clock: String::new(),
                available_clocks: Vec::new(),
                buffer_percent: None,
            }
        };
        let writes = self.sessions.start(id, wants, &state)?;
        match self.apply(&writes) {
            Ok(report) => Ok(report),
            Err(e) => {
                // Undo: the session is not started, and what it changed is
                // put back as far as tracefs lets us.
                if let Ok(undo) = self.sessions.stop(id) {
                    for w in &undo {
                        let _ = self.instance.apply(w);
                    }
                }
                Err(e)
            }
        }
    }

    /// Session `id` stops; the last one restores the instance.
    pub fn stop(&mut self, id: u64) -> Result<StartReport, TracefsError> {
        let writes = self.sessions.stop(id)?;
        self.apply(&writes)
    }
}

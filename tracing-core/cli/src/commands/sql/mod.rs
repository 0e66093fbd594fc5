//! `zerotrace sql TRACE`: load a trace into Perfetto's tables with
//! zerotrace-trace-processor and answer SQL over it.
//!
//! - `-Q SQL` or `-q FILE` print what Perfetto's `trace_processor_shell`
//!   prints for the same flags, the last statement's rows as CSV, or as an
//!   aligned table or JSON with `--format` (`format.rs`).
//! - Without them, on a terminal: a prompt with line editing and history
//!   (`prompt.rs`, rustyline) over a terminal-free core (`session.rs`):
//!   statements across lines until `;` (`statements.rs`), dot commands,
//!   row counts and times.
//! - Without them, stdin not a terminal: a script read from stdin through
//!   the same core, each statement's rows printed, stopping at the first
//!   error.
//!
//! - `--httpd [ADDR]`: Perfetto's trace processor RPC over HTTP on ADDR
//!   (127.0.0.1:9001), the trace (if given) loaded, for Perfetto's Python
//!   client and UI (`serve.rs`, over `crate::tp_httpd`): for this user's
//!   and root's processes only, on loopback unless
//!   `--insecure-serve-remote-peers` says otherwise. `tp_shell.rs` is
//!   `zerotrace-tp`, the same behind `trace_processor_shell`'s flags.
//!
//! Bad SQL is a usage error (exit 1) showing SQLite's message, the line
//! and a caret under the spot; a trace that does not load is a bad trace
//! (exit 5) naming the file, the byte and the packet (`errors.rs`); a
//! trace cut short loads what it can, with a warning on stderr naming the
//! byte and what was dropped. A directory's files that are not traces are
//! skipped (`trace_set.rs`, the rule `export` follows). SQL reads and
//! writes no file unless `--allow-sql-file-access`. `--add-sql-package
//! PATH[@PACKAGE]` registers a directory of the user's `.sql` files as
//! modules for `INCLUDE PERFETTO MODULE` (`packages.rs`), on the trace
//! queried and on every trace the RPC loads later. While a
//! large trace loads, a progress line is drawn on stderr when it is a
//! terminal (`progress.rs`).

mod errors;
mod format;
mod many;
mod packages;
mod progress;
mod prompt;
mod serve;
mod session;
mod statements;
pub mod tp_shell;

use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use zerotrace_trace_processor::{LoadBudget, LoadOptions, TraceProcessor};

pub use format::Format;

use super::{CliError, print_out};
use errors::describe_query_error;
pub(super) use errors::load_error;
use errors::warn_dropped;
use progress::ProgressLine;
use session::{Output, Session, Step};

/// `zerotrace sql`'s arguments.
#[derive(Debug, clap::Args)]
pub struct SqlArgs {
    /// The trace file (protobuf, plain or gzip-compressed). Several files,
    /// or a directory standing for the files under it, show as one set of
    /// tables with a `trace` column (the file names, as `zerotrace export`
    /// names its partitions). With --httpd one trace, or none for a client
    /// to send one.
    #[arg(required_unless_present = "httpd")]
    pub traces: Vec<PathBuf>,
    /// The SQL to run (its last statement's rows are printed).
    #[arg(short = 'Q', long = "query-string", conflicts_with = "query_file")]
    pub query_string: Option<String>,
    /// A file holding the SQL to run.
    #[arg(short = 'q', long = "query-file")]
    pub query_file: Option<PathBuf>,
    /// How results print: `csv` (trace_processor_shell's; the default with
    /// -q/-Q and for a script on stdin), `table` (aligned columns; the
    /// prompt's default) or `json` (an array of objects, one per row, typed
    /// values).
    #[arg(long, value_enum)]
    pub format: Option<Format>,
    /// Serve Perfetto's trace processor RPC over HTTP on ADDR (default
    /// 127.0.0.1:9001), as `trace_processor_shell --httpd` does: for
    /// Perfetto's Python client (`TraceProcessor(addr=...)`).
    #[arg(
        long,
        value_name = "ADDR",
        num_args = 0..=1,
        default_missing_value = crate::tp_httpd::DEFAULT_ADDR,
        conflicts_with_all = ["query_string", "query_file"]
    )]
    pub httpd: Option<String>,
    /// With --httpd: listen beyond loopback if ADDR is not a loopback
    /// address, and serve peers whose uid the kernel cannot vouch for
    /// (remote ones). RISK: anyone who reaches ADDR reads the trace and
    /// runs SQL over it. Local peers are still served only if they run as
    /// this user or root.
    #[arg(long = "insecure-serve-remote-peers", requires = "httpd")]
    pub insecure_serve_remote_peers: bool,
    /// Leave `ftrace_event` empty, as `trace_processor_shell --no-ftrace-raw`
    /// does (Perfetto's Python client passes it unless told otherwise).
    #[arg(long = "no-ftrace-raw")]
    pub no_ftrace_raw: bool,
    /// The memory a trace's load may take, as the loader counts it (its
    /// bytes once decompressed and a record per packet; the load's peak is
    /// about 2.5 times that): bytes, or K, M, G or T. Default 6G, and a
    /// file whose compressed bytes grow more than 100 times is refused as
    /// a decompression bomb; giving a size lifts that check.
    #[arg(long = "max-memory", value_name = "SIZE", value_parser = LoadBudget::parse_size)]
    pub max_memory: Option<u64>,
    /// Threads a trace file's load may use: reading, decompressing and
    /// splitting the trace run ahead of its ordered parsing, with the same
    /// tables as one thread makes. 1 loads on this thread alone; default:
    /// the machine's cores. (`trace_processor_shell` has no such flag.)
    #[arg(long = "load-threads", value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub load_threads: Option<u16>,
    /// Let the SQL read and write files (`ATTACH` of a file, `VACUUM
    /// INTO`), as `trace_processor_shell --allow-sql-file-access` does; off
    /// by default, for the SQL given here and that of RPC clients. Do not
    /// turn it on for SQL you do not trust.
    #[arg(long = "allow-sql-file-access")]
    pub allow_sql_file_access: bool,
    /// Count the trace's bytes by protobuf field path into
    /// `experimental_proto_path` and `experimental_proto_content` (a root
    /// per TrackEvent category and name, with them as args), as
    /// `trace_processor_shell --analyze-trace-proto-content` does.
    #[arg(long = "analyze-trace-proto-content")]
    pub analyze_trace_proto_content: bool,
    /// Drop the TrackEvents before the trace's range of interest
    /// (`TracePacket.track_event_range_of_interest`), as
    /// `trace_processor_shell --crop-track-events` does.
    #[arg(long = "crop-track-events")]
    pub crop_track_events: bool,
    /// Register the `.sql` files under directory PATH as modules of package
    /// PACKAGE (the directory's name when not given), so that `INCLUDE
    /// PERFETTO MODULE PACKAGE.a.b` runs PATH/a/b.sql; repeatable. A name
    /// that clashes with a built-in package is refused.
    #[arg(long = "add-sql-package", value_name = "PATH[@PACKAGE]")]
    pub add_sql_package: Vec<String>,
    /// Upstream's development features switch (Perfetto's Python client
    /// passes it when asked): accepted; zerotrace has no features behind it.
    #[arg(long = "dev")]
    pub dev: bool,
    /// With --httpd: stop each query of a client that runs longer than
    /// SECONDS (its answer's error names the limit); no limit by default.
    #[arg(long = "query-timeout", value_name = "SECONDS", requires = "httpd")]
    pub query_timeout: Option<f64>,
}

impl SqlArgs {
    /// What the load keeps, and whether its SQL may touch files.
    fn load_options(&self) -> LoadOptions {
        LoadOptions {
            ftrace_raw: !self.no_ftrace_raw,
            budget: self
                .max_memory
                .map_or_else(LoadBudget::default, LoadBudget::with_max_memory),
            sql_file_access: self.allow_sql_file_access,
            analyze_proto_content: self.analyze_trace_proto_content,
            crop_track_events: self.crop_track_events,
            threads: self
                .load_threads
                .map_or_else(|| LoadOptions::default().threads, usize::from),
        }
    }
}

/// Runs the command.
pub fn run(args: &SqlArgs) -> Result<(), CliError> {
    let sql_packages = packages::read(&args.add_sql_package)?;
    if let Some(addr) = &args.httpd {
        if args.traces.len() > 1 {
            return Err(CliError::Usage("--httpd serves one trace".into()));
        }
        return serve::serve(
            args.traces.first().map(PathBuf::as_path),
            addr,
            crate::tp_httpd::ServerOptions {
                serve_remote_peers: args.insecure_serve_remote_peers,
                ..Default::default()
            },
            args.load_options(),
            serve::query_timeout(args.query_timeout)?,
            sql_packages,
        );
    }
    let one = match args.traces.as_slice() {
        [] => return Err(CliError::Usage("give a trace file".into())),
        [t] if !t.is_dir() => Some(t),
        _ => None,
    };
    let sql = match (&args.query_string, &args.query_file) {
        (Some(s), _) => Some(s.clone()),
        (None, Some(f)) => {
            Some(std::fs::read_to_string(f).map_err(|e| CliError::io(f.display(), e))?)
        }
        (None, None) => None,
    };
    let tp = match one {
        Some(trace) => load(trace, args.load_options())?,
        None => many::load_many(
            &super::trace_set::expand(&args.traces)?,
            args.load_options(),
        )?,
    };
    packages::add(&tp, &sql_packages)?;
    match sql {
        Some(sql) => {
            let result = tp
                .query(&sql)
                .map_err(|e| CliError::Usage(describe_query_error(&sql, &e)))?;
            print_out(format::render(&result, args.format.unwrap_or(Format::Csv)).as_bytes())
        }
        None if std::io::stdin().is_terminal() => {
            prompt::run(&tp, args.format.unwrap_or(Format::Table))
        }
        None => script(
            &tp,
            std::io::stdin().lock(),
            args.format.unwrap_or(Format::Csv),
        ),
    }
}

/// Loads one trace for a command that reads its tables (`convert`): as
/// `zerotrace sql` loads it, or from stdin for `-`. What the load dropped
/// ([`TraceProcessor::load_warnings`]) is the caller's to say.
pub(super) fn load_trace(path: &Path, options: LoadOptions) -> Result<TraceProcessor, CliError> {
    if path.as_os_str() != "-" {
        return load_quietly(path, options);
    }
    TraceProcessor::from_reader(std::io::stdin().lock())
        .map_err(|e| load_error(Path::new("stdin"), e))
}

/// Loads the trace, with a progress line on stderr if it is a terminal.
fn load(path: &Path, options: LoadOptions) -> Result<TraceProcessor, CliError> {
    let tp = load_quietly(path, options)?;
    warn_dropped(path, &tp);
    Ok(tp)
}

/// [`load`] without the warnings.
fn load_quietly(path: &Path, options: LoadOptions) -> Result<TraceProcessor, CliError> {
    if !std::io::stderr().is_terminal() {
        return TraceProcessor::open_with_options(path, options, |_| {})
            .map_err(|e| load_error(path, e));
    }
    let name = path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let mut line = ProgressLine::new(name, Instant::now());
    let draw = |text: Option<String>| {
        if let Some(t) = text {
            let mut err = std::io::stderr().lock();
            let _ = err.write_all(t.as_bytes());
            let _ = err.flush();
        }
    };
    let loaded =
        TraceProcessor::open_with_options(path, options, |p| draw(line.update(p, Instant::now())));
    draw(line.clear());
    loaded.map_err(|e| load_error(path, e))
}

/// Runs the statements and dot commands read from `input`, printing each
/// result as it comes; the first error stops it (exit 1).
fn script(tp: &TraceProcessor, input: impl BufRead, format: Format) -> Result<(), CliError> {
    let started = Instant::now();
    let mut session = Session::new(tp, format, false, move || started.elapsed());
    let emit = |o: Output| -> Result<(), CliError> {
        if !o.err.is_empty() {
            let _ = std::io::stderr().lock().write_all(o.err.as_bytes());
        }
        print_out(o.out.as_bytes())
    };
    let mut stopped = false;
    for line in input.lines() {
        let line = line.map_err(|e| CliError::io("stdin", e))?;
        let mut o = Output::default();
        let step = session.line(&line, &mut o);
        emit(o)?;
        if step == Step::Quit {
            stopped = true;
            break;
        }
    }
    if !stopped {
        let mut o = Output::default();
        session.end(&mut o);
        emit(o)?;
    }
    if session.failed() {
        return Err(CliError::Usage(
            "the script stopped at its first error (above)".into(),
        ));
    }
    Ok(())
}

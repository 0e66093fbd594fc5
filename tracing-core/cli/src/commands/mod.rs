//! The `zerotrace` subcommands and what they share: the command line, the
//! error type with its exit codes, and reaching the service.

/// `println!` into a `String` (commands print once, through [`print_out`],
/// so a closed pipe ends them quietly instead of panicking).
macro_rules! outln {
    ($o:expr) => {
        $o.push('\n')
    };
    ($o:expr, $($t:tt)*) => {{
        use std::fmt::Write as _;
        let _ = writeln!($o, $($t)*);
    }};
}

mod background;
#[cfg(feature = "sql")]
mod convert;
mod convert_pprof;
mod demo;
mod dump;
#[cfg(feature = "parquet")]
mod export;
mod flamegraph;
mod heap_stats;
#[cfg(feature = "sql")]
mod json_args;
mod machines;
mod packet_facts;
mod perf_stats;
mod query;
mod record;
mod relay_cmd;
mod setup_errors;
#[cfg(feature = "sql")]
mod sql;
mod stats;
mod summary;
mod symbolize;
mod symbolize_gecko;
mod trace_reader;
#[cfg(feature = "sql")]
mod trace_set;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use zerotrace_core::consumer::ConsumerClient;
use zerotrace_core::ipc::Endpoint;
use zerotrace_core::ipc::consumer_socket_name;

pub use flamegraph::{FlamegraphArgs, HeapView};
pub use record::RecordArgs;
pub use relay_cmd::{RelayArgs, config as relay_config};
pub use symbolize::SymbolizeArgs;

/// Exit codes (documented in `zerotrace --help`).
pub mod exit {
    /// Success.
    pub const OK: u8 = 0;
    /// A usage error: bad arguments or a config that does not parse.
    pub const USAGE: u8 = 1;
    /// The tracing service cannot be reached.
    pub const NO_SERVICE: u8 = 2;
    /// The service refused or aborted the session.
    pub const SESSION: u8 = 3;
    /// A file could not be read or written.
    pub const IO: u8 = 4;
    /// A trace file does not decode.
    pub const BAD_TRACE: u8 = 5;
}

/// Why a command failed: one line for the user, and an exit code.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// Bad arguments, or a config that does not parse (printed as is).
    #[error("{0}")]
    Usage(String),
    /// The service is not there.
    #[error(
        "cannot reach the tracing service at {socket}: {reason}. Start it with \
         `cargo run -p zerotrace-cli --bin zerotraced` (or Perfetto's traced), or name \
         its socket with --consumer-socket / PERFETTO_CONSUMER_SOCK_NAME"
    )]
    NoService {
        /// The socket tried.
        socket: String,
        /// What went wrong.
        reason: String,
    },
    /// The session failed.
    #[error("the tracing session failed: {0}")]
    Session(String),
    /// A file failed.
    #[error("{path}: {reason}")]
    Io {
        /// The file.
        path: String,
        /// What went wrong.
        reason: String,
    },
    /// The `--background` recorder exited before its session started (it
    /// said why on stderr, which the parent passed on).
    #[error("the background recorder exited before its session started{}", code.map(|c| format!(" (exit status {c})")).unwrap_or_default())]
    Background {
        /// Its exit code, if it exited (not killed by a signal).
        code: Option<u8>,
    },
    /// A trace does not decode.
    #[error("{path}: not a valid trace: {reason}")]
    BadTrace {
        /// The file.
        path: String,
        /// What went wrong.
        reason: String,
    },
}

impl CliError {
    /// The process exit code for this error.
    pub fn code(&self) -> u8 {
        match self {
            CliError::Usage(_) => exit::USAGE,
            CliError::NoService { .. } => exit::NO_SERVICE,
            CliError::Session(_) => exit::SESSION,
            CliError::Io { .. } => exit::IO,
            CliError::BadTrace { .. } => exit::BAD_TRACE,
            CliError::Background { code } => code.filter(|&c| c != 0).unwrap_or(exit::SESSION),
        }
    }

    /// An I/O error on `path`.
    pub fn io(path: impl std::fmt::Display, e: impl std::fmt::Display) -> CliError {
        CliError::Io {
            path: path.to_string(),
            reason: e.to_string(),
        }
    }
}

/// Records, inspects and converts Perfetto traces (the `perfetto` command's
/// conventions). Exit codes: 0 success, 1 usage or config error, 2 service
/// unreachable, 3 session refused or failed, 4 file error, 5 invalid trace.
#[derive(Debug, Parser)]
#[command(name = "zerotrace", version, about, long_about = None)]
pub struct Cli {
    /// The consumer socket [default: $PERFETTO_CONSUMER_SOCK_NAME, else Perfetto's]
    #[arg(long, global = true)]
    pub consumer_socket: Option<String>,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Record a trace from a running service (zerotraced or traced).
    Record(RecordArgs),
    /// Show the service's producers, data sources and sessions.
    Query {
        /// JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Print a trace's packets as text, every field by name.
    Dump {
        /// The trace file (`-` for stdin).
        trace: PathBuf,
    },
    /// Packets per sequence and data source, buffer stats and data losses,
    /// the CPU samples' processes, threads and losses, and the heap dumps.
    Stats {
        /// The trace file (`-` for stdin).
        trace: PathBuf,
    },
    /// Convert a trace for other tools: Chrome's JSON trace format, or its
    /// CPU samples (linux.perf) or heap dumps (android.heapprofd) as a
    /// gzip-compressed pprof profile.
    Convert {
        /// What to write: `json` (Chrome's JSON trace format) or `pprof`
        /// (the CPU samples or heap dumps, for `go tool pprof` and its kin).
        #[arg(long, value_enum, default_value = "json")]
        format: ConvertFormat,
        /// The same as `--format json`.
        #[arg(long, conflicts_with = "format")]
        json: bool,
        /// With `--format pprof`: write the heap dumps (android.heapprofd)
        /// even when the trace has CPU samples (without it, pprof gets the
        /// CPU samples if there are any, else the heap dumps).
        #[arg(long)]
        heap: bool,
        /// The trace file (`-` for stdin).
        trace: PathBuf,
        /// Output file [default: stdout]
        #[arg(short, long)]
        output: Option<PathBuf>,
    },
    /// Draw a trace's CPU samples (linux.perf), or with --heap its heap
    /// dumps (android.heapprofd), as an interactive flame graph (SVG).
    Flamegraph(FlamegraphArgs),
    /// Name the frames of a trace's CPU samples from binaries and debug
    /// files (DWARF, symbols), appending `module_symbols` packets as
    /// Perfetto's `traceconv symbolize` does.
    Symbolize(SymbolizeArgs),
    /// Relay this machine's producers to a central service on another
    /// machine (Perfetto's traced_relay).
    Relay(relay_cmd::RelayArgs),
    /// Answer SQL over a trace with Perfetto's tables: with -q/-Q, what
    /// Perfetto's `trace_processor_shell -q/-Q` prints (the last
    /// statement's rows as CSV; --format table or json); otherwise a prompt
    /// on a terminal, or the statements of a script on stdin.
    #[cfg(feature = "sql")]
    Sql(sql::SqlArgs),
    /// Write traces' tables for other engines: `--format parquet` makes a
    /// hive-partitioned Parquet dataset (DIR/TABLE/trace=ID/*.parquet) for
    /// DuckDB, DataFusion, Spark or Trino.
    #[cfg(feature = "parquet")]
    Export(export::ExportArgs),
    /// Record a demo trace with an embedded service: no daemon, no config.
    Demo {
        /// Where to write it.
        #[arg(short, long, default_value = "demo.pftrace")]
        output: PathBuf,
    },
}

/// What `zerotrace convert` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ConvertFormat {
    /// Chrome's JSON trace format.
    Json,
    /// pprof's profile.proto, gzip-compressed: the trace's CPU samples, or
    /// its heap dumps.
    Pprof,
}

impl Command {
    /// The subcommand's name, as typed.
    fn name(&self) -> &'static str {
        match self {
            Command::Record(_) => "record",
            Command::Query { .. } => "query",
            Command::Dump { .. } => "dump",
            Command::Stats { .. } => "stats",
            Command::Convert { .. } => "convert",
            Command::Flamegraph(_) => "flamegraph",
            Command::Symbolize(_) => "symbolize",
            Command::Relay(_) => "relay",
            #[cfg(feature = "sql")]
            Command::Sql(_) => "sql",
            #[cfg(feature = "parquet")]
            Command::Export(_) => "export",
            Command::Demo { .. } => "demo",
        }
    }
}

/// `zerotrace-tp`'s `main`: the `trace_processor_shell` stand-in.
#[cfg(feature = "sql")]
pub fn tp_main() -> ExitCode {
    sql::tp_shell::main()
}

/// Runs the command line; the exit code says how it went.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::from(exit::OK),
        Err(e) => {
            eprintln!("zerotrace: {e}");
            ExitCode::from(e.code())
        }
    }
}

/// Runs one parsed command line.
pub fn run(cli: Cli) -> Result<(), CliError> {
    // Only `record` and `query` talk to the service: on the others the
    // option would be parsed and ignored.
    let connects = matches!(cli.command, Command::Record(_) | Command::Query { .. });
    if cli.consumer_socket.is_some() && !connects {
        return Err(CliError::Usage(format!(
            "--consumer-socket: `{}` does not connect to a tracing service",
            cli.command.name()
        )));
    }
    let socket = cli.consumer_socket.unwrap_or_else(consumer_socket_name);
    match cli.command {
        Command::Record(args) => record::run(&socket, args),
        Command::Query { json } => query::run(&socket, json),
        Command::Dump { trace } => dump::run(&trace),
        Command::Stats { trace } => stats::run(&trace),
        Command::Convert {
            format: ConvertFormat::Pprof,
            json: _,
            heap,
            trace,
            output,
        } => convert_pprof::run(&trace, output.as_deref().unwrap_or(Path::new("-")), heap),
        Command::Convert {
            format: ConvertFormat::Json,
            heap: true,
            ..
        } => Err(CliError::Usage(
            "--heap: only `--format pprof` writes heap dumps".to_owned(),
        )),
        #[cfg(feature = "sql")]
        Command::Convert {
            format: ConvertFormat::Json,
            json: _,
            heap: false,
            trace,
            output,
        } => convert::run(&trace, output.as_deref()),
        #[cfg(not(feature = "sql"))]
        Command::Convert {
            format: ConvertFormat::Json,
            heap: false,
            ..
        } => Err(CliError::Usage(
            "convert: this zerotrace was built without the trace processor (feature `sql`)"
                .to_owned(),
        )),
        Command::Flamegraph(args) => flamegraph::run(&args),
        Command::Symbolize(args) => symbolize::run(&args),
        #[cfg(feature = "sql")]
        Command::Sql(args) => sql::run(&args),
        #[cfg(feature = "parquet")]
        Command::Export(args) => export::run(&args),
        Command::Demo { output } => demo::run(&output),
        Command::Relay(args) => relay_cmd::run(args),
    }
}

/// Connects to the consumer socket, or says how to start the service.
fn connect(socket: &str) -> Result<ConsumerClient, CliError> {
    ConsumerClient::connect(&Endpoint::parse(socket)).map_err(|e| CliError::NoService {
        socket: socket.to_owned(),
        reason: e.to_string(),
    })
}

/// Reads a file, or stdin for `-`.
fn read_input(path: &std::path::Path) -> Result<Vec<u8>, CliError> {
    if path.as_os_str() == "-" {
        let mut buf = Vec::new();
        std::io::Read::read_to_end(&mut std::io::stdin(), &mut buf)
            .map_err(|e| CliError::io("stdin", e))?;
        return Ok(buf);
    }
    std::fs::read(path).map_err(|e| CliError::io(path.display(), e))
}

/// Writes to stdout; a reader that went away (`| head`) is not an error.
fn print_out(bytes: &[u8]) -> Result<(), CliError> {
    let mut out = std::io::stdout().lock();
    match std::io::Write::write_all(&mut out, bytes).and_then(|()| std::io::Write::flush(&mut out))
    {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(CliError::io("stdout", e)),
    }
}

/// Writes `bytes` to a file, or stdout for `-`.
/// With `no_clobber`, an existing file is an error, checked as the file is
/// created (no window between a check and the write).
fn write_output(path: &std::path::Path, bytes: &[u8], no_clobber: bool) -> Result<(), CliError> {
    if path.as_os_str() == "-" {
        return print_out(bytes);
    }
    let mut open = std::fs::OpenOptions::new();
    open.write(true);
    if no_clobber {
        open.create_new(true);
    } else {
        open.create(true).truncate(true);
    }
    let io = |e: std::io::Error| {
        if e.kind() == std::io::ErrorKind::AlreadyExists {
            CliError::io(path.display(), "exists (and --no-clobber was given)")
        } else {
            CliError::io(path.display(), e)
        }
    };
    let mut f = open.open(path).map_err(io)?;
    std::io::Write::write_all(&mut f, bytes).map_err(io)
}

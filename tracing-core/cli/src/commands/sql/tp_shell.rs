//! `zerotrace-tp`: a `trace_processor_shell` stand-in, for tools that start
//! the shell by name (Perfetto's Python client with `bin_path=`). It takes
//! the shell's classic command line:
//!
//! - `TRACE`, then `-q FILE` / `--query-file FILE` or `-Q SQL` /
//!   `--query-string SQL`: print the last statement's rows as the shell's
//!   CSV (what `zerotrace sql -q/-Q` prints); neither: the prompt.
//! - `-D` / `--httpd`, `--http-port PORT`, `--http-ip-address IP`,
//!   `--http-additional-cors-origins A,B`: serve the RPC (after running
//!   `-q`/`-Q` if given), on loopback port 9001 unless told; served to
//!   this user's and root's processes only. A non-loopback
//!   `--http-ip-address` needs `--insecure-serve-remote-peers`, which
//!   also admits remote peers (a warning on stderr says so).
//! - `--no-ftrace-raw`: `ftrace_event` (upstream's raw table) left empty,
//!   for the trace given and for traces sent over `/parse`.
//! - `--allow-sql-file-access`: SQL may read and write files (`ATTACH` of
//!   a file, `VACUUM INTO`); off by default, for `-q`/`-Q` and the RPC.
//! - `--add-sql-package PATH[@PACKAGE]` (repeatable): the user's `.sql`
//!   files as modules for `INCLUDE PERFETTO MODULE`, for `-q`/`-Q` and
//!   every trace the RPC serves; `--dev`: accepted, as Perfetto's Python
//!   client passes it (we have no development features behind it).
//! - `--load-threads N` (zerotrace's own; the shell has none): threads
//!   the trace's load may use, the machine's cores by default.
//! - `-v` / `--version`: the version and the RPC API version, as the shell
//!   prints them.
//!
//! The shell's newer subcommand form is taken too, chosen as upstream
//! chooses it (the first argument that is not a flag or a flag's value
//! names a subcommand): `query TRACE [SQL]` (or `-f FILE`, `-` or a piped
//! stdin for the SQL), `server http [TRACE] [--port N] [--ip-address A]
//! [--additional-cors-origins A,B]` and `interactive TRACE`, with the
//! common flags (`--add-sql-package`, `--no-ftrace-raw`, `--dev`,
//! `--allow-sql-file-access`) before or after the subcommand.
//!
//! Any other flag is refused by name (exit 2), as the shell refuses it.

use std::ffi::OsString;
use std::io::{IsTerminal, Read};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

use super::{Format, SqlArgs, serve::serve};
use crate::commands::CliError;
use crate::tp_httpd::ServerOptions;
use zerotrace_trace_processor::LoadOptions;
use zerotrace_trace_processor::rpc::API_VERSION;

/// The shell's port when none is given.
const DEFAULT_PORT: &str = "9001";
/// The shell's address when none is given (loopback).
const DEFAULT_IP: &str = "127.0.0.1";

/// `zerotrace-tp`'s command line (trace_processor_shell's classic flags).
#[derive(Debug, Parser)]
#[command(
    name = "zerotrace-tp",
    about = "A trace_processor_shell-compatible trace processor (zerotrace)",
    disable_version_flag = true
)]
pub struct TpArgs {
    /// The trace file.
    pub trace: Option<PathBuf>,
    /// Read and run the SQL in FILE.
    #[arg(short = 'q', long = "query-file", value_name = "FILE")]
    pub query_file: Option<PathBuf>,
    /// Run the SQL QUERY.
    #[arg(short = 'Q', long = "query-string", value_name = "QUERY")]
    pub query_string: Option<String>,
    /// Serve the trace processor RPC over HTTP.
    #[arg(short = 'D', long = "httpd")]
    pub httpd: bool,
    /// The HTTP server's port (9001).
    #[arg(long = "http-port", value_name = "PORT")]
    pub http_port: Option<u16>,
    /// The HTTP server's address (127.0.0.1).
    #[arg(long = "http-ip-address", value_name = "IP")]
    pub http_ip_address: Option<String>,
    /// Listen on a non-loopback --http-ip-address, and serve peers whose
    /// uid the kernel cannot vouch for (remote ones). RISK: anyone who
    /// reaches the address reads the trace and runs SQL over it.
    #[arg(long = "insecure-serve-remote-peers", requires = "httpd")]
    pub insecure_serve_remote_peers: bool,
    /// More origins the HTTP server lets in, comma-separated.
    #[arg(
        long = "http-additional-cors-origins",
        value_name = "ORIGINS",
        value_delimiter = ','
    )]
    pub http_additional_cors_origins: Vec<String>,
    /// Leave ftrace_event (the raw table) empty.
    #[arg(long = "no-ftrace-raw")]
    pub no_ftrace_raw: bool,
    /// Allow SQL to read and write files (ATTACH of a file, VACUUM INTO).
    /// Do not enable this for untrusted SQL.
    #[arg(long = "allow-sql-file-access")]
    pub allow_sql_file_access: bool,
    /// Count the trace's bytes by protobuf field path
    /// (experimental_proto_path, experimental_proto_content).
    #[arg(long = "analyze-trace-proto-content")]
    pub analyze_trace_proto_content: bool,
    /// Drop the TrackEvents before the trace's range of interest.
    #[arg(long = "crop-track-events")]
    pub crop_track_events: bool,
    /// Threads the trace's load may use (zerotrace's own flag; default:
    /// the machine's cores, 1: one thread).
    #[arg(long = "load-threads", value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub load_threads: Option<u16>,
    /// Register the .sql files under PATH as modules of PACKAGE (the
    /// directory's name by default) for INCLUDE PERFETTO MODULE.
    #[arg(long = "add-sql-package", value_name = "PATH[@PACKAGE]")]
    pub add_sql_package: Vec<String>,
    /// Development features (accepted; zerotrace has none behind it).
    #[arg(long = "dev")]
    pub dev: bool,
    /// With -D: stop each query that runs longer than SECONDS (not in
    /// upstream's shell); no limit by default.
    #[arg(long = "query-timeout", value_name = "SECONDS", requires = "httpd")]
    pub query_timeout: Option<f64>,
    /// Print the version.
    #[arg(short = 'v', long = "version")]
    pub version: bool,
}

/// The `--version` text.
pub fn version_text() -> String {
    format!(
        "zerotrace-tp v{} (Perfetto trace processor RPC, v51)\nTrace Processor RPC API version: {API_VERSION}\n",
        env!("CARGO_PKG_VERSION")
    )
}

/// The subcommand form's flags common to every subcommand.
#[derive(Debug, Clone, clap::Args)]
pub struct CommonFlags {
    /// Register the .sql files under PATH as modules of PACKAGE (the
    /// directory's name by default) for INCLUDE PERFETTO MODULE.
    #[arg(long = "add-sql-package", value_name = "PATH[@PACKAGE]", global = true)]
    pub add_sql_package: Vec<String>,
    /// Leave ftrace_event (the raw table) empty.
    #[arg(long = "no-ftrace-raw", global = true)]
    pub no_ftrace_raw: bool,
    /// Allow SQL to read and write files (ATTACH of a file, VACUUM INTO).
    #[arg(long = "allow-sql-file-access", global = true)]
    pub allow_sql_file_access: bool,
    /// Count the trace's bytes by protobuf field path
    /// (experimental_proto_path, experimental_proto_content).
    #[arg(long = "analyze-trace-proto-content", global = true)]
    pub analyze_trace_proto_content: bool,
    /// Drop the TrackEvents before the trace's range of interest.
    #[arg(long = "crop-track-events", global = true)]
    pub crop_track_events: bool,
    /// Threads the trace's load may use (zerotrace's own flag; default:
    /// the machine's cores, 1: one thread).
    #[arg(long = "load-threads", value_name = "N", value_parser = clap::value_parser!(u16).range(1..), global = true)]
    pub load_threads: Option<u16>,
    /// Development features (accepted; zerotrace has none behind it).
    #[arg(long = "dev", global = true)]
    pub dev: bool,
}

/// `zerotrace-tp`'s subcommand form (trace_processor_shell's newer
/// command line).
#[derive(Debug, Parser)]
#[command(
    name = "zerotrace-tp",
    about = "A trace_processor_shell-compatible trace processor (zerotrace)",
    disable_version_flag = true
)]
pub struct TpCommandLine {
    /// The common flags.
    #[command(flatten)]
    pub common: CommonFlags,
    /// The subcommand.
    #[command(subcommand)]
    pub command: TpCommand,
}

/// A subcommand.
#[derive(Debug, Subcommand)]
pub enum TpCommand {
    /// Load a trace and run SQL; the last statement's rows print as CSV.
    Query(QueryArgs),
    /// Serve the trace processor RPC.
    Server(ServerArgs),
    /// The interactive SQL shell on a trace.
    Interactive {
        /// The trace file.
        trace: PathBuf,
    },
}

/// `query`'s arguments.
#[derive(Debug, clap::Args)]
pub struct QueryArgs {
    /// The trace file.
    pub trace: PathBuf,
    /// The SQL (else -f FILE, or stdin when it is not a terminal).
    pub sql: Option<String>,
    /// Read the SQL from FILE (`-`: stdin).
    #[arg(
        short = 'f',
        long = "query-file",
        value_name = "FILE",
        conflicts_with = "sql"
    )]
    pub query_file: Option<PathBuf>,
}

/// How `server` serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ServerMode {
    /// HTTP (the RPC Perfetto's UI and Python client speak).
    Http,
}

/// `server`'s arguments.
#[derive(Debug, clap::Args)]
pub struct ServerArgs {
    /// The transport (http).
    #[arg(value_enum)]
    pub mode: ServerMode,
    /// The trace file to load first (else a client sends one).
    pub trace: Option<PathBuf>,
    /// The HTTP port (9001).
    #[arg(long = "port", value_name = "PORT")]
    pub port: Option<u16>,
    /// The HTTP address (127.0.0.1).
    #[arg(long = "ip-address", value_name = "IP")]
    pub ip_address: Option<String>,
    /// More origins the HTTP server lets in, comma-separated.
    #[arg(
        long = "additional-cors-origins",
        value_name = "ORIGINS",
        value_delimiter = ','
    )]
    pub additional_cors_origins: Vec<String>,
    /// Listen on a non-loopback --ip-address, and serve peers whose uid
    /// the kernel cannot vouch for (remote ones). RISK: anyone who reaches
    /// the address reads the trace and runs SQL over it.
    #[arg(long = "insecure-serve-remote-peers")]
    pub insecure_serve_remote_peers: bool,
    /// Stop each query that runs longer than SECONDS; no limit by default.
    #[arg(long = "query-timeout", value_name = "SECONDS")]
    pub query_timeout: Option<f64>,
}

/// The flags of either form that take a value (skipped with it when
/// looking for a subcommand).
const FLAGS_WITH_VALUE: &[&str] = &[
    "-q",
    "--query-file",
    "-Q",
    "--query-string",
    "--http-port",
    "--http-ip-address",
    "--http-additional-cors-origins",
    "--add-sql-package",
    "--query-timeout",
    "--port",
    "--ip-address",
    "--additional-cors-origins",
    "-f",
];

/// The subcommands.
const SUBCOMMANDS: &[&str] = &["query", "server", "interactive"];

/// Whether `argv` (program name first) is the subcommand form: its first
/// argument that is neither a flag nor a flag's value names a subcommand.
pub fn is_subcommand_form(argv: &[OsString]) -> bool {
    let mut i = 1;
    while let Some(arg) = argv.get(i) {
        let a = arg.to_string_lossy();
        if a.starts_with('-') {
            if FLAGS_WITH_VALUE.contains(&a.as_ref()) {
                i += 1;
            }
            i += 1;
            continue;
        }
        return SUBCOMMANDS.contains(&a.as_ref());
    }
    false
}

/// Runs `zerotrace-tp`.
pub fn main() -> ExitCode {
    let argv: Vec<OsString> = std::env::args_os().collect();
    let result = if is_subcommand_form(&argv) {
        run_command(&TpCommandLine::parse_from(argv))
    } else {
        run(&TpArgs::parse_from(argv))
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("zerotrace-tp: {e}");
            ExitCode::from(e.code())
        }
    }
}

/// Runs a parsed command line.
pub fn run(args: &TpArgs) -> Result<(), CliError> {
    if args.version {
        print!("{}", version_text());
        return Ok(());
    }
    let has_query = args.query_file.is_some() || args.query_string.is_some();
    if args.query_file.is_some() && args.query_string.is_some() {
        return Err(CliError::Usage("-q and -Q cannot be used together".into()));
    }
    if let Some(trace) = &args.trace
        && (has_query || !args.httpd)
    {
        super::run(&SqlArgs {
            traces: vec![trace.clone()],
            query_string: args.query_string.clone(),
            query_file: args.query_file.clone(),
            format: Some(Format::Csv).filter(|_| has_query),
            httpd: None,
            insecure_serve_remote_peers: false,
            no_ftrace_raw: args.no_ftrace_raw,
            allow_sql_file_access: args.allow_sql_file_access,
            analyze_trace_proto_content: args.analyze_trace_proto_content,
            crop_track_events: args.crop_track_events,
            add_sql_package: args.add_sql_package.clone(),
            dev: args.dev,
            max_memory: None,
            load_threads: args.load_threads,
            query_timeout: None,
        })?;
    } else if !args.httpd {
        return Err(CliError::Usage(
            "give a trace file, or -D to serve the RPC".into(),
        ));
    }
    if !args.httpd {
        return Ok(());
    }
    serve_http(
        &ServerArgs {
            mode: ServerMode::Http,
            trace: args.trace.clone(),
            port: args.http_port,
            ip_address: args.http_ip_address.clone(),
            additional_cors_origins: args.http_additional_cors_origins.clone(),
            insecure_serve_remote_peers: args.insecure_serve_remote_peers,
            query_timeout: args.query_timeout,
        },
        &CommonFlags {
            add_sql_package: args.add_sql_package.clone(),
            no_ftrace_raw: args.no_ftrace_raw,
            allow_sql_file_access: args.allow_sql_file_access,
            analyze_trace_proto_content: args.analyze_trace_proto_content,
            crop_track_events: args.crop_track_events,
            dev: args.dev,
            load_threads: args.load_threads,
        },
    )
}

/// Serves the RPC over HTTP as `server` asks.
fn serve_http(server: &ServerArgs, common: &CommonFlags) -> Result<(), CliError> {
    let addr = format!(
        "{}:{}",
        server.ip_address.as_deref().unwrap_or(DEFAULT_IP),
        server
            .port
            .map_or_else(|| DEFAULT_PORT.to_owned(), |p| p.to_string())
    );
    let options = ServerOptions {
        extra_origins: server.additional_cors_origins.clone(),
        log: false,
        serve_remote_peers: server.insecure_serve_remote_peers,
        first_request_timeout: None,
    };
    let load = LoadOptions {
        ftrace_raw: !common.no_ftrace_raw,
        sql_file_access: common.allow_sql_file_access,
        analyze_proto_content: common.analyze_trace_proto_content,
        crop_track_events: common.crop_track_events,
        threads: common
            .load_threads
            .map_or_else(|| LoadOptions::default().threads, usize::from),
        ..LoadOptions::default()
    };
    let limit = super::serve::query_timeout(server.query_timeout)?;
    let packages = super::packages::read(&common.add_sql_package)?;
    serve(
        server.trace.as_deref(),
        &addr,
        options,
        load,
        limit,
        packages,
    )
}

/// Runs the subcommand form.
pub fn run_command(line: &TpCommandLine) -> Result<(), CliError> {
    let common = &line.common;
    let shell = |trace: &PathBuf, sql: Option<String>| SqlArgs {
        traces: vec![trace.clone()],
        format: Some(Format::Csv).filter(|_| sql.is_some()),
        query_string: sql,
        query_file: None,
        httpd: None,
        insecure_serve_remote_peers: false,
        no_ftrace_raw: common.no_ftrace_raw,
        allow_sql_file_access: common.allow_sql_file_access,
        analyze_trace_proto_content: common.analyze_trace_proto_content,
        crop_track_events: common.crop_track_events,
        add_sql_package: common.add_sql_package.clone(),
        dev: common.dev,
        max_memory: None,
        load_threads: common.load_threads,
        query_timeout: None,
    };
    match &line.command {
        TpCommand::Query(q) => {
            let sql = match (&q.sql, &q.query_file) {
                (Some(sql), _) => sql.clone(),
                (None, Some(f)) if f.as_os_str() != "-" => {
                    std::fs::read_to_string(f).map_err(|e| CliError::io(f.display(), e))?
                }
                (None, file) => {
                    if file.is_none() && std::io::stdin().is_terminal() {
                        return Err(CliError::Usage(
                            "query: no SQL given (as an argument, -f FILE, or on stdin)".into(),
                        ));
                    }
                    let mut sql = String::new();
                    std::io::stdin()
                        .read_to_string(&mut sql)
                        .map_err(|e| CliError::io("stdin", e))?;
                    sql
                }
            };
            super::run(&shell(&q.trace, Some(sql)))
        }
        TpCommand::Server(s) => serve_http(s, common),
        TpCommand::Interactive { trace } => super::run(&shell(trace, None)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<TpArgs, clap::Error> {
        TpArgs::try_parse_from(std::iter::once("zerotrace-tp").chain(args.iter().copied()))
    }

    #[test]
    fn the_pythons_command_line_parses() {
        let a = parse(&["-D", "--http-port", "4242", "--no-ftrace-raw"]).unwrap();
        assert!(a.httpd && a.no_ftrace_raw);
        assert_eq!(a.http_port, Some(4242));
        let a = parse(&["t.pftrace", "-q", "q.sql"]).unwrap();
        assert_eq!(a.trace, Some(PathBuf::from("t.pftrace")));
        assert_eq!(a.query_file, Some(PathBuf::from("q.sql")));
        let a = parse(&["--httpd", "t.pftrace", "-Q", "select 1"]).unwrap();
        assert!(a.httpd);
        assert_eq!(a.query_string.as_deref(), Some("select 1"));
        assert!(parse(&["-v"]).unwrap().version);
    }

    #[test]
    fn the_python_clients_other_flags_parse() {
        let a = parse(&[
            "-D",
            "--http-port",
            "1",
            "--dev",
            "--allow-sql-file-access",
            "--add-sql-package",
            "/p/a",
            "--add-sql-package",
            "/p/b@x.y",
        ])
        .unwrap();
        assert!(a.dev && a.allow_sql_file_access);
        assert_eq!(a.add_sql_package, ["/p/a", "/p/b@x.y"]);
    }

    fn argv(args: &[&str]) -> Vec<OsString> {
        std::iter::once("zerotrace-tp")
            .chain(args.iter().copied())
            .map(OsString::from)
            .collect()
    }

    #[test]
    fn the_subcommand_form_is_told_from_the_classic_one_as_upstream_tells_it() {
        assert!(is_subcommand_form(&argv(&["query", "t", "select 1"])));
        assert!(is_subcommand_form(&argv(&[
            "--add-sql-package",
            "query",
            "server",
            "http"
        ])));
        assert!(is_subcommand_form(&argv(&["--dev", "server", "http"])));
        assert!(!is_subcommand_form(&argv(&["t.pftrace", "query"])));
        assert!(!is_subcommand_form(&argv(&["-Q", "query", "t.pftrace"])));
        assert!(!is_subcommand_form(&argv(&["-D", "--http-port", "1"])));
        let line = TpCommandLine::try_parse_from(argv(&[
            "--no-ftrace-raw",
            "server",
            "http",
            "--port",
            "4242",
            "--ip-address",
            "127.0.0.2",
            "--add-sql-package",
            "/p@q",
        ]))
        .unwrap();
        assert!(line.common.no_ftrace_raw);
        assert_eq!(line.common.add_sql_package, ["/p@q"]);
        match line.command {
            TpCommand::Server(s) => {
                assert_eq!(
                    (s.port, s.ip_address.as_deref()),
                    (Some(4242), Some("127.0.0.2"))
                )
            }
            other => panic!("{other:?}"),
        }
        let line = TpCommandLine::try_parse_from(argv(&["query", "t.pb", "SELECT 1"])).unwrap();
        match line.command {
            TpCommand::Query(q) => assert_eq!(q.sql.as_deref(), Some("SELECT 1")),
            other => panic!("{other:?}"),
        }
        let e = TpCommandLine::try_parse_from(argv(&["server", "stdio"])).unwrap_err();
        assert!(e.to_string().contains("stdio"), "{e}");
    }

    #[test]
    fn crop_track_events_parses_in_both_forms() {
        let a = parse(&["--crop-track-events", "t.pftrace", "-q", "q.sql"]).unwrap();
        assert!(a.crop_track_events);
        assert!(!parse(&["t.pftrace"]).unwrap().crop_track_events);
        let line = TpCommandLine::try_parse_from(argv(&[
            "query",
            "t.pb",
            "SELECT 1",
            "--crop-track-events",
        ]))
        .unwrap();
        assert!(line.common.crop_track_events);
    }

    #[test]
    fn load_threads_is_a_positive_count() {
        let a = parse(&["--load-threads", "3", "t.pftrace"]).unwrap();
        assert_eq!(a.load_threads, Some(3));
        assert_eq!(parse(&["t.pftrace"]).unwrap().load_threads, None);
        assert!(parse(&["--load-threads", "0", "t.pftrace"]).is_err());
        assert!(parse(&["--load-threads", "many", "t.pftrace"]).is_err());
    }

    #[test]
    fn unknown_flags_are_refused_by_name() {
        for flag in ["--summary", "-x", "--dev-nothing"] {
            let e = parse(&[flag]).unwrap_err();
            assert!(e.to_string().contains(flag), "{e}");
        }
    }

    #[test]
    fn the_version_names_the_rpc_api_version() {
        assert!(version_text().ends_with("Trace Processor RPC API version: 14\n"));
    }
}

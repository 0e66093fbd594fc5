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
//! - `-v` / `--version`: the version and the RPC API version, as the shell
//!   prints them.
//!
//! Any other flag is refused by name (exit 2), as the shell refuses it.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

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

/// Runs `zerotrace-tp`.
pub fn main() -> ExitCode {
    let args = TpArgs::parse();
    match run(&args) {
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
            max_memory: None,
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
    let addr = format!(
        "{}:{}",
        args.http_ip_address.as_deref().unwrap_or(DEFAULT_IP),
        args.http_port
            .map_or_else(|| DEFAULT_PORT.to_owned(), |p| p.to_string())
    );
    let options = ServerOptions {
        extra_origins: args.http_additional_cors_origins.clone(),
        log: false,
        serve_remote_peers: args.insecure_serve_remote_peers,
        first_request_timeout: None,
    };
    let load = LoadOptions {
        ftrace_raw: !args.no_ftrace_raw,
        sql_file_access: args.allow_sql_file_access,
        ..LoadOptions::default()
    };
    let limit = super::serve::query_timeout(args.query_timeout)?;
    serve(args.trace.as_deref(), &addr, options, load, limit)
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
    fn unknown_flags_are_refused_by_name() {
        for flag in ["--summary", "-x", "--dev"] {
            let e = parse(&[flag]).unwrap_err();
            assert!(e.to_string().contains(flag), "{e}");
        }
    }

    #[test]
    fn the_version_names_the_rpc_api_version() {
        assert!(version_text().ends_with("Trace Processor RPC API version: 14\n"));
    }
}

//! `zerotrace sql TRACE`: load a trace into Perfetto's tables with
//! zerotrace-trace-processor and answer SQL over it. `-Q SQL` or `-q FILE`
//! print what Perfetto's `trace_processor_shell` prints for the same
//! flags: the last statement's rows as CSV. Bad SQL is a usage error with
//! the byte SQLite points at; a trace that does not load is a bad trace.
//! The interactive prompt is not here yet: one of `-Q`/`-q` is required.

use std::path::PathBuf;

use zerotrace_trace_processor::{Error, TraceProcessor, shell_csv};

use super::{CliError, print_out};

/// `zerotrace sql`'s arguments.
#[derive(Debug, clap::Args)]
pub struct SqlArgs {
    /// The trace file (protobuf, plain or gzip-compressed).
    pub trace: PathBuf,
    /// The SQL to run.
    #[arg(short = 'Q', long = "query-string", conflicts_with = "query_file")]
    pub query_string: Option<String>,
    /// A file holding the SQL to run.
    #[arg(short = 'q', long = "query-file")]
    pub query_file: Option<PathBuf>,
}

/// Runs the command.
pub fn run(args: &SqlArgs) -> Result<(), CliError> {
    let sql = match (&args.query_string, &args.query_file) {
        (Some(s), _) => s.clone(),
        (None, Some(f)) => std::fs::read_to_string(f).map_err(|e| CliError::io(f.display(), e))?,
        (None, None) => {
            return Err(CliError::Usage(
                "give the SQL with -Q 'SQL' or -q FILE (the interactive prompt is not implemented yet)"
                    .into(),
            ));
        }
    };
    let path = args.trace.display().to_string();
    let tp = TraceProcessor::open(&args.trace).map_err(|e| match e {
        Error::Io(e) => CliError::io(&path, e),
        other => CliError::BadTrace {
            path: path.clone(),
            reason: other.to_string(),
        },
    })?;
    let result = tp.query(&sql).map_err(|e| CliError::Usage(e.to_string()))?;
    print_out(shell_csv(&result).as_bytes())
}

//! `zerotrace sql --httpd [ADDR]` and `zerotrace-tp -D`: the trace (if
//! one is given) loaded into an RPC session and served over HTTP as
//! `trace_processor_shell --httpd` serves it (`crate::tp_httpd`). The
//! session's SQL touches no file unless `--allow-sql-file-access` was
//! given: the trace given, the empty one served before any `/parse`, and
//! those sent later all carry the load options.

use std::path::Path;
use std::time::Duration;

use zerotrace_trace_processor::rpc::RpcSession;
use zerotrace_trace_processor::{LoadOptions, Loader, SqlPackage, TraceProcessor};

use super::load;
use crate::commands::CliError;
use crate::tp_httpd::{BindError, Server, ServerOptions};

/// `--query-timeout SECONDS` as a limit (none when not given).
pub fn query_timeout(seconds: Option<f64>) -> Result<Option<Duration>, CliError> {
    seconds
        .map(|s| {
            Duration::try_from_secs_f64(s).map_err(|_| {
                CliError::Usage(format!("--query-timeout {s}: not a number of seconds"))
            })
        })
        .transpose()
}

/// Loads `trace` (when given) and serves it on `addr` until killed;
/// `load` says what it and the traces sent later keep, `query_timeout`
/// how long a client's query may run, `sql_packages` the users' packages
/// every trace it serves gets.
pub fn serve(
    trace: Option<&Path>,
    addr: &str,
    options: ServerOptions,
    load_options: LoadOptions,
    query_timeout: Option<Duration>,
    sql_packages: Vec<SqlPackage>,
) -> Result<(), CliError> {
    let mut session = match trace {
        Some(path) => {
            let tp = load(path, load_options)?;
            let name = path.file_name().map_or_else(
                || path.display().to_string(),
                |n| n.to_string_lossy().into_owned(),
            );
            super::packages::add(&tp, &sql_packages)?;
            RpcSession::with_trace(tp, Some(name))
        }
        None => {
            let tp = TraceProcessor::from_storage_with_options(
                Loader::new()
                    .finish()
                    .map_err(|e| CliError::Usage(e.to_string()))?,
                load_options,
            )
            .map_err(|e| CliError::Usage(e.to_string()))?;
            super::packages::add(&tp, &sql_packages)?;
            RpcSession::with_trace(tp, None)
        }
    };
    session.set_load_options(load_options);
    session.set_sql_packages(sql_packages);
    session.set_query_timeout(query_timeout);
    let server = Server::bind(addr, session, options).map_err(|e| match e {
        BindError::Io(e) => CliError::io(addr, e),
        refused => CliError::Usage(refused.to_string()),
    })?;
    let bound = server.local_addr().map_err(|e| CliError::io(addr, e))?;
    eprintln!(
        "[HTTP] serving Perfetto's trace processor RPC on http://{bound} \
         (Python: perfetto.TraceProcessor(addr='{bound}'))"
    );
    server.run().map_err(|e| CliError::io(addr, e))
}

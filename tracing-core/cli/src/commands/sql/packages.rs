//! `--add-sql-package PATH[@PACKAGE]` on `zerotrace sql`, `zerotrace-tp`
//! and their RPC servers: each argument read into a package of the user's
//! modules before any trace loads (so that a bad directory or file is a
//! usage error naming it, exit 1, whatever else was asked), then
//! registered on each trace processor the command builds; a package whose
//! name clashes with a built-in one is refused there, by name.

use zerotrace_trace_processor::{SqlPackage, TraceProcessor};

use crate::commands::CliError;

/// Reads every `--add-sql-package` argument.
pub fn read(args: &[String]) -> Result<Vec<SqlPackage>, CliError> {
    args.iter()
        .map(|a| SqlPackage::from_arg(a).map_err(|e| CliError::Usage(e.to_string())))
        .collect()
}

/// Registers `packages` on `tp`.
pub fn add(tp: &TraceProcessor, packages: &[SqlPackage]) -> Result<(), CliError> {
    for p in packages {
        tp.add_sql_package(p.clone())
            .map_err(|e| CliError::Usage(e.to_string()))?;
    }
    Ok(())
}

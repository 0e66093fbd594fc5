//! Repository task runner (`cargo xtask <task>`): jobs that need the whole
//! workspace, such as regenerating the checked-in protobuf code, kept out of
//! build scripts so normal builds stay fast and offline.

mod codegen;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Workspace tasks.
#[derive(Debug, Parser)]
#[command(name = "cargo xtask", about = "zerotrace workspace tasks")]
struct Cli {
    #[command(subcommand)]
    task: Task,
}

#[derive(Debug, Subcommand)]
enum Task {
    /// Regenerate protos/src/generated from protos/proto.
    Codegen {
        /// Do not write; fail (exit 1) and list the files that are stale.
        #[arg(long)]
        check: bool,
    },
}

/// The workspace root (the parent of this crate's directory).
fn workspace_root() -> PathBuf {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().map(PathBuf::from).unwrap_or(manifest)
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.task {
        Task::Codegen { check } => codegen::run(&workspace_root(), check),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

//! `zerotrace record --background`: the recorder goes on in a process of
//! its own, but only once its session is running. A bad config, a service
//! that is not there or a session the service refuses is an error of the
//! command the user typed, with its exit code, not a silent child that
//! dies later.
//!
//! The parent starts the same command line without `--background` in a
//! new process group (the terminal's Ctrl-C does not reach it), reads the
//! child's stderr and passes it on until the child says its session has
//! started ([`READY`]); then it prints the child's pid and returns 0. If
//! the child exits first, its lines and its exit code are the command's.
//! Once started, the child sends its stderr to `/dev/null`: nothing reads
//! it any more.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use super::CliError;

/// Set in the child's environment: it is the background recorder.
const CHILD_ENV: &str = "ZEROTRACE_BACKGROUND_CHILD";

/// The line the child writes to stderr once its session has started.
const READY: &str = "zerotrace: background session started";

/// Whether this process is the recorder a `--background` parent started.
pub(super) fn is_child() -> bool {
    std::env::var_os(CHILD_ENV).is_some_and(|v| v == "1")
}

/// In the child: says that the session has started, and stops writing to
/// the parent (which exits now).
pub(super) fn started() {
    eprintln!("{READY}");
    if let Ok(null) = std::fs::OpenOptions::new().write(true).open("/dev/null") {
        let _ = rustix::stdio::dup2_stderr(&null);
    }
}

/// In the parent: starts the child and waits until its session runs (or it
/// fails); prints its pid.
pub(super) fn start() -> Result<(), CliError> {
    let exe = std::env::current_exe().map_err(|e| CliError::io("the zerotrace binary", e))?;
    let rest: Vec<std::ffi::OsString> = std::env::args_os()
        .skip(1)
        .filter(|a| a != "--background")
        .collect();
    let mut cmd = Command::new(exe);
    cmd.args(rest)
        .env(CHILD_ENV, "1")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    let mut child = cmd
        .spawn()
        .map_err(|e| CliError::io("the background recorder", e))?;
    let Some(err) = child.stderr.take() else {
        return Err(CliError::io("the background recorder", "no stderr pipe"));
    };
    let mut lines = BufReader::new(err);
    let mut line = String::new();
    let mut said = std::io::stderr().lock();
    loop {
        line.clear();
        match lines.read_line(&mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        if line.trim_end() == READY {
            println!("{}", child.id());
            return Ok(());
        }
        let _ = said.write_all(line.as_bytes());
    }
    drop(said);
    let status = child
        .wait()
        .map_err(|e| CliError::io("the background recorder", e))?;
    Err(CliError::Background {
        code: status.code().and_then(|c| u8::try_from(c).ok()),
    })
}

//! `zerotrace sql`'s interactive prompt: rustyline's line editing and
//! history around the terminal-free [`Session`]. The history lives in
//! `$XDG_STATE_HOME/zerotrace/sql_history`, else
//! `~/.local/state/zerotrace/sql_history`; with neither variable set there
//! is no history file.

use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use rustyline::error::ReadlineError;
use zerotrace_trace_processor::TraceProcessor;

use super::format::Format;
use super::session::{Output, Session, Step};
use crate::commands::CliError;

/// Lines of history kept.
const HISTORY_LINES: usize = 1000;

/// The history file for these values of `XDG_STATE_HOME` and `HOME` (a
/// relative `XDG_STATE_HOME` is ignored, as the XDG spec says).
pub fn history_path(xdg_state_home: Option<OsString>, home: Option<OsString>) -> Option<PathBuf> {
    let base = match xdg_state_home.map(PathBuf::from) {
        Some(x) if x.is_absolute() => x,
        _ => PathBuf::from(home.filter(|h| !h.is_empty())?).join(".local/state"),
    };
    Some(base.join("zerotrace").join("sql_history"))
}

/// Writes a session's output to the terminal.
fn show(o: Output) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(o.out.as_bytes());
    let _ = out.flush();
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(o.err.as_bytes());
    let _ = err.flush();
}

/// Runs the prompt until `.quit` or Ctrl-D.
pub fn run(tp: &TraceProcessor, format: Format) -> Result<(), CliError> {
    let config = rustyline::Config::builder()
        .max_history_size(HISTORY_LINES)
        .map_err(|e| CliError::io("terminal", e))?
        .build();
    let mut editor =
        rustyline::DefaultEditor::with_config(config).map_err(|e| CliError::io("terminal", e))?;
    let history = history_path(std::env::var_os("XDG_STATE_HOME"), std::env::var_os("HOME"));
    if let Some(h) = &history {
        // A first run has no history yet.
        let _ = editor.load_history(h);
    }
    eprintln!("Statements end with `;`. .help lists the commands, .quit (or Ctrl-D) leaves.");
    let started = Instant::now();
    let mut session = Session::new(tp, format, true, move || started.elapsed());
    // The lines of the statement being typed: one history entry once it
    // is complete, so that Up recalls the whole statement.
    let mut typed = String::new();
    loop {
        match editor.readline(session.prompt()) {
            Ok(line) => {
                if !typed.is_empty() {
                    typed.push('\n');
                }
                typed.push_str(&line);
                let mut o = Output::default();
                let step = session.line(&line, &mut o);
                if session.is_fresh() {
                    if !typed.trim().is_empty() {
                        let _ = editor.add_history_entry(typed.as_str());
                    }
                    typed.clear();
                }
                show(o);
                if step == Step::Quit {
                    break;
                }
            }
            Err(ReadlineError::Interrupted) => {
                session.interrupt();
                typed.clear();
            }
            Err(ReadlineError::Eof) => break,
            Err(e) => return Err(CliError::io("terminal", e)),
        }
    }
    if let Some(h) = &history {
        let saved = h
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .map_err(ReadlineError::from)
            .and_then(|()| editor.save_history(h));
        if let Err(e) = saved {
            eprintln!("zerotrace: history not saved to {}: {e}", h.display());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn history_goes_under_the_xdg_state_home_else_home() {
        let p = |x: Option<&str>, h: Option<&str>| {
            history_path(x.map(OsString::from), h.map(OsString::from))
        };
        assert_eq!(
            p(Some("/s"), Some("/h")),
            Some(PathBuf::from("/s/zerotrace/sql_history"))
        );
        assert_eq!(
            p(None, Some("/h")),
            Some(PathBuf::from("/h/.local/state/zerotrace/sql_history"))
        );
        assert_eq!(
            p(Some("relative"), Some("/h")),
            Some(PathBuf::from("/h/.local/state/zerotrace/sql_history"))
        );
        assert_eq!(p(None, None), None);
        assert_eq!(p(None, Some("")), None);
        assert_eq!(
            p(Some("/s"), None),
            Some(PathBuf::from("/s/zerotrace/sql_history"))
        );
    }
}

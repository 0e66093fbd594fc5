//! The core of `zerotrace sql`'s prompt and of its scripts on stdin, with
//! no terminal in it: a line of input in, text for stdout and stderr out.
//! Statements may span lines and run when their `;` arrives; a line
//! starting with `.` between statements is a dot command (`.help`,
//! `.tables`, `.schema`, `.modules`, `.format`, `.read`, `.quit`). At the
//! prompt each
//! result is followed by its row count and the time the query took, and
//! an error leaves the prompt running; a script stops at its first error.
//! The rustyline driver (`prompt.rs`) and the stdin reader (`mod.rs`) are
//! thin loops over [`Session::line`].

use std::time::Duration;

use zerotrace_trace_processor::TraceProcessor;

use super::errors::describe_query_error;
use super::format::{Format, render};
use super::statements::{is_blank, split};

/// How deep `.read` files may read further files.
const MAX_READ_DEPTH: usize = 16;

/// What [`Session::line`] says to do next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Read another line.
    Continue,
    /// Stop: `.quit`, or an error in a script.
    Quit,
}

/// Text to print, for stdout and stderr.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Output {
    /// For stdout: results, listings, help.
    pub out: String,
    /// For stderr: errors, and at the prompt each query's row count and time.
    pub err: String,
}

/// One session over a loaded trace.
pub struct Session<'a> {
    tp: &'a TraceProcessor,
    format: Format,
    interactive: bool,
    /// The unfinished statement typed so far.
    pending: String,
    /// Time since some fixed start (injected so that tests need no clock).
    clock: Box<dyn FnMut() -> Duration + 'a>,
    /// Whether any statement or command failed.
    failed: bool,
    /// How many `.read` files are being read.
    depth: usize,
}

impl std::fmt::Debug for Session<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("format", &self.format)
            .field("interactive", &self.interactive)
            .field("pending", &self.pending)
            .finish_non_exhaustive()
    }
}

/// `.help`'s text.
const HELP: &str = "\
Statements end with `;` and may span lines. Commands:
  .help                      this text
  .tables                    the tables and views
  .schema [TABLE]            the columns and types of TABLE (or of every table)
  .modules [PREFIX]          the modules INCLUDE PERFETTO MODULE can name (built-in
                             and --add-sql-package), each with its public tables,
                             views, functions and macros
  .format [table|csv|json]   how results print (without an argument: the current one)
  .read FILE                 run the statements and commands in FILE
  .quit                      leave (also .exit, or Ctrl-D)
";

impl<'a> Session<'a> {
    /// A session printing results in `format`; `interactive` adds row
    /// counts and times and keeps going after errors. `clock` tells the
    /// time elapsed since any fixed instant.
    pub fn new(
        tp: &'a TraceProcessor,
        format: Format,
        interactive: bool,
        clock: impl FnMut() -> Duration + 'a,
    ) -> Self {
        Session {
            tp,
            format,
            interactive,
            pending: String::new(),
            clock: Box::new(clock),
            failed: false,
            depth: 0,
        }
    }

    /// The prompt for the next line: a fresh one, or one continuing a
    /// statement.
    pub fn prompt(&self) -> &'static str {
        if self.is_fresh() {
            "zerotrace> "
        } else {
            "       ...> "
        }
    }

    /// Whether no statement is being typed (the next line starts one).
    pub fn is_fresh(&self) -> bool {
        self.pending.is_empty()
    }

    /// Whether a statement or command failed.
    pub fn failed(&self) -> bool {
        self.failed
    }

    /// Ctrl-C at the prompt: forgets the unfinished statement.
    pub fn interrupt(&mut self) {
        self.pending.clear();
    }

    /// Takes one line of input (without its newline).
    pub fn line(&mut self, line: &str, o: &mut Output) -> Step {
        if self.pending.is_empty() {
            let t = line.trim();
            if t.starts_with('.') {
                return self.command(t, o);
            }
            if is_blank(line) {
                return Step::Continue;
            }
        }
        self.pending.push_str(line);
        self.pending.push('\n');
        let text = std::mem::take(&mut self.pending);
        let (statements, rest) = split(&text);
        for s in statements {
            if !is_blank(s) && !self.run(s.trim_start(), o) && !self.interactive {
                return Step::Quit;
            }
        }
        if !is_blank(rest) {
            self.pending = rest.trim_start().to_owned();
        }
        Step::Continue
    }

    /// The end of the input: runs an unfinished last statement as it is.
    pub fn end(&mut self, o: &mut Output) {
        let rest = std::mem::take(&mut self.pending);
        if !is_blank(&rest) {
            self.run(rest.trim_start(), o);
        }
    }

    /// Runs one statement; whether it succeeded.
    fn run(&mut self, sql: &str, o: &mut Output) -> bool {
        let start = (self.clock)();
        match self.tp.query(sql) {
            Ok(r) => {
                let took = (self.clock)().saturating_sub(start);
                o.out.push_str(&render(&r, self.format));
                if self.interactive {
                    let n = r.rows.len();
                    let rows = if n == 1 { "row" } else { "rows" };
                    o.err
                        .push_str(&format!("{n} {rows} ({})\n", duration(took)));
                }
                true
            }
            Err(e) => {
                o.err.push_str(&describe_query_error(sql, &e));
                o.err.push('\n');
                self.failed = true;
                false
            }
        }
    }

    /// An error of a dot command.
    fn command_error(&mut self, message: &str, o: &mut Output) -> Step {
        o.err.push_str(message);
        o.err.push('\n');
        self.failed = true;
        if self.interactive {
            Step::Continue
        } else {
            Step::Quit
        }
    }

    /// A dot command, `line` trimmed.
    fn command(&mut self, line: &str, o: &mut Output) -> Step {
        let mut words = line.split_whitespace();
        let name = words.next().unwrap_or("");
        let arg = line[name.len()..].trim();
        match name {
            ".help" => o.out.push_str(HELP),
            ".quit" | ".exit" => return Step::Quit,
            ".tables" => match self.tp.table_names() {
                Ok(names) => {
                    for n in names {
                        o.out.push_str(&n);
                        o.out.push('\n');
                    }
                }
                Err(e) => return self.command_error(&e.to_string(), o),
            },
            ".schema" => return self.schema(arg, o),
            ".modules" => return self.modules(arg, o),
            ".format" if arg.is_empty() => {
                o.out.push_str(self.format.name());
                o.out.push('\n');
            }
            ".format" => match Format::parse(arg) {
                Some(f) => self.format = f,
                None => {
                    return self
                        .command_error(&format!(".format: `{arg}` is not table, csv or json"), o);
                }
            },
            ".read" if arg.is_empty() => return self.command_error(".read: name a file", o),
            ".read" => return self.read(arg, o),
            _ => {
                return self.command_error(
                    &format!("unknown command `{name}` (.help lists the commands)"),
                    o,
                );
            }
        }
        Step::Continue
    }

    /// `.schema [TABLE]`.
    fn schema(&mut self, table: &str, o: &mut Output) -> Step {
        let names = if table.is_empty() {
            match self.tp.table_names() {
                Ok(n) => n,
                Err(e) => return self.command_error(&e.to_string(), o),
            }
        } else {
            vec![table.to_owned()]
        };
        for name in names {
            let columns = match self.tp.columns(&name) {
                Ok(Some(c)) => c,
                Ok(None) => return self.command_error(&format!("no such table: {name}"), o),
                Err(e) => return self.command_error(&e.to_string(), o),
            };
            let width = columns.iter().map(|c| c.name.len()).max().unwrap_or(0);
            o.out.push_str(&name);
            o.out.push('\n');
            for c in columns {
                let line = format!("  {:width$}  {}", c.name, c.sql_type);
                o.out.push_str(line.trim_end());
                o.out.push('\n');
            }
        }
        Step::Continue
    }

    /// `.modules [PREFIX]`: each module (whose name starts with PREFIX),
    /// then its public objects indented, read from the module index table
    /// (`__intrinsic_stdlib_objects`).
    fn modules(&mut self, prefix: &str, o: &mut Output) -> Step {
        let index = match self.tp.query(
            "SELECT module, object_type, name FROM __intrinsic_stdlib_objects WHERE exposed = 1",
        ) {
            Ok(r) => r,
            Err(e) => return self.command_error(&format!(".modules: {e}"), o),
        };
        let text = |v: &zerotrace_trace_processor::Value| match v {
            zerotrace_trace_processor::Value::Text(t) => t.clone(),
            _ => String::new(),
        };
        for row in &index.rows {
            let [module, kind, name] = [0, 1, 2].map(|i| row.get(i).map(text).unwrap_or_default());
            if !module.starts_with(prefix) {
                continue;
            }
            let line = if kind == "MODULE" {
                format!(
                    "{module}
"
                )
            } else {
                format!(
                    "  {kind:<14} {name}
"
                )
            };
            o.out.push_str(&line);
        }
        Step::Continue
    }

    /// `.read FILE`: its lines as if typed, stopping at its first error.
    fn read(&mut self, path: &str, o: &mut Output) -> Step {
        if self.depth >= MAX_READ_DEPTH {
            return self.command_error(
                &format!(
                    ".read {path}: files nested {MAX_READ_DEPTH} deep (does one read itself?)"
                ),
                o,
            );
        }
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) => return self.command_error(&format!(".read {path}: {e}"), o),
        };
        let interactive = self.interactive;
        // Within the file, the first error stops it.
        self.interactive = false;
        self.depth += 1;
        let failed_before = self.failed;
        self.failed = false;
        let mut step = Step::Continue;
        for line in text.lines() {
            step = self.line(line, o);
            if step == Step::Quit {
                break;
            }
        }
        if step == Step::Continue {
            self.end(o);
        } else {
            self.pending.clear();
        }
        let failed_here = self.failed;
        self.depth -= 1;
        self.interactive = interactive;
        self.failed = failed_before || failed_here;
        match (failed_here, interactive) {
            // `.quit` in a file, or an error in a script's file.
            (false, _) | (true, false) => step,
            // An error in a file read at the prompt: back to the prompt.
            (true, true) => Step::Continue,
        }
    }
}

/// A query's time as the prompt prints it.
fn duration(d: Duration) -> String {
    let ms = d.as_secs_f64() * 1e3;
    if ms < 1000.0 {
        format!("{ms:.3} ms")
    } else {
        format!("{:.3} s", ms / 1e3)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A clock that moves 1.5 ms each time it is read.
    fn ticking() -> impl FnMut() -> Duration {
        let mut t = Duration::ZERO;
        move || {
            t += Duration::from_micros(1500);
            t
        }
    }

    fn feed(s: &mut Session<'_>, lines: &[&str]) -> (Output, Step) {
        let mut o = Output::default();
        let mut step = Step::Continue;
        for l in lines {
            step = s.line(l, &mut o);
            if step == Step::Quit {
                break;
            }
        }
        (o, step)
    }

    fn tp() -> TraceProcessor {
        TraceProcessor::from_bytes(&[]).unwrap()
    }

    #[test]
    fn statements_span_lines_and_run_at_their_semicolon() {
        let tp = tp();
        let mut s = Session::new(&tp, Format::Table, true, ticking());
        assert_eq!(s.prompt(), "zerotrace> ");
        let (o, _) = feed(&mut s, &["SELECT utid,", "  tid FROM thread"]);
        assert_eq!(o, Output::default());
        assert_eq!(s.prompt(), "       ...> ");
        let (o, step) = feed(&mut s, &["; SELECT 2 AS b; SELECT"]);
        assert_eq!(step, Step::Continue);
        assert_eq!(o.out, "utid  tid\n----  ---\n   0    0\nb\n-\n2\n");
        assert_eq!(o.err, "1 row (1.500 ms)\n1 row (1.500 ms)\n");
        assert_eq!(s.prompt(), "       ...> ");
        s.interrupt();
        assert_eq!(s.prompt(), "zerotrace> ");
        // Blank lines and comments alone are no statement.
        let (o, _) = feed(&mut s, &["", "  -- note", ";"]);
        assert_eq!(o, Output::default());
        assert_eq!(s.prompt(), "zerotrace> ");
    }

    #[test]
    fn errors_show_the_spot_and_the_prompt_goes_on() {
        let tp = tp();
        let mut s = Session::new(&tp, Format::Csv, true, ticking());
        let (o, step) = feed(&mut s, &["SELECT", "  nope FROM thread;", "SELECT 1 AS a;"]);
        assert_eq!(step, Step::Continue);
        assert_eq!(
            o.err,
            "SQL error at line 2, column 3: no such column: nope\n    nope FROM thread;\n    ^\n1 row (1.500 ms)\n"
        );
        assert_eq!(o.out, "\"a\"\n1\n");
        assert!(s.failed());
    }

    #[test]
    fn a_script_stops_at_its_first_error_and_prints_no_counts() {
        let tp = tp();
        let mut s = Session::new(&tp, Format::Csv, false, ticking());
        let (o, step) = feed(&mut s, &["SELECT 1 AS a; SELEC 2;", "SELECT 3;"]);
        assert_eq!(step, Step::Quit);
        assert_eq!(o.out, "\"a\"\n1\n");
        assert!(
            o.err
                .starts_with("SQL error at line 1, column 1: near \"SELEC\""),
            "{}",
            o.err
        );
        // An unfinished last statement runs at the end.
        let mut s = Session::new(&tp, Format::Json, false, ticking());
        let (mut o, _) = feed(&mut s, &["SELECT 5 AS five"]);
        assert_eq!(o.out, "");
        s.end(&mut o);
        assert_eq!(o.out, "[\n{\"five\":5}\n]\n");
        assert!(!s.failed());
    }

    #[test]
    fn dot_commands() {
        let tp = tp();
        let mut s = Session::new(&tp, Format::Table, true, ticking());
        let (o, _) = feed(&mut s, &[".help"]);
        assert!(o.out.contains(".schema [TABLE]"));
        let (o, _) = feed(&mut s, &[".tables"]);
        let names: Vec<&str> = o.out.lines().collect();
        assert_eq!(names, tp.table_names().unwrap());
        assert!(names.contains(&"thread"));
        let (o, _) = feed(&mut s, &[".schema thread"]);
        assert!(o.out.starts_with("thread\n  utid "), "{}", o.out);
        let (o, _) = feed(&mut s, &[".schema __intrinsic_slice"]);
        assert!(
            o.out
                .lines()
                .any(|l| l.split_whitespace().eq(["ts", "BIGINT"])),
            "{}",
            o.out
        );
        let (o, _) = feed(&mut s, &[".schema"]);
        assert_eq!(
            o.out.lines().filter(|l| !l.starts_with(' ')).count(),
            names.len()
        );
        let (o, _) = feed(&mut s, &[".schema nope"]);
        assert_eq!(o.err, "no such table: nope\n");
        let (o, _) = feed(
            &mut s,
            &[".format", ".format json", ".format", "SELECT 1 AS a;"],
        );
        assert_eq!(o.out, "table\njson\n[\n{\"a\":1}\n]\n");
        let (o, step) = feed(&mut s, &[".format xml", ".frobnicate"]);
        assert_eq!(step, Step::Continue);
        assert_eq!(
            o.err,
            ".format: `xml` is not table, csv or json\nunknown command `.frobnicate` (.help lists the commands)\n"
        );
        // A dot inside a statement is SQL.
        let (o, _) = feed(&mut s, &["SELECT", ".5 AS h;"]);
        assert_eq!(o.out, "[\n{\"h\":0.5}\n]\n");
        let (_, step) = feed(&mut s, &[".quit", "SELECT 1;"]);
        assert_eq!(step, Step::Quit);
        let (_, step) = feed(&mut s, &["  .exit"]);
        assert_eq!(step, Step::Quit);
    }

    #[test]
    fn modules_lists_each_module_with_its_public_objects() {
        let tp = tp();
        let mut s = Session::new(&tp, Format::Table, true, ticking());
        let (o, _) = feed(&mut s, &[".modules time.conversion"]);
        assert!(
            o.out.starts_with("time.conversion\n  FUNCTION "),
            "{}",
            o.out
        );
        assert!(o.out.contains("  FUNCTION       time_to_ns\n"), "{}", o.out);
        let (o, _) = feed(&mut s, &[".modules"]);
        assert!(o.out.lines().any(|l| l == "time.conversion"), "{}", o.out);
        assert!(o.out.lines().any(|l| l == "slices.with_context"));
        assert!(
            o.out.contains("  VIEW           thread_slice\n"),
            "{}",
            o.out
        );
        assert!(o.err.is_empty(), "{}", o.err);
    }

    #[test]
    fn read_runs_a_file_and_stops_at_its_first_error() {
        let dir = std::env::temp_dir().join(format!("zerotrace-sql-read-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let good = dir.join("good.sql");
        std::fs::write(&good, ".format csv\nSELECT 1 AS a;\nSELECT 2\n  AS b").unwrap();
        let bad = dir.join("bad.sql");
        std::fs::write(&bad, "SELECT 1 AS a;\nSELECT nope;\nSELECT 3 AS c;\n").unwrap();
        let itself = dir.join("self.sql");
        std::fs::write(&itself, format!(".read {}\n", itself.display())).unwrap();
        let tp = tp();
        let mut s = Session::new(&tp, Format::Table, true, ticking());
        let (o, _) = feed(&mut s, &[&format!(".read {}", good.display())]);
        assert_eq!(o.out, "\"a\"\n1\n\"b\"\n2\n");
        let (o, step) = feed(
            &mut s,
            &[&format!(".read {}", bad.display()), "SELECT 4 AS d;"],
        );
        assert_eq!(step, Step::Continue);
        assert_eq!(o.out, "\"a\"\n1\n\"d\"\n4\n");
        assert!(o.err.contains("no such column: nope"));
        let (o, _) = feed(&mut s, &[&format!(".read {}", itself.display())]);
        assert!(o.err.contains("nested 16 deep"), "{}", o.err);
        let (o, _) = feed(&mut s, &[".read /nonexistent/x.sql", ".read"]);
        assert!(o.err.starts_with(".read /nonexistent/x.sql: "), "{}", o.err);
        assert!(o.err.ends_with(".read: name a file\n"), "{}", o.err);
        // In a script, an error in a file read stops the script.
        let mut s = Session::new(&tp, Format::Csv, false, ticking());
        let (_, step) = feed(&mut s, &[&format!(".read {}", bad.display()), "SELECT 4;"]);
        assert_eq!(step, Step::Quit);
        assert!(s.failed());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn durations_read_in_ms_or_s() {
        assert_eq!(duration(Duration::from_micros(420)), "0.420 ms");
        assert_eq!(duration(Duration::from_millis(2500)), "2.500 s");
    }
}

//! The `zerotrace` command's trace readers (`dump`, `stats`,
//! `convert --json`) on a hostile trace file, through the command's public
//! entry point ([`zerotrace_cli::commands::run`]).
//!
//! Invariants: no command panics; each either succeeds or fails with
//! "invalid trace" (exit code 5), never another error; `stats` and
//! `convert` fail exactly when the file is not a sequence of well-formed
//! fields whose `packet` fields (1) are length-delimited (checked here
//! independently with the schema-less decoder), and `dump` fails whenever
//! they do; what `convert` writes is a JSON object with a `traceEvents`
//! array.

use std::path::Path;

use protozero::{Decoder, FieldValue};
use zerotrace_cli::commands::{Cli, CliError, Command, ConvertFormat, exit, run};

use crate::support::{ScratchDir, with_stdout_silenced};

/// The `trace_file` target: the input is the trace file.
pub fn trace_file(data: &[u8]) {
    let dir = ScratchDir::new("trace").expect("a scratch directory");
    let trace = dir.path().join("fuzz.pftrace");
    let json = dir.path().join("fuzz.json");
    std::fs::write(&trace, data).expect("write the input trace");

    let (dump, stats, convert) = with_stdout_silenced(|| {
        (
            command(Command::Dump {
                trace: trace.clone(),
            }),
            command(Command::Stats {
                trace: trace.clone(),
            }),
            command(Command::Convert {
                format: ConvertFormat::Json,
                json: true,
                heap: false,
                trace: trace.clone(),
                output: Some(json.clone()),
            }),
        )
    });
    for (name, result) in [("dump", &dump), ("stats", &stats), ("convert", &convert)] {
        if let Err(e) = result {
            assert!(
                matches!(e, CliError::BadTrace { .. }) && e.code() == exit::BAD_TRACE,
                "{name} failed other than with an invalid trace: {e}"
            );
        }
    }
    let framed = well_framed(data);
    assert_eq!(stats.is_ok(), framed, "stats: {stats:?}");
    assert_eq!(convert.is_ok(), framed, "convert: {convert:?}");
    if !framed {
        assert!(dump.is_err(), "dump accepted a malformed trace");
    }
    if convert.is_ok() {
        check_json(&json);
    }
}

/// Runs one subcommand (none of these reach the service).
fn command(command: Command) -> Result<(), CliError> {
    // These commands connect to no service (a --consumer-socket would be
    // a usage error).
    run(Cli {
        consumer_socket: None,
        command,
    })
}

/// Whether `data` is a sequence of fields (up to its end) whose field-1
/// occurrences are length-delimited: the framing every reader needs.
fn well_framed(data: &[u8]) -> bool {
    Decoder::new(data).all(|f| match f {
        Ok(f) => f.id != 1 || matches!(f.value, FieldValue::Bytes(_)),
        Err(_) => false,
    })
}

/// The converted file is a JSON object with a `traceEvents` array.
fn check_json(path: &Path) {
    let text = std::fs::read(path).expect("convert wrote its output");
    let value: serde_json::Value = match serde_json::from_slice(&text) {
        Ok(v) => v,
        Err(e) => panic!("convert wrote invalid JSON: {e}"),
    };
    assert!(
        value.get("traceEvents").is_some_and(|v| v.is_array()),
        "no traceEvents array"
    );
}

//! `genuine-consumer`: a Perfetto consumer built on the genuine C SDK
//! (system backend) that records one session from whatever tracing service
//! listens on `PERFETTO_CONSUMER_SOCK_NAME`, the way the SDK's system
//! tracing session does it: ObserveEvents + EnableTracing (start, waiting
//! for every data source to start), Flush, DisableTracing (stop, waiting
//! for the end), ReadBuffers, then it writes the trace file.
//!
//! Usage: `genuine-consumer --config FILE --out FILE [--wait-stdin]
//! [--flush-timeout-ms N]`. FILE holds an encoded `TraceConfig`. With
//! `--wait-stdin` it waits for a line (or end of file) on stdin between
//! starting and flushing, so the test decides when the producers are done;
//! without it, it stops right after starting. Progress goes to stdout, one
//! word a line: `started`, `flushed`, `stopped`, `written <bytes>`.

use std::io::{BufRead, Write};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use perfetto_sdk::producer::{Backends, Producer, ProducerInitArgsBuilder};
use perfetto_sdk::tracing_session::TracingSession;

fn say(line: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

fn main() {
    let mut config = None;
    let mut out = None;
    let mut wait_stdin = false;
    let mut flush_timeout = Duration::from_millis(5000);
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--config" => config = args.next(),
            "--out" => out = args.next(),
            "--wait-stdin" => wait_stdin = true,
            "--flush-timeout-ms" => {
                let ms = args.next().and_then(|v| v.parse().ok()).unwrap_or(5000);
                flush_timeout = Duration::from_millis(ms);
            }
            other => {
                eprintln!("genuine-consumer: unknown argument {other}");
                std::process::exit(64);
            }
        }
    }
    let (Some(config), Some(out)) = (config, out) else {
        eprintln!("usage: genuine-consumer --config FILE --out FILE [--wait-stdin]");
        std::process::exit(64);
    };
    let config = std::fs::read(&config).unwrap_or_else(|e| {
        eprintln!("genuine-consumer: reading {config}: {e}");
        std::process::exit(66);
    });

    Producer::init(
        ProducerInitArgsBuilder::new()
            .backends(Backends::SYSTEM)
            .build(),
    );
    let mut session = TracingSession::system().expect("create a system tracing session");
    session.setup(&config);
    session.start_blocking();
    say("started");
    if wait_stdin {
        let mut line = String::new();
        let _ = std::io::stdin().lock().read_line(&mut line);
    }
    session.flush_blocking(flush_timeout);
    say("flushed");
    session.stop_blocking();
    say("stopped");

    let trace = Arc::new(Mutex::new(Vec::new()));
    let sink = trace.clone();
    session.read_trace_blocking(move |data, _has_more| {
        sink.lock().unwrap().extend_from_slice(data);
    });
    let trace = std::mem::take(&mut *trace.lock().unwrap());
    std::fs::write(&out, &trace).unwrap_or_else(|e| {
        eprintln!("genuine-consumer: writing {out}: {e}");
        std::process::exit(73);
    });
    say(&format!("written {}", trace.len()));
}

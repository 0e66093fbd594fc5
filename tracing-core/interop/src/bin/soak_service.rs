//! The service of a soak (see `zerotrace_interop::soak`), in a process of
//! its own so that its memory is its alone: `soak_service --which
//! ours|genuine --dir D` runs `zerotraced`'s daemon or Perfetto's genuine
//! service on the sockets `D/producer` and `D/consumer`, prints `ready`
//! once both listen, and stops when its stdin closes.

use std::io::{Read, Write};
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::process::ExitCode;

use zerotrace_core::ipc::Endpoint;
use zerotrace_core::service::{Daemon, DaemonConfig};
use zerotrace_interop::genuine::GenuineService;

fn wait_for_stdin_eof() {
    let mut sink = [0u8; 64];
    let mut stdin = std::io::stdin();
    while matches!(stdin.read(&mut sink), Ok(n) if n > 0) {}
}

fn ready() {
    let mut out = std::io::stdout();
    let _ = writeln!(out, "ready");
    let _ = out.flush();
}

fn run(which: &str, dir: PathBuf) -> Result<(), String> {
    let producer = dir.join("producer");
    let consumer = dir.join("consumer");
    match which {
        "ours" => {
            let cfg = DaemonConfig {
                producer_sockets: vec![Endpoint::Path(producer)],
                consumer_socket: Endpoint::Path(consumer),
                log_level: 1,
                ..DaemonConfig::default()
            };
            let (mut stop, stop_rx) = UnixStream::pair().map_err(|e| e.to_string())?;
            let mut daemon = Daemon::bind(cfg, Some(OwnedFd::from(stop_rx)))
                .map_err(|e| format!("zerotraced: {e}"))?;
            std::thread::spawn(move || {
                wait_for_stdin_eof();
                let _ = stop.write_all(&[1]);
            });
            ready();
            daemon.run().map_err(|e| format!("zerotraced's loop: {e}"))
        }
        "genuine" => {
            let p = producer.to_str().ok_or("a non-UTF-8 path")?;
            let c = consumer.to_str().ok_or("a non-UTF-8 path")?;
            let svc = GenuineService::start(p, c).map_err(|e| e.to_string())?;
            ready();
            wait_for_stdin_eof();
            drop(svc);
            Ok(())
        }
        other => Err(format!("--which {other}: ours or genuine")),
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut which = None;
    let mut dir = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--which" => which = it.next().cloned(),
            "--dir" => dir = it.next().map(PathBuf::from),
            other => {
                eprintln!("soak_service: unknown argument {other}");
                return ExitCode::FAILURE;
            }
        }
    }
    let (Some(which), Some(dir)) = (which, dir) else {
        eprintln!("usage: soak_service --which ours|genuine --dir D");
        return ExitCode::FAILURE;
    };
    match run(&which, dir) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("soak_service: {e}");
            ExitCode::FAILURE
        }
    }
}

//! `zerotrace-probes`: the Linux probes (process and system stats, system
//! info) as a producer of any tracing service on Perfetto's producer
//! socket, `zerotraced` or Perfetto's `traced`, as `traced_probes` is.

use std::process::ExitCode;

use clap::Parser;
use zerotrace_core::ipc::{Endpoint, producer_socket_name};
use zerotrace_probes::producer::{ProbesOptions, ProbesProducer, Registry};

/// The zerotrace Linux probes (Perfetto's `traced_probes` data sources).
#[derive(Debug, Parser)]
#[command(name = "zerotrace-probes", version, about)]
struct Args {
    /// The service's producer socket: a path, `@abstract` or `host:port`
    /// [default: $PERFETTO_PRODUCER_SOCK_NAME, else Perfetto's]
    #[arg(long)]
    producer_socket: Option<String>,
    /// The producer's name as the service lists it
    #[arg(long, default_value = "zerotrace-probes")]
    name: String,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let socket = args.producer_socket.unwrap_or_else(producer_socket_name);
    let options = ProbesOptions {
        name: args.name,
        ..ProbesOptions::default()
    };
    let producer =
        match ProbesProducer::start(&Endpoint::parse(&socket), Registry::standard(), options) {
            Ok(p) => p,
            Err(e) => {
                eprintln!("zerotrace-probes: {e}");
                return ExitCode::FAILURE;
            }
        };
    // The client reconnects by itself; this thread only keeps it alive
    // until the process is killed.
    loop {
        std::thread::park();
        let _ = &producer;
    }
}

//! `zerotrace relay`: the command line of the relay (`crate::relay`), with
//! Perfetto's variables: `PERFETTO_RELAY_SOCK_NAME` names the central
//! service, `PERFETTO_PRODUCER_SOCK_NAME` the socket local producers use,
//! `PERFETTO_MACHINE_NAME` the machine's name; the machine id hint is the
//! kernel's boot id unless given.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use zerotrace_core::ipc::{Endpoint, producer_socket_name};
use zerotrace_core::platform::local_machine_name;
use zerotrace_core::relay::default_machine_id_hint;

use super::CliError;
use crate::relay::{Relay, RelayConfig};

/// `zerotrace relay`'s options.
#[derive(Debug, clap::Args)]
pub struct RelayArgs {
    /// The central service's producer socket, `host:port` (or a path for a
    /// service on this machine) [default: $PERFETTO_RELAY_SOCK_NAME]
    #[arg(long)]
    pub relay_socket: Option<String>,
    /// Where local producers connect [default: $PERFETTO_PRODUCER_SOCK_NAME,
    /// else Perfetto's]
    #[arg(long)]
    pub producer_socket: Option<String>,
    /// What the central service derives this machine's id from [default:
    /// the kernel's boot id]
    #[arg(long, value_name = "HINT")]
    pub machine_id_hint: Option<String>,
    /// This machine's name, what `machine_name_filter` matches [default:
    /// $PERFETTO_MACHINE_NAME, else the kernel's name]
    #[arg(long, value_name = "NAME")]
    pub machine_name: Option<String>,
}

/// The relay's configuration from the options and the environment.
pub fn config(args: RelayArgs) -> Result<RelayConfig, CliError> {
    let central = args
        .relay_socket
        .or_else(|| std::env::var("PERFETTO_RELAY_SOCK_NAME").ok())
        .filter(|s| !s.is_empty())
        .ok_or_else(|| {
            CliError::Usage(
                "no central service: pass --relay-socket HOST:PORT or set PERFETTO_RELAY_SOCK_NAME"
                    .into(),
            )
        })?;
    let central = Endpoint::parse(&central);
    let listen = Endpoint::parse(&args.producer_socket.unwrap_or_else(producer_socket_name));
    if listen == central {
        return Err(CliError::Usage(format!(
            "the relay cannot listen where it forwards to ({listen})"
        )));
    }
    let machine_id_hint = args
        .machine_id_hint
        .or_else(default_machine_id_hint)
        .ok_or_else(|| {
            CliError::Usage("no boot id on this system: pass --machine-id-hint HINT".into())
        })?;
    Ok(RelayConfig {
        listen,
        listen_mode: Some(0o666),
        central,
        machine_id_hint,
        machine_name: args.machine_name.unwrap_or_else(local_machine_name),
    })
}

/// Runs the relay until SIGINT or SIGTERM.
pub fn run(args: RelayArgs) -> Result<(), CliError> {
    let cfg = config(args)?;
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, stop.clone())
            .map_err(|e| CliError::Usage(format!("cannot handle signals: {e}")))?;
    }
    eprintln!(
        "zerotrace relay: producers on {}, forwarding to {} as machine {:?} (hint {})",
        cfg.listen, cfg.central, cfg.machine_name, cfg.machine_id_hint
    );
    let relay = Relay::start(cfg).map_err(|e| CliError::Usage(e.to_string()))?;
    while !stop.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(100));
    }
    relay.stop();
    Ok(())
}

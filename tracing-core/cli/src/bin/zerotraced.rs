//! `zerotraced`: the zerotrace tracing service, a drop-in for Perfetto's
//! `traced` on the producer and consumer sockets; with `--probes` it also
//! serves the Linux probes from its own process (Perfetto's `tracebox`).

use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;
use std::process::ExitCode;

use clap::Parser;
use zerotrace_core::daemon::{Daemon, DaemonConfig};
use zerotrace_core::ipc::Endpoint;
use zerotrace_core::ipc::{consumer_socket_name, producer_socket_name};
use zerotrace_probes::producer::{ProbesOptions, ProbesProducer, Registry};

/// The zerotrace tracing service (Perfetto's `traced` protocol).
#[derive(Debug, Parser)]
#[command(name = "zerotraced", version, about)]
struct Args {
    /// Producer socket(s), comma-separated: a path, `@abstract` or
    /// `host:port` [default: $PERFETTO_PRODUCER_SOCK_NAME, else Perfetto's]
    #[arg(long)]
    producer_socket: Option<String>,
    /// Consumer socket [default: $PERFETTO_CONSUMER_SOCK_NAME, else Perfetto's]
    #[arg(long)]
    consumer_socket: Option<String>,
    /// Permissions of the producer socket file, octal
    #[arg(long, default_value = "666")]
    producer_socket_mode: String,
    /// Permissions of the consumer socket file, octal (owner only by default)
    #[arg(long, default_value = "600")]
    consumer_socket_mode: String,
    /// Groups and modes of the socket files, as Perfetto's traced:
    /// `PRODUCER_GROUP:PRODUCER_MODE:CONSUMER_GROUP:CONSUMER_MODE` (groups
    /// by name or number, modes octal). With `...:tracers:660`, members of
    /// `tracers` may trace, through the consumer socket and the WebSocket
    #[arg(long, value_name = "PG:PM:CG:CM")]
    set_socket_permissions: Option<String>,
    /// Detach from the terminal and run in the background
    #[arg(long)]
    background: bool,
    /// More log output (repeat for more)
    #[arg(short, long, action = clap::ArgAction::Count)]
    verbose: u8,
    /// Only errors
    #[arg(short, long)]
    quiet: bool,
    /// Also serve the Linux probes (linux.ftrace, linux.process_stats,
    /// linux.sys_stats, linux.system_info, linux.perf) from this process, as Perfetto's
    /// tracebox does
    #[arg(long)]
    probes: bool,
    /// Serve the Perfetto UI's WebSocket on /traced, as Perfetto's
    /// websocket_bridge: ADDR, or localhost:8037 (127.0.0.1 and `[::1]`).
    /// Each WebSocket is a consumer with the uid of the local process on
    /// its other end (as the kernel tells), let in only if that uid could
    /// connect to the consumer socket (403 otherwise)
    #[arg(long, value_name = "ADDR", num_args = 0..=1,
          default_missing_value = zerotrace_cli::websocket::DEFAULT_ADDR)]
    websocket: Option<String>,
    /// Further origins the WebSocket lets in, comma-separated (besides the
    /// Perfetto UI's and a local UI's on port 10000)
    #[arg(long, value_name = "ORIGINS", requires = "websocket")]
    http_additional_cors_origins: Option<String>,
    /// RISK: also admit WebSocket peers whose uid the kernel does not vouch
    /// for (another machine, or no /proc/net entry). Any such peer that
    /// reaches the bridge may then record with every data source this
    /// service offers (ftrace, perf callstacks of every process) and read
    /// the traces back. Without it they get 403
    #[arg(long, requires = "websocket")]
    insecure_websocket_admit_unvouched_peers: bool,
    /// Serve RelayPort on every producer socket too, as Perfetto's flag:
    /// relays on other machines (`zerotrace relay`, Perfetto's
    /// traced_relay) describe their machine and sync their clocks there
    #[arg(long)]
    enable_relay_endpoint: bool,
}

fn mode(s: &str) -> Result<u32, String> {
    u32::from_str_radix(s, 8).map_err(|_| format!("invalid octal mode {s:?}"))
}

/// `--set-socket-permissions`: the producer and consumer sockets' groups
/// and modes.
fn socket_permissions(s: &str) -> Result<[(u32, u32); 2], String> {
    let parts: Vec<&str> = s.split(':').collect();
    let [pg, pm, cg, cm] = parts[..] else {
        return Err(format!(
            "--set-socket-permissions {s:?}: want PRODUCER_GROUP:PRODUCER_MODE:CONSUMER_GROUP:CONSUMER_MODE"
        ));
    };
    let group = |g: &str| {
        zerotrace_core::peer_policy::group_id(g)
            .ok_or_else(|| format!("--set-socket-permissions: no group {g:?}"))
    };
    Ok([(group(pg)?, mode(pm)?), (group(cg)?, mode(cm)?)])
}

fn main() -> ExitCode {
    let args = Args::parse();
    match run(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("zerotraced: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: Args) -> Result<(), String> {
    let producers = args.producer_socket.unwrap_or_else(|| {
        std::env::var("PERFETTO_PRODUCER_SOCK_NAME").unwrap_or_else(|_| producer_socket_name())
    });
    let consumer = args.consumer_socket.unwrap_or_else(consumer_socket_name);
    let perms = args
        .set_socket_permissions
        .as_deref()
        .map(socket_permissions)
        .transpose()?;
    let cfg = DaemonConfig {
        producer_sockets: producers
            .split(',')
            .filter(|s| !s.is_empty())
            .map(Endpoint::parse)
            .collect(),
        consumer_socket: Endpoint::parse(&consumer),
        producer_socket_mode: Some(match perms {
            Some([(_, m), _]) => m,
            None => mode(&args.producer_socket_mode)?,
        }),
        consumer_socket_mode: Some(match perms {
            Some([_, (_, m)]) => m,
            None => mode(&args.consumer_socket_mode)?,
        }),
        producer_socket_group: perms.map(|[(g, _), _]| g),
        consumer_socket_group: perms.map(|[_, (g, _)]| g),
        log_level: if args.quiet { 0 } else { 1 + args.verbose },
        relay_endpoint: args.enable_relay_endpoint,
        ..DaemonConfig::default()
    };
    if args.background {
        return background(&cfg.consumer_socket);
    }
    // SIGINT / SIGTERM write to this pair; the loop stops when it is readable.
    let (signal_tx, signal_rx) = UnixStream::pair().map_err(|e| e.to_string())?;
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        let tx = signal_tx.try_clone().map_err(|e| e.to_string())?;
        signal_hook::low_level::pipe::register(sig, tx).map_err(|e| e.to_string())?;
    }
    let mut daemon = Daemon::bind(cfg.clone(), Some(OwnedFd::from(signal_rx)))
        .map_err(|e| format!("cannot listen: {e}"))?;
    if cfg.log_level >= 2 {
        let names: Vec<String> = cfg
            .producer_sockets
            .iter()
            .map(ToString::to_string)
            .collect();
        eprintln!(
            "zerotraced: producers on {}, consumers on {}",
            names.join(","),
            cfg.consumer_socket
        );
    }
    // The probes connect to the first producer socket, which listens now;
    // they stop when the service does.
    let probes = if args.probes {
        // A TCP socket at port 0: the port the system picked.
        let socket = match daemon.producer_tcp_addr() {
            Some(addr) => Endpoint::Tcp(addr.to_string()),
            None => cfg
                .producer_sockets
                .first()
                .cloned()
                .ok_or("--probes needs a producer socket")?,
        };
        let probes = ProbesProducer::start(&socket, Registry::standard(), ProbesOptions::default())
            .map_err(|e| format!("cannot start the probes: {e}"))?;
        Some(probes)
    } else {
        None
    };
    // The UI's WebSocket: each connection a consumer of this service
    // through its door, with the identity the kernel gives its peer.
    let bridge = match &args.websocket {
        Some(addr) => {
            let extra = args
                .http_additional_cors_origins
                .as_deref()
                .unwrap_or("")
                .split(',')
                .filter(|o| !o.is_empty())
                .map(str::to_owned)
                .collect();
            let door = daemon
                .consumer_door()
                .map_err(|e| format!("cannot serve the websocket: {e}"))?;
            let limits = zerotrace_cli::websocket::Limits {
                admit_unvouched_peers: args.insecure_websocket_admit_unvouched_peers,
                ..Default::default()
            };
            if limits.admit_unvouched_peers && cfg.log_level >= 1 {
                eprintln!(
                    "zerotraced: WARNING: the WebSocket admits peers nobody vouches for: any \
                     peer that reaches {addr} may record with every data source and read traces"
                );
            }
            let b = zerotrace_cli::websocket::Bridge::start_with_limits(
                addr,
                zerotrace_cli::websocket::Target::Door(door),
                extra,
                cfg.log_level >= 1,
                limits,
            )
            .map_err(|e| format!("cannot serve the websocket on {addr}: {e}"))?;
            if cfg.log_level >= 1 {
                for a in b.local_addrs() {
                    eprintln!(
                        "zerotraced: the Perfetto UI can record through ws://{a}{}",
                        zerotrace_cli::websocket::TRACED_PATH
                    );
                }
            }
            Some(b)
        }
        None => None,
    };
    let result = daemon.run().map_err(|e| e.to_string());
    drop(bridge);
    drop(probes);
    result
}

/// Starts the service again as a detached process (its own process group,
/// no terminal), waits until its consumer socket accepts connections, and
/// prints its pid.
fn background(consumer: &Endpoint) -> Result<(), String> {
    use std::os::unix::process::CommandExt;
    use std::process::{Command, Stdio};
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--background")
        .collect();
    let child = Command::new(exe)
        .args(&args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .map_err(|e| format!("cannot start the service: {e}"))?;
    for _ in 0..200 {
        if zerotrace_core::ipc::connect(consumer).is_ok() {
            println!("{}", child.id());
            return Ok(());
        }
        std::thread::sleep(std::time::Duration::from_millis(25));
    }
    Err("the service did not start listening within 5 s".into())
}

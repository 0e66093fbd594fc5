//! The two tracing services the interop tests run side by side, each on a
//! fresh pair of unix sockets in a private directory: ours (`zerotraced`'s
//! `Daemon`, a [`DaemonThread`] of the test process) and Perfetto's genuine one
//! ([`GenuineService`], on its own task-runner thread).

use std::path::PathBuf;

use zerotrace_core::daemon::{DaemonConfig, DaemonThread};
use zerotrace_core::ipc::Endpoint;

use crate::genuine::GenuineService;

/// Which service.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Which {
    /// zerotrace's `zerotraced`.
    Zerotraced,
    /// Perfetto's genuine service.
    Genuine,
}

enum Running {
    Ours(Option<DaemonThread>),
    Genuine(Option<GenuineService>),
}

/// A running service and its socket names; dropping it stops the service
/// and removes its directory.
pub struct Service {
    /// Which one it is.
    pub which: Which,
    /// Its producer socket (a path).
    pub producer: String,
    /// Its consumer socket (a path).
    pub consumer: String,
    /// Its private directory (tests may put files there).
    pub dir: PathBuf,
    /// Its relay endpoint (`127.0.0.1:PORT`, a producer socket that also
    /// serves RelayPort), when started with one.
    pub relay: Option<String>,
    running: Running,
}

impl std::fmt::Debug for Service {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Service")
            .field("which", &self.which)
            .field("producer", &self.producer)
            .finish_non_exhaustive()
    }
}

impl Service {
    /// Starts `which` on sockets in a new directory named after `name`;
    /// both listen when this returns.
    pub fn start(which: Which, name: &str) -> Service {
        Service::start_inner(which, name, false)
    }

    /// As [`Service::start`], with a relay endpoint too (`--enable-relay-endpoint`
    /// on a loopback TCP producer socket): [`Service::relay`].
    pub fn start_with_relay(which: Which, name: &str) -> Service {
        Service::start_inner(which, name, true)
    }

    fn start_inner(which: Which, name: &str, with_relay: bool) -> Service {
        let dir = Service::dir_for(which, name);
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create the socket directory");
        let producer = dir.join("producer").to_str().expect("UTF-8").to_owned();
        let consumer = dir.join("consumer").to_str().expect("UTF-8").to_owned();
        // A free loopback port, chosen here (the genuine service reports
        // none it picked itself).
        let relay = with_relay.then(|| {
            let l = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
            l.local_addr().expect("its address").to_string()
        });
        let running = match which {
            Which::Zerotraced => {
                let mut producer_sockets = vec![Endpoint::Path(producer.clone().into())];
                if let Some(r) = &relay {
                    producer_sockets.push(Endpoint::Tcp(r.clone()));
                }
                let cfg = DaemonConfig {
                    producer_sockets,
                    consumer_socket: Endpoint::Path(consumer.clone().into()),
                    log_level: 1,
                    relay_endpoint: relay.is_some(),
                    ..DaemonConfig::default()
                };
                let daemon = DaemonThread::spawn(cfg).unwrap_or_else(|e| panic!("zerotraced: {e}"));
                Running::Ours(Some(daemon))
            }
            Which::Genuine => Running::Genuine(Some(
                match &relay {
                    Some(r) => GenuineService::start_with_relay(&producer, r, &consumer),
                    None => GenuineService::start(&producer, &consumer),
                }
                .expect("the genuine service"),
            )),
        };
        Service {
            which,
            producer,
            consumer,
            dir,
            relay,
            running,
        }
    }

    /// The private directory [`Service::start`] uses for `which` and
    /// `name` (known before the service runs, so that a producer can aim
    /// at a service that is not there yet).
    pub fn dir_for(which: Which, name: &str) -> PathBuf {
        let tag = match which {
            Which::Zerotraced => "zt",
            Which::Genuine => "pf",
        };
        std::env::temp_dir().join(format!("zt-interop-{name}-{tag}-{}", std::process::id()))
    }

    /// The producer socket [`Service::start`] will listen on for `which`
    /// and `name`, as our clients name it.
    pub fn producer_endpoint_for(which: Which, name: &str) -> Endpoint {
        Endpoint::Path(Service::dir_for(which, name).join("producer"))
    }

    /// The producer socket as our clients name it.
    pub fn producer_endpoint(&self) -> Endpoint {
        Endpoint::Path(self.producer.clone().into())
    }

    /// The consumer socket as our clients name it.
    pub fn consumer_endpoint(&self) -> Endpoint {
        Endpoint::Path(self.consumer.clone().into())
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        match &mut self.running {
            Running::Ours(daemon) => {
                if let Some(d) = daemon.take() {
                    let _ = d.stop();
                }
            }
            Running::Genuine(svc) => drop(svc.take()),
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

//! The relay's side of multi-machine tracing, as Perfetto's `traced_relay`
//! speaks it: producers of this machine connect to a local relay, which
//! forwards each of them to the central service on another machine and
//! keeps one connection of its own there to describe the machine and sync
//! clocks.
//!
//! * [`RelayPortClient`]: the relay's own connection, sans-IO (identity,
//!   `InitRelay`, `SyncClock` rounds every 30 s, reconnection with back-off).
//! * [`peer_identity_frame`]: the frame a relay sends first on every
//!   connection it opens to the central service, naming the producer's pid
//!   and uid and the machine.
//! * [`default_machine_id_hint`]: the hint Perfetto's relay derives from
//!   the kernel's boot id.
//!
//! The sockets, threads and the forwarding of bytes are the driver's
//! (`zerotrace relay` in the CLI).

mod port_client;

pub use port_client::{
    RETRY_DELAY_MAX_MS, RETRY_DELAY_MIN_MS, RelayEvent, RelayIdentity, RelayPortClient, RelayStats,
    SYNC_INTERVAL_MS,
};

use crate::ipc::{Frame, FrameMsg};

/// The `SetPeerIdentity` frame (request id 0) a relay sends before any byte
/// of the connection it opens for a producer (or for itself): the central
/// service honours it on TCP and vsock only, once per connection.
pub fn peer_identity_frame(
    pid: i32,
    uid: i32,
    machine_id_hint: &str,
    machine_name: &str,
) -> Vec<u8> {
    Frame {
        request_id: 0,
        msg: FrameMsg::SetPeerIdentity {
            pid: Some(pid),
            uid: Some(uid),
            machine_id_hint: Some(machine_id_hint.to_owned()),
            machine_name: (!machine_name.is_empty()).then(|| machine_name.to_owned()),
        },
    }
    .encode()
}

/// The machine id hint Perfetto's relay sends: the kernel's boot id
/// (`/proc/sys/kernel/random/boot_id`, without its newline), which differs
/// per machine and per boot. `None` where there is none (not Linux).
pub fn default_machine_id_hint() -> Option<String> {
    machine_id_hint_from_boot_id(&crate::platform::boot_id()?)
}

/// The hint for a boot id as the kernel prints it: without its newline,
/// and none if empty or longer than a hint may be.
pub fn machine_id_hint_from_boot_id(boot_id: &str) -> Option<String> {
    let id = boot_id.trim_end_matches('\n');
    (!id.is_empty() && id.len() <= 64).then(|| id.to_owned())
}

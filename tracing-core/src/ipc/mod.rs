//! Perfetto's IPC: framing and RPC state, sans-IO ([`FrameDecoder`],
//! [`HostConnection`], [`ClientConnection`]), and the socket glue that moves
//! their bytes ([`Endpoint`], [`connect`], [`listen`], the blocking
//! [`Channel`]).

// The clients, the daemon and the machine's environment import from these
// directly.
pub(crate) mod channel;
pub(crate) mod client;
pub(crate) mod fd;
mod frame;
pub(crate) mod host;
pub(crate) mod socket;
#[cfg(target_os = "linux")]
mod vsock;

// Sans-IO: frames, and the two ends of a connection.
pub use client::{ClientConnection, ClientEvent};
pub use frame::{Frame, FrameDecoder, FrameError, FrameMsg, MAX_FRAME_SIZE, MethodInfo};
pub use host::{HostConnection, HostEvent, Port};

// Sockets: endpoint names, listening, connecting, the fds that travel along.
pub use fd::{BorrowedFd, OwnedFd};
pub use socket::{
    Endpoint, Listener, MAX_FDS_PER_READ, PeerCred, Stream, Unsupported, connect,
    consumer_socket_name, listen, producer_socket_name,
};

// A blocking RPC channel for clients.
pub use channel::{CallReply, Channel, ChannelError};

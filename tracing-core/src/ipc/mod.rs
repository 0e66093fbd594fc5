//! Perfetto's IPC: framing and RPC state, sans-IO ([`frame`], [`host`],
//! [`client`]), and the socket glue that moves their bytes ([`socket`]).

pub mod channel;
pub mod client;
pub mod fd;
pub mod frame;
pub mod host;
pub mod socket;

pub use channel::{CallReply, Channel, ChannelError};
pub use client::{ClientConnection, ClientEvent};
pub use frame::{Frame, FrameDecoder, FrameError, FrameMsg, MAX_FRAME_SIZE, MethodInfo};
pub use host::{HostConnection, HostEvent, Port};
pub use socket::{Endpoint, Listener, PeerCred, Stream, Unsupported};

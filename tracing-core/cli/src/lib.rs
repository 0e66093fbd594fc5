//! The `zerotrace` command's library: the upstream Perfetto schema as one
//! descriptor set ([`schema`]), text-format TraceConfigs over it
//! ([`text_config`]), the commands ([`commands`]; the profile views read
//! a trace's samples and heap dumps through the trace processor's
//! `profile_view`),
//! the relay of `zerotrace relay` ([`relay`]) and the UI's WebSocket
//! ([`websocket`]). The `zerotraced` and `zerotrace` binaries are thin
//! `main`s over it.

pub mod commands;
pub mod relay;
pub mod schema;
pub mod text_config;
#[cfg(feature = "sql")]
pub mod tp_httpd;
pub mod websocket;

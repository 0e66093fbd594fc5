//! The `zerotrace` command's library: the upstream Perfetto schema as one
//! descriptor set ([`schema`]), text-format TraceConfigs over it
//! ([`text_config`]), the commands ([`commands`]), CPU samples as
//! `linux.perf` records them, read back for the viewers ([`profile`]), the relay of
//! `zerotrace relay` ([`relay`]) and the UI's WebSocket ([`websocket`]). The `zerotraced` and
//! `zerotrace` binaries are thin `main`s over it.

pub mod commands;
pub mod profile;
pub mod relay;
pub mod schema;
pub mod text_config;
pub mod websocket;

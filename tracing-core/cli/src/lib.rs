//! The `zerotrace` command's library: the upstream Perfetto schema as one
//! descriptor set ([`schema`]), text-format TraceConfigs over it
//! ([`text_config`]) and the commands ([`commands`]). The `zerotraced` and
//! `zerotrace` binaries are thin `main`s over it.

pub mod commands;
pub mod schema;
pub mod text_config;
pub mod websocket;

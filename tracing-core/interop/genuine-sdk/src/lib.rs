//! Genuine Perfetto SDK clients for zerotrace's interop tests: the
//! `genuine-producer` and `genuine-consumer` programs, built on Perfetto's
//! own client library (the C SDK vendored by `perfetto-sdk-sys`, through
//! upstream's `perfetto-sdk` binding) with its system backend, so they talk
//! to a tracing service over Perfetto's sockets exactly as any Perfetto app
//! or `perfetto`-style consumer does.
//!
//! [`workload`] says what the producer writes; the interop tests include the
//! same file to know what to expect, event by event and byte by byte.

pub mod workload;

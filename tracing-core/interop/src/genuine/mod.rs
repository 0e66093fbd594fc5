//! Perfetto's own service-side classes, compiled from the amalgamated C++
//! source that the `perfetto-sdk-sys` crate vendors (see `build.rs` and
//! `cpp/service_shim.cc`), behind small safe wrappers: a reference to measure
//! and check zerotrace's service against in the same process.
//!
//! The C++ library holds one copy of the whole Perfetto amalgamation, so a
//! binary that also links the genuine C SDK (`perfetto-sdk-sys` as a library)
//! must not use this module; the genuine SDK clients live in their own
//! package (`tracing-core/interop/genuine-sdk`) and run as child processes.

mod service;
mod trace_buffer;

pub use service::{GenuineService, GenuineServiceError};
pub use trace_buffer::{
    BufferVersion, GenuineChunk, GenuinePacket, GenuinePolicy, GenuineTraceBuffer,
};

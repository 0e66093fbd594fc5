//! Side-by-side protobuf **decode** benchmark: how fast zerotrace's
//! generated zero-copy decoders read real traces next to prost,
//! quick-protobuf, rust-protobuf and a hand-written floor, all on the same
//! schema (`protos/proto`, root `perfetto/trace/trace.proto`) and the same
//! bytes ([`data`]).

pub mod data;
pub mod generated;

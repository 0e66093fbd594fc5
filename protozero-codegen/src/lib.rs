//! `.proto` → Rust writers, decoders and service method tables for protozero.

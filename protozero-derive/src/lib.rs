//! `#[derive]` macros for protozero.

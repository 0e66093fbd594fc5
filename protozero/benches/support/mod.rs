//! Helpers of the `encode` benchmark that are not themselves timed: the
//! reference encoder, the `prost` message structs and the 4 KiB slice pool.

pub mod pool;
pub mod prost_types;
pub mod reference;

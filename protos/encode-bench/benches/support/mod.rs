//! Helpers of the `encode` benchmark that are not themselves timed: the
//! reference encoder, the `prost` message structs, the 4 KiB slice pool,
//! page-placed buffers and the clock.

pub mod clock;
pub mod placed;
pub mod pool;
pub mod prost_types;
pub mod reference;

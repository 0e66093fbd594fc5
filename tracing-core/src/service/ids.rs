//! Identifiers the service hands out. None of them is ever taken from a
//! peer's bytes: the driver names connections and requests, the core names
//! everything else.

use std::fmt;

// The trace buffer id is a wire id (producers name it as `target_buffer`),
// so it lives with the protocol (`crate::protocol::BufferId`); the service
// hands it out.

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident($inner:ty)) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(pub $inner);

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.fmt(f)
            }
        }
    };
}

id_type!(
    /// A producer connection (Perfetto's `ProducerID`, 16 bits: it also
    /// keys the producer's sequences inside trace buffers).
    ProducerId(u16)
);
id_type!(
    /// A consumer connection, named by the driver.
    ConsumerId(u64)
);
id_type!(
    /// A tracing session (`TracingSessionID`).
    SessionId(u64)
);
id_type!(
    /// A data source instance, global across producers.
    DataSourceInstanceId(u64)
);
id_type!(
    /// One call from a peer, named by the driver; replies carry it back.
    RequestId(u64)
);
id_type!(
    /// A flush request sent to producers (global and monotonic).
    FlushRequestId(u64)
);

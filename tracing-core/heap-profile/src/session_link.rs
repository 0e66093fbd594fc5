//! Which connection to the tracing service a heap profile belongs to. A
//! data source instance lives as long as the producer's connection it was
//! started on: when that connection drops (the service went away or
//! restarted), every instance of it is over, as Perfetto's producers reset
//! their data sources on a disconnect. The producer reconnects on its own
//! and gets new instances; a profile still running for the old connection
//! must then stop sampling and make way, or the process would stay
//! profiled for no one and refuse every later session as concurrent.

use std::sync::Arc;

use zerotrace_core::producer::ProducerClient;

/// A profile's tie to the producer connection it was started on.
#[derive(Clone)]
pub(crate) struct SessionLink {
    producer: Arc<ProducerClient>,
    /// The producer's reconnection count when the profile started.
    connection: u64,
}

impl SessionLink {
    /// The link of a profile starting now, on `producer`'s current
    /// connection.
    pub(crate) fn new(producer: &Arc<ProducerClient>) -> SessionLink {
        SessionLink {
            producer: Arc::clone(producer),
            connection: producer.reconnects(),
        }
    }

    /// Whether the connection the profile was started on is gone (down, or
    /// replaced by a new one): its instance no longer exists.
    pub(crate) fn gone(&self) -> bool {
        !self.producer.is_connected() || self.producer.reconnects() != self.connection
    }

    /// The producer (to flush what the profile wrote).
    pub(crate) fn producer(&self) -> &Arc<ProducerClient> {
        &self.producer
    }
}

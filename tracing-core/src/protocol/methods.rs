//! The method tables of the IPC services, `ProducerPort`, `ConsumerPort`
//! and `RelayPort`: the names a client invokes and the service decodes, in
//! the order Perfetto numbers them (a method's id is its index plus one).

/// The ProducerPort method names, in the order Perfetto numbers them.
pub const PRODUCER_METHODS: [&str; 12] = [
    "InitializeConnection",
    "RegisterDataSource",
    "UnregisterDataSource",
    "CommitData",
    "GetAsyncCommand",
    "RegisterTraceWriter",
    "UnregisterTraceWriter",
    "NotifyDataSourceStarted",
    "NotifyDataSourceStopped",
    "ActivateTriggers",
    "Sync",
    "UpdateDataSource",
];

/// The ConsumerPort method names, in the order Perfetto numbers them.
pub const CONSUMER_METHODS: [&str; 15] = [
    "EnableTracing",
    "DisableTracing",
    "ReadBuffers",
    "FreeBuffers",
    "Flush",
    "StartTracing",
    "ChangeTraceConfig",
    "Detach",
    "Attach",
    "GetTraceStats",
    "ObserveEvents",
    "QueryServiceState",
    "QueryCapabilities",
    "SaveTraceForBugreport",
    "CloneSession",
];

/// The RelayPort method names (a relay's own connection to the central
/// service), in the order Perfetto numbers them.
pub const RELAY_METHODS: [&str; 2] = ["InitRelay", "SyncClock"];

/// `SyncClockRequest.phase`: the first call of a round.
pub const SYNC_CLOCK_PING: i32 = 1;
/// `SyncClockRequest.phase`: the second call, once PING's reply came back.
pub const SYNC_CLOCK_UPDATE: i32 = 2;

#[cfg(test)]
mod tests {
    use zerotrace_protos::protos::{CONSUMER_PORT, PRODUCER_PORT, RELAY_PORT};

    use super::*;

    #[test]
    fn tables_name_the_methods_of_the_generated_service_descriptors() {
        let names =
            |s: &protozero::ServiceDescriptor| s.methods.iter().map(|m| m.name).collect::<Vec<_>>();
        assert_eq!(names(&PRODUCER_PORT), PRODUCER_METHODS);
        assert_eq!(names(&CONSUMER_PORT), CONSUMER_METHODS);
        assert_eq!(names(&RELAY_PORT), RELAY_METHODS);
    }
}

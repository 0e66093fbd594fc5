//! The data-source vocabulary an application and a producer endpoint share:
//! what a data source registers as ([`DataSourceSpec`]), one instance the
//! service set up ([`Instance`]), and what the application is told
//! ([`DataSourceEvent`]). Plain values, so that the sans-IO endpoint and
//! the threaded client speak of data sources the same way.

/// A data source as the producer registers it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DataSourceSpec {
    /// Its name.
    pub name: String,
    /// The service waits for our stop notification.
    pub will_notify_on_stop: bool,
    /// The service waits for our start notification.
    pub will_notify_on_start: bool,
    /// It re-emits incremental state when asked.
    pub handles_incremental_state_clear: bool,
    /// It does not want flush requests.
    pub no_flush: bool,
    /// Further DataSourceDescriptor fields, encoded (e.g. a
    /// `track_event_descriptor` listing categories).
    pub extra_descriptor: Vec<u8>,
}

/// One instance of a data source the service set up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Instance {
    /// The service's id for it.
    pub id: u64,
    /// The data source's name.
    pub name: String,
    /// The buffer its writers write into.
    pub target_buffer: u16,
    /// The DataSourceConfig the service sent.
    pub config: Vec<u8>,
}

/// What a data source is told.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DataSourceEvent {
    /// Set up (not yet started).
    Setup(Instance),
    /// Start writing.
    Start(Instance),
    /// Stop writing (flush your writers first).
    Stop(Instance),
    /// Flush your writers.
    Flush(Instance),
    /// Forget incremental state (interning) and emit it again.
    ClearIncrementalState(Instance),
}

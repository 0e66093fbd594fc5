//! What a load dropped, for its user: a truncated or partly invalid trace
//! loads what it can, as upstream's trace processor loads it, and the
//! loss is told rather than only counted in `stats` (the CLI prints each
//! warning on stderr; [`crate::TraceProcessor::load_warnings`] hands them
//! to a library's caller).

/// Something a load dropped, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadWarning {
    /// The byte of the (decompressed) trace where the dropped part starts.
    pub offset: u64,
    /// What was dropped.
    pub dropped: String,
}

impl LoadWarning {
    /// The trace ends inside a packet: the `bytes` from `offset` on, the
    /// start of a packet cut short, were dropped after `packets` packets.
    pub(crate) fn truncated(offset: u64, bytes: usize, packets: u64) -> Self {
        LoadWarning {
            offset,
            dropped: format!(
                "the trace ends inside a packet: its last {bytes} bytes (an incomplete \
                 packet, after {packets} whole ones) were dropped"
            ),
        }
    }
}

impl std::fmt::Display for LoadWarning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "at byte {}: {}", self.offset, self.dropped)
    }
}

//! What an event says beyond its kind, category, name and annotations:
//! the track it goes on, its timestamp, its flows and its source location,
//! as [`EventOptions`] built by method (the macros' `; key = value`
//! options call them by name).

use super::interning::SourceLocation;
use super::tracks::TrackSpec;

/// Where an event goes and what it links to, beyond its kind, category,
/// name and annotations. Built with its methods (the macros' `; key = value`
/// options call them by name): `EventOptions::new().track(&T).flow(7)`.
#[derive(Debug, Clone, Copy, Default)]
pub struct EventOptions<'a> {
    pub(super) track: Option<&'a TrackSpec>,
    pub(super) track_uuid: Option<u64>,
    pub(super) timestamp: Option<u64>,
    pub(super) flow: Option<u64>,
    pub(super) flows: &'a [u64],
    pub(super) terminating_flow: Option<u64>,
    pub(super) location: Option<SourceLocation>,
}

impl<'a> EventOptions<'a> {
    /// No options: the thread track, now, no flows.
    #[inline]
    pub const fn new() -> EventOptions<'a> {
        EventOptions {
            track: None,
            track_uuid: None,
            timestamp: None,
            flow: None,
            flows: &[],
            terminating_flow: None,
            location: None,
        }
    }

    /// On `track` (its descriptor is written first if this sequence has not).
    #[inline]
    pub const fn track(mut self, track: &'a TrackSpec) -> Self {
        self.track = Some(track);
        self
    }

    /// On the track with this uuid, already described (or described elsewhere).
    #[inline]
    pub const fn track_uuid(mut self, uuid: u64) -> Self {
        self.track_uuid = Some(uuid);
        self
    }

    /// At this timestamp (`CLOCK_BOOTTIME` ns) instead of now.
    #[inline]
    pub const fn timestamp(mut self, ts: u64) -> Self {
        self.timestamp = Some(ts);
        self
    }

    /// Starts or continues flow `id` (`flow_ids`).
    #[inline]
    pub const fn flow(mut self, id: u64) -> Self {
        self.flow = Some(id);
        self
    }

    /// Starts or continues every flow in `ids`.
    #[inline]
    pub const fn flows(mut self, ids: &'a [u64]) -> Self {
        self.flows = ids;
        self
    }

    /// Ends flow `id` here (`terminating_flow_ids`).
    #[inline]
    pub const fn terminating_flow(mut self, id: u64) -> Self {
        self.terminating_flow = Some(id);
        self
    }

    /// Records where the event was emitted (interned per sequence).
    #[inline]
    pub const fn location(mut self, loc: SourceLocation) -> Self {
        self.location = Some(loc);
        self
    }

    /// The explicit timestamp, if any.
    #[inline]
    pub fn explicit_timestamp(&self) -> Option<u64> {
        self.timestamp
    }

    /// The uuid of the track the event goes on, if not the thread's.
    #[inline]
    pub fn target_track(&self) -> Option<u64> {
        self.track.map(|t| t.uuid).or(self.track_uuid)
    }
}

/// `opts` on the track with uuid `track`, if one is given.
pub(super) fn on_track(opts: EventOptions<'_>, track: Option<u64>) -> EventOptions<'_> {
    match track {
        Some(t) => opts.track_uuid(t),
        None => opts,
    }
}

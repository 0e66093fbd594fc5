//! Startup tracing as one state machine of the endpoint: whether our own
//! buffer is still to be offered, the service's answer (adopted or
//! refused), one open reservation per data source name with the time it
//! expires, and the reservations given up so far.
//!
//! The placeholder-buffer mechanics stay where the chunks are (the
//! arbiter's `startup_api`): a reservation id is what the arbiter handed
//! out, and the endpoint tells the driver when to bind it to a service
//! buffer ([`StartupStep::Bind`]) or abort it ([`StartupStep::Abort`]).
//! What the driver asks goes through [`super::ProducerEndpoint::startup_reservation`]
//! and [`super::ProducerEndpoint::add_startup_reservation`].

use std::collections::BTreeMap;

/// The buffer a producer makes for startup tracing, as the endpoint offers
/// it with `InitializeConnection`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StartupOffer {
    /// Its size in bytes.
    pub smb_size: u32,
    /// Its page size in bytes.
    pub page_size: u32,
    /// How long a reservation waits for a session, in nanoseconds.
    pub timeout_ns: u64,
}

/// Why no startup reservation can be had.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum StartupError {
    /// The producer made no startup buffer.
    #[error("startup tracing is not enabled")]
    NotEnabled,
    /// The service refused the startup buffer.
    #[error("the service refused the startup buffer")]
    Refused,
}

/// What the endpoint knows of a data source's startup reservation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StartupReservation {
    /// This open reservation: make its writer.
    Open(u16),
    /// None yet: reserve one (in the arbiter) and report it with
    /// [`super::ProducerEndpoint::add_startup_reservation`].
    Needed,
}

/// What the driver does to a reservation in the arbiter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StartupStep {
    /// A session started the data source: bind the reservation to its
    /// buffer (on failure, abort it and tell
    /// [`super::ProducerEndpoint::handle_bind_failed`]).
    Bind {
        /// The reservation.
        reservation: u16,
        /// The service buffer of the started instance.
        target_buffer: u16,
    },
    /// Give the reservation up: free its chunks uncommitted.
    Abort {
        /// The reservation.
        reservation: u16,
    },
}

/// The startup tracing state of one endpoint.
#[derive(Debug, Default)]
pub(crate) struct StartupTracing {
    /// `None`: startup tracing is off.
    offer: Option<StartupOffer>,
    /// The service answered our offer (adopted or refused).
    answered: bool,
    /// The service refused the buffer: no more reservations.
    refused: bool,
    /// Open reservations by data source name, with their expiry.
    open: BTreeMap<String, (u16, u64)>,
    /// Reservations aborted so far.
    aborted: u64,
}

impl StartupTracing {
    /// Startup tracing with `offer` (or off).
    pub(crate) fn new(offer: Option<StartupOffer>) -> StartupTracing {
        StartupTracing {
            offer,
            ..StartupTracing::default()
        }
    }

    /// What the next `InitializeConnection` offers (until answered).
    pub(crate) fn offer(&self) -> Option<StartupOffer> {
        self.offer.filter(|_| !self.answered)
    }

    /// The service answered the offer; returns the reservations to abort
    /// (all of them, when it refused). Later answers change nothing.
    pub(crate) fn answered(&mut self, adopted: bool) -> Vec<StartupStep> {
        if self.answered || self.offer.is_none() {
            return Vec::new();
        }
        self.answered = true;
        if adopted {
            return Vec::new();
        }
        self.refused = true;
        let open = std::mem::take(&mut self.open);
        self.aborted += open.len() as u64;
        open.into_values()
            .map(|(reservation, _)| StartupStep::Abort { reservation })
            .collect()
    }

    /// The reservation of data source `name`, if any can be had.
    pub(crate) fn reservation(&self, name: &str) -> Result<StartupReservation, StartupError> {
        if self.refused {
            return Err(StartupError::Refused);
        }
        if self.offer.is_none() {
            return Err(StartupError::NotEnabled);
        }
        Ok(match self.open.get(name) {
            Some(&(r, _)) => StartupReservation::Open(r),
            None => StartupReservation::Needed,
        })
    }

    /// Records `reservation` for `name`, expiring at `now` + the timeout.
    /// Returns the steps for a reservation it replaces (aborted).
    pub(crate) fn add(&mut self, now: u64, name: &str, reservation: u16) -> Vec<StartupStep> {
        let Some(offer) = self.offer else {
            return vec![StartupStep::Abort { reservation }];
        };
        let expiry = now.saturating_add(offer.timeout_ns);
        match self.open.insert(name.to_owned(), (reservation, expiry)) {
            Some((old, _)) if old != reservation => {
                self.aborted += 1;
                vec![StartupStep::Abort { reservation: old }]
            }
            _ => Vec::new(),
        }
    }

    /// A session started data source `name` into `target_buffer`; `ours`:
    /// our buffer is the producer's SMB on this connection.
    pub(crate) fn started(
        &mut self,
        name: &str,
        target_buffer: u16,
        ours: bool,
    ) -> Option<StartupStep> {
        let (reservation, _) = self.open.remove(name)?;
        if ours {
            Some(StartupStep::Bind {
                reservation,
                target_buffer,
            })
        } else {
            self.aborted += 1;
            Some(StartupStep::Abort { reservation })
        }
    }

    /// A bind the driver tried failed (it aborted the reservation).
    pub(crate) fn bind_failed(&mut self) {
        self.aborted += 1;
    }

    /// Aborts the reservations expired at `now`.
    pub(crate) fn expire(&mut self, now: u64) -> Vec<StartupStep> {
        let expired: Vec<String> = self
            .open
            .iter()
            .filter(|(_, (_, at))| *at <= now)
            .map(|(n, _)| n.clone())
            .collect();
        let mut steps = Vec::new();
        for n in expired {
            if let Some((reservation, _)) = self.open.remove(&n) {
                self.aborted += 1;
                steps.push(StartupStep::Abort { reservation });
            }
        }
        steps
    }

    /// The earliest expiry of an open reservation.
    pub(crate) fn next_deadline(&self) -> Option<u64> {
        self.open.values().map(|&(_, at)| at).min()
    }

    /// Reservations aborted so far.
    pub(crate) fn aborted(&self) -> u64 {
        self.aborted
    }

    /// Whether the service refused the buffer.
    pub(crate) fn refused(&self) -> bool {
        self.refused
    }
}

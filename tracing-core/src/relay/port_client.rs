//! The relay's own connection to the central service, sans-IO: it names
//! the machine (`SetPeerIdentity`), binds RelayPort, describes the machine
//! once (`InitRelay` with its `SystemInfo`) and syncs clocks in rounds of
//! two calls (`SyncClock` PING, then UPDATE once PING's reply is back),
//! a round every 30 s, as Perfetto's relay does. A lost connection is tried
//! again after a delay that doubles from 1 s up to 30 s, and starts over at
//! 1 s once a connection got as far as the bind. A refused call (a reply
//! without success to InitRelay or SyncClock) closes the connection, as
//! upstream's relay does ([`RelayEvent::Close`] says which), and is no
//! clock round; unlike upstream, the delay then starts over only after a
//! completed round, so a service that keeps refusing is asked every 30 s,
//! not every second.
//!
//! The driver connects, passes bytes and the time in, sends what
//! [`RelayPortClient::poll_transmit`] gives, and wakes at
//! [`RelayPortClient::poll_timeout`]. Clock readings come from a closure
//! the driver passes where a call may be sent, read as the call is built.

use std::collections::VecDeque;

use protozero::HeapWriter;
use zerotrace_protos::protos::{InitRelayRequest, SyncClockRequest};

use crate::ipc::{ClientConnection, ClientEvent};
use crate::protocol::{SYNC_CLOCK_PING, SYNC_CLOCK_UPDATE};

/// Between two clock rounds (Perfetto's relay: 30 s).
pub const SYNC_INTERVAL_MS: u64 = 30_000;
/// The first reconnection delay.
pub const RETRY_DELAY_MIN_MS: u64 = 1_000;
/// The longest reconnection delay.
pub const RETRY_DELAY_MAX_MS: u64 = 30_000;

const MS: u64 = 1_000_000;

/// Who the relay says it is on its own connection.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RelayIdentity {
    /// The relay's pid.
    pub pid: i32,
    /// The relay's uid.
    pub uid: i32,
    /// The machine id hint (the central service derives the machine id).
    pub machine_id_hint: String,
    /// The machine's name (what `machine_name_filter` matches); empty for
    /// none.
    pub machine_name: String,
    /// The machine's `SystemInfo`, encoded, for `InitRelay`.
    pub system_info: Vec<u8>,
}

/// What the driver must do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RelayEvent {
    /// Connect to the central service now, then call
    /// [`RelayPortClient::handle_connected`] (or `handle_disconnected` if
    /// it failed).
    Connect,
    /// Close the connection (the service refused RelayPort or sent
    /// garbage); `handle_disconnected` follows as for any loss.
    Close(String),
}

/// Counters of the connection's life.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RelayStats {
    /// Connections that reached the bind.
    pub connections: u64,
    /// Clock rounds completed (PING and UPDATE answered).
    pub clock_rounds: u64,
    /// Connections lost or failed.
    pub disconnects: u64,
}

#[derive(Debug)]
enum State {
    /// Waiting to connect at the deadline.
    Waiting { at: u64 },
    /// The driver is connecting.
    Connecting,
    /// Connected: the IPC state, the clock phase in flight (with its
    /// request), and when the next round starts.
    Connected {
        ipc: Box<ClientConnection>,
        in_flight: Option<(u64, i32)>,
        next_round: Option<u64>,
        /// The InitRelay call, until its reply.
        init: Option<u64>,
    },
    /// Stopped for good.
    Closed,
}

/// The relay's RelayPort connection.
#[derive(Debug)]
pub struct RelayPortClient {
    identity: RelayIdentity,
    state: State,
    retry_delay_ms: u64,
    transmit: VecDeque<Vec<u8>>,
    events: VecDeque<RelayEvent>,
    stats: RelayStats,
    /// The service refused a call since the last completed clock round.
    refused: bool,
}

impl RelayPortClient {
    /// A client that connects at once (the first [`RelayEvent::Connect`]).
    pub fn new(identity: RelayIdentity) -> RelayPortClient {
        RelayPortClient {
            identity,
            state: State::Connecting,
            retry_delay_ms: RETRY_DELAY_MIN_MS,
            transmit: VecDeque::new(),
            events: VecDeque::from([RelayEvent::Connect]),
            stats: RelayStats::default(),
            refused: false,
        }
    }

    /// Counters so far.
    pub fn stats(&self) -> RelayStats {
        self.stats
    }

    /// Whether the RelayPort is bound on a live connection.
    pub fn is_bound(&self) -> bool {
        matches!(&self.state, State::Connected { ipc, .. } if ipc.is_bound())
    }

    /// The delay before the next reconnection attempt, in milliseconds.
    pub fn retry_delay_ms(&self) -> u64 {
        self.retry_delay_ms
    }

    /// The driver connected: the identity goes first, then the bind.
    pub fn handle_connected(&mut self, _now: u64) {
        if !matches!(self.state, State::Connecting) {
            return;
        }
        let id = &self.identity;
        self.transmit.push_back(super::peer_identity_frame(
            id.pid,
            id.uid,
            &id.machine_id_hint,
            &id.machine_name,
        ));
        let mut ipc = ClientConnection::new("RelayPort");
        self.transmit.extend(ipc.take_transmit());
        self.state = State::Connected {
            ipc: Box::new(ipc),
            in_flight: None,
            next_round: None,
            init: None,
        };
    }

    /// The connection failed or was lost: try again after the delay, which
    /// doubles with every attempt that does not get as far as the bind.
    pub fn handle_disconnected(&mut self, now: u64) {
        if matches!(self.state, State::Closed) {
            return;
        }
        self.stats.disconnects += 1;
        self.transmit.clear();
        self.state = State::Waiting {
            at: now.saturating_add(self.retry_delay_ms * MS),
        };
        self.retry_delay_ms = (self.retry_delay_ms * 2).min(RETRY_DELAY_MAX_MS);
    }

    /// Bytes from the central service. `clocks` reads this machine's
    /// clocks (BuiltinClock id, ns) when a SyncClock call is built.
    pub fn handle_bytes(
        &mut self,
        now: u64,
        bytes: &[u8],
        clocks: &mut dyn FnMut() -> Vec<(u32, u64)>,
    ) {
        let State::Connected { ipc, .. } = &mut self.state else {
            return;
        };
        let events = ipc.receive(bytes);
        for ev in events {
            self.handle_ipc(now, ev, clocks);
        }
        self.collect_transmit();
    }

    fn handle_ipc(
        &mut self,
        now: u64,
        ev: ClientEvent,
        clocks: &mut dyn FnMut() -> Vec<(u32, u64)>,
    ) {
        match ev {
            ClientEvent::Bound { success: true } => {
                self.stats.connections += 1;
                // A connection that binds starts the delays over, unless
                // the service refused the last one's calls: then only a
                // completed clock round does.
                if !self.refused {
                    self.retry_delay_ms = RETRY_DELAY_MIN_MS;
                }
                let info = self.identity.system_info.clone();
                if let State::Connected { ipc, init, .. } = &mut self.state {
                    *init = Some(ipc.invoke("InitRelay", init_relay_request(&info), false));
                }
                self.send_sync(SYNC_CLOCK_PING, clocks);
            }
            ClientEvent::Bound { success: false } => {
                self.events.push_back(RelayEvent::Close(
                    "the service does not serve RelayPort (is its relay endpoint on?)".into(),
                ));
            }
            ClientEvent::Reply {
                request_id,
                success,
                has_more: false,
                ..
            } => {
                let State::Connected {
                    in_flight,
                    next_round,
                    init,
                    ..
                } = &mut self.state
                else {
                    return;
                };
                if *init == Some(request_id) {
                    *init = None;
                    if !success {
                        // As Perfetto's relay: a refused call ends the
                        // connection, which is tried again.
                        self.events.push_back(RelayEvent::Close(
                            "the central service refused InitRelay".into(),
                        ));
                    }
                    return;
                }
                match *in_flight {
                    Some((req, phase)) if req == request_id && !success => {
                        // Not a round: the connection ends and is tried
                        // again, with a growing delay while refusals go on.
                        *in_flight = None;
                        self.refused = true;
                        self.events.push_back(RelayEvent::Close(format!(
                            "the central service refused SyncClock {}",
                            if phase == SYNC_CLOCK_PING {
                                "PING"
                            } else {
                                "UPDATE"
                            }
                        )));
                    }
                    Some((req, SYNC_CLOCK_PING)) if req == request_id => {
                        *in_flight = None;
                        self.send_sync(SYNC_CLOCK_UPDATE, clocks);
                    }
                    Some((req, _)) if req == request_id => {
                        *in_flight = None;
                        *next_round = Some(now.saturating_add(SYNC_INTERVAL_MS * MS));
                        self.stats.clock_rounds += 1;
                        self.refused = false;
                        self.retry_delay_ms = RETRY_DELAY_MIN_MS;
                    }
                    _ => {}
                }
            }
            ClientEvent::Reply { .. } => {}
            ClientEvent::UnknownMethod { method, .. } => {
                self.events.push_back(RelayEvent::Close(format!(
                    "the service's RelayPort has no method {method}"
                )));
            }
            ClientEvent::Fatal(e) => {
                self.events.push_back(RelayEvent::Close(format!(
                    "bad frame from the service: {e}"
                )));
            }
        }
    }

    fn send_sync(&mut self, phase: i32, clocks: &mut dyn FnMut() -> Vec<(u32, u64)>) {
        let State::Connected { ipc, in_flight, .. } = &mut self.state else {
            return;
        };
        let req = ipc.invoke("SyncClock", sync_clock_request(phase, &clocks()), false);
        *in_flight = Some((req, phase));
    }

    fn collect_transmit(&mut self) {
        if let State::Connected { ipc, .. } = &mut self.state {
            self.transmit.extend(ipc.take_transmit());
        }
    }

    /// The time passes: a reconnection or a clock round may be due.
    pub fn handle_timeout(&mut self, now: u64, clocks: &mut dyn FnMut() -> Vec<(u32, u64)>) {
        match &mut self.state {
            State::Waiting { at } if *at <= now => {
                self.state = State::Connecting;
                self.events.push_back(RelayEvent::Connect);
            }
            State::Connected {
                next_round: Some(at),
                in_flight: None,
                ..
            } if *at <= now => {
                if let State::Connected { next_round, .. } = &mut self.state {
                    *next_round = None;
                }
                self.send_sync(SYNC_CLOCK_PING, clocks);
                self.collect_transmit();
            }
            _ => {}
        }
    }

    /// The next deadline, if any.
    pub fn poll_timeout(&self) -> Option<u64> {
        match &self.state {
            State::Waiting { at } => Some(*at),
            State::Connected {
                next_round: Some(at),
                ..
            } => Some(*at),
            _ => None,
        }
    }

    /// The next bytes to send.
    pub fn poll_transmit(&mut self) -> Option<Vec<u8>> {
        self.transmit.pop_front()
    }

    /// The next thing the driver must do.
    pub fn poll_event(&mut self) -> Option<RelayEvent> {
        self.events.pop_front()
    }

    /// Stops for good: no more reconnections.
    pub fn close(&mut self) {
        self.state = State::Closed;
        self.transmit.clear();
    }
}

fn init_relay_request(system_info: &[u8]) -> Vec<u8> {
    let mut w = HeapWriter::new();
    {
        let mut r = InitRelayRequest::from_message(w.root());
        if !system_info.is_empty() {
            r.set_system_info_raw(system_info);
        }
    }
    w.finish().unwrap_or_default()
}

fn sync_clock_request(phase: i32, clocks: &[(u32, u64)]) -> Vec<u8> {
    let mut w = HeapWriter::new();
    {
        let mut r = SyncClockRequest::from_message(w.root());
        r.set_phase_raw(phase);
        for &(id, ts) in clocks {
            r.add_clocks().set_clock_id(id).set_timestamp(ts);
        }
    }
    w.finish().unwrap_or_default()
}

//! The host side of one IPC connection, sans-IO: binds, method dispatch by
//! id from the codegen method tables, request ids, streamed replies and
//! `drop_reply`. Bytes go in through [`HostConnection::receive`]; decoded
//! calls come out as [`HostEvent`]s for the service core, and its replies go
//! back through [`HostConnection::reply`] as frames to send.

use std::collections::HashSet;

use protozero::ServiceDescriptor;
use zerotrace_protos::protos::{CONSUMER_PORT, PRODUCER_PORT, RELAY_PORT};

use super::frame::{Frame, FrameDecoder, FrameError, FrameMsg, MethodInfo};

/// Which service a listening socket exposes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Port {
    /// The producer socket: `ProducerPort`.
    Producer,
    /// The consumer socket: `ConsumerPort`.
    Consumer,
}

impl Port {
    /// The method table of the service.
    pub fn service(self) -> &'static ServiceDescriptor {
        match self {
            Port::Producer => &PRODUCER_PORT,
            Port::Consumer => &CONSUMER_PORT,
        }
    }
}

/// Service id of the service each socket exposes first (`ProducerPort` or
/// `ConsumerPort`).
pub const SERVICE_ID: u32 = 1;

/// Service id of `RelayPort` on a producer socket that exposes it (the
/// second service there, as in Perfetto's host).
pub const RELAY_SERVICE_ID: u32 = 2;

/// What the host makes of incoming frames.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HostEvent {
    /// A method call for the service core.
    Call {
        /// The client's request id (replies echo it).
        request_id: u64,
        /// The method's name.
        method: &'static str,
        /// The encoded request.
        args: Vec<u8>,
    },
    /// The peer claims an identity (honoured only on non-unix sockets).
    SetPeerIdentity {
        /// Claimed pid.
        pid: Option<i32>,
        /// Claimed uid.
        uid: Option<i32>,
        /// Machine id hint.
        machine_id_hint: Option<String>,
        /// The machine's name (what `machine_name_filter` matches).
        machine_name: Option<String>,
    },
    /// The connection must be closed.
    Fatal(FrameError),
}

/// Host state of one connection.
#[derive(Debug)]
pub struct HostConnection {
    port: Port,
    /// `RelayPort` is served beside `ProducerPort`.
    relay: bool,
    decoder: FrameDecoder,
    /// Requests whose replies the client does not want.
    dropped: HashSet<u64>,
    /// Frames to send, in order.
    out: Vec<Vec<u8>>,
    /// Frames refused (unknown service or method).
    pub rejected: u64,
}

impl HostConnection {
    /// A new connection on a socket exposing `port`.
    pub fn new(port: Port) -> HostConnection {
        HostConnection::with_relay_port(port, false)
    }

    /// A new connection on a socket exposing `port` and, on a producer
    /// socket with `relay`, `RelayPort` too (`--enable-relay-endpoint`).
    pub fn with_relay_port(port: Port, relay: bool) -> HostConnection {
        HostConnection {
            port,
            relay: relay && port == Port::Producer,
            decoder: FrameDecoder::new(),
            dropped: HashSet::new(),
            out: Vec::new(),
            rejected: 0,
        }
    }

    /// Frames that did not parse and were dropped.
    pub fn malformed_frames(&self) -> u64 {
        self.decoder.malformed
    }

    /// Feeds bytes read from the socket.
    pub fn receive(&mut self, bytes: &[u8]) -> Vec<HostEvent> {
        self.decoder.push(bytes);
        let mut events = Vec::new();
        while let Some(frame) = self.decoder.next_frame() {
            match frame {
                Ok(f) => self.handle(f, &mut events),
                Err(e) => {
                    events.push(HostEvent::Fatal(e));
                    break;
                }
            }
        }
        events
    }

    /// The service bound under `id`, if this socket exposes one.
    fn service_by_id(&self, id: u32) -> Option<&'static ServiceDescriptor> {
        match id {
            SERVICE_ID => Some(self.port.service()),
            RELAY_SERVICE_ID if self.relay => Some(&RELAY_PORT),
            _ => None,
        }
    }

    fn handle(&mut self, f: Frame, events: &mut Vec<HostEvent>) {
        match f.msg {
            FrameMsg::Bind { service_name } => {
                let found = [SERVICE_ID, RELAY_SERVICE_ID].into_iter().find_map(|id| {
                    self.service_by_id(id)
                        .filter(|s| s.name == service_name)
                        .map(|s| (id, s))
                });
                let ok = found.is_some();
                let methods = if let Some((_, service)) = found {
                    service
                        .methods
                        .iter()
                        .map(|m| MethodInfo {
                            id: m.id,
                            name: m.name.to_owned(),
                        })
                        .collect()
                } else {
                    Vec::new()
                };
                self.send(Frame {
                    request_id: f.request_id,
                    msg: FrameMsg::BindReply {
                        success: ok,
                        service_id: found.map_or(0, |(id, _)| id),
                        methods,
                    },
                });
            }
            FrameMsg::Invoke {
                service_id,
                method_id,
                args,
                drop_reply,
            } => {
                let method = self
                    .service_by_id(service_id)
                    .and_then(|s| s.method_by_id(method_id));
                let Some(method) = method else {
                    self.rejected += 1;
                    if !drop_reply {
                        self.send(reject(f.request_id));
                    }
                    return;
                };
                if drop_reply {
                    self.dropped.insert(f.request_id);
                }
                events.push(HostEvent::Call {
                    request_id: f.request_id,
                    method: method.name,
                    args,
                });
            }
            FrameMsg::SetPeerIdentity {
                pid,
                uid,
                machine_id_hint,
                machine_name,
            } => events.push(HostEvent::SetPeerIdentity {
                pid,
                uid,
                machine_id_hint,
                machine_name,
            }),
            FrameMsg::BindReply { .. }
            | FrameMsg::InvokeReply { .. }
            | FrameMsg::RequestError { .. }
            | FrameMsg::Empty => {
                self.rejected += 1;
                self.send(Frame {
                    request_id: f.request_id,
                    msg: FrameMsg::RequestError {
                        error: "unknown request".into(),
                    },
                });
            }
        }
    }

    /// Queues the reply to `request_id`: `Ok(data)` or a rejection. Nothing
    /// is sent for a request the client sent with `drop_reply`.
    pub fn reply(&mut self, request_id: u64, result: Result<Vec<u8>, ()>, has_more: bool) {
        if self.dropped.contains(&request_id) {
            if !has_more {
                self.dropped.remove(&request_id);
            }
            return;
        }
        let frame = match result {
            Ok(reply) => Frame {
                request_id,
                msg: FrameMsg::InvokeReply {
                    success: true,
                    has_more,
                    reply,
                },
            },
            Err(()) => reject(request_id),
        };
        self.send(frame);
    }

    fn send(&mut self, f: Frame) {
        self.out.push(f.encode());
    }

    /// The next frame to write to the socket.
    pub fn poll_transmit(&mut self) -> Option<Vec<u8>> {
        if self.out.is_empty() {
            None
        } else {
            Some(self.out.remove(0))
        }
    }

    /// Takes every frame queued for sending.
    pub fn take_transmit(&mut self) -> Vec<Vec<u8>> {
        std::mem::take(&mut self.out)
    }
}

fn reject(request_id: u64) -> Frame {
    Frame {
        request_id,
        msg: FrameMsg::InvokeReply {
            success: false,
            has_more: false,
            reply: Vec::new(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bind_lists_the_methods_and_unknown_calls_are_rejected() {
        let mut h = HostConnection::new(Port::Producer);
        let bind = Frame {
            request_id: 1,
            msg: FrameMsg::Bind {
                service_name: "ProducerPort".into(),
            },
        };
        assert!(h.receive(&bind.encode()).is_empty());
        let reply = h.take_transmit();
        let f = Frame::decode(&reply[0][4..]).unwrap();
        let FrameMsg::BindReply {
            success, methods, ..
        } = f.msg
        else {
            panic!("{f:?}");
        };
        assert!(success);
        assert_eq!(methods[0].name, "InitializeConnection");
        assert_eq!(methods[0].id, 1);
        let call = |id, method_id, drop_reply| Frame {
            request_id: id,
            msg: FrameMsg::Invoke {
                service_id: 1,
                method_id,
                args: vec![],
                drop_reply,
            },
        };
        let ev = h.receive(&[call(2, 4, true).encode(), call(3, 99, false).encode()].concat());
        assert_eq!(
            ev,
            vec![HostEvent::Call {
                request_id: 2,
                method: "CommitData",
                args: vec![]
            }]
        );
        let out = h.take_transmit();
        assert_eq!(out.len(), 1, "the unknown method is rejected");
        h.reply(2, Ok(vec![]), false);
        assert!(h.take_transmit().is_empty(), "drop_reply");
    }

    #[test]
    fn relay_port_is_bound_as_the_second_service_only_where_exposed() {
        let bind = |name: &str| {
            Frame {
                request_id: 1,
                msg: FrameMsg::Bind {
                    service_name: name.into(),
                },
            }
            .encode()
        };
        let reply = |h: &mut HostConnection| {
            let out = h.take_transmit();
            match Frame::decode(&out[0][4..]).unwrap().msg {
                FrameMsg::BindReply {
                    success,
                    service_id,
                    methods,
                } => (success, service_id, methods.len()),
                m => panic!("{m:?}"),
            }
        };
        let mut on = HostConnection::with_relay_port(Port::Producer, true);
        on.receive(&bind("RelayPort"));
        assert_eq!(reply(&mut on), (true, RELAY_SERVICE_ID, 2));
        on.receive(&bind("ProducerPort"));
        assert_eq!(reply(&mut on), (true, SERVICE_ID, 12));
        let call = Frame {
            request_id: 2,
            msg: FrameMsg::Invoke {
                service_id: RELAY_SERVICE_ID,
                method_id: 2,
                args: vec![],
                drop_reply: false,
            },
        };
        assert_eq!(
            on.receive(&call.encode()),
            vec![HostEvent::Call {
                request_id: 2,
                method: "SyncClock",
                args: vec![]
            }]
        );
        let mut off = HostConnection::new(Port::Producer);
        off.receive(&bind("RelayPort"));
        assert_eq!(reply(&mut off), (false, 0, 0));
        let mut consumer = HostConnection::with_relay_port(Port::Consumer, true);
        consumer.receive(&bind("RelayPort"));
        assert!(!reply(&mut consumer).0, "never on the consumer socket");
    }
}

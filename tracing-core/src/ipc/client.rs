//! The client side of one IPC connection, sans-IO: binds a service, looks
//! methods up by name in the bind reply, numbers requests, and routes
//! (possibly streamed) replies back to their request. Calls made before the
//! bind reply are held and sent once the method ids are known.

use std::collections::{HashMap, HashSet};

use super::frame::{Frame, FrameDecoder, FrameError, FrameMsg};

/// What the client makes of incoming frames.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClientEvent {
    /// The service is bound (or refused the bind).
    Bound {
        /// Whether the service exists.
        success: bool,
    },
    /// A reply to `request_id`.
    Reply {
        /// The request it answers.
        request_id: u64,
        /// Whether the call succeeded.
        success: bool,
        /// More replies follow.
        has_more: bool,
        /// The encoded response.
        data: Vec<u8>,
    },
    /// A call named a method the service does not have.
    UnknownMethod {
        /// The request.
        request_id: u64,
        /// The method.
        method: String,
    },
    /// The connection must be closed.
    Fatal(FrameError),
}

/// Client state of one connection.
#[derive(Debug, Default)]
pub struct ClientConnection {
    decoder: FrameDecoder,
    next_request: u64,
    bind_request: Option<u64>,
    service_id: Option<u32>,
    methods: HashMap<String, u32>,
    /// Calls waiting for the bind reply: (request id, method, args, drop).
    held: Vec<(u64, String, Vec<u8>, bool)>,
    /// Requests still expecting replies.
    pending: HashSet<u64>,
    out: Vec<Vec<u8>>,
}

impl ClientConnection {
    /// A connection that binds `service` first.
    pub fn new(service: &str) -> ClientConnection {
        let mut c = ClientConnection::default();
        let id = c.request_id();
        c.bind_request = Some(id);
        c.out.push(
            Frame {
                request_id: id,
                msg: FrameMsg::Bind {
                    service_name: service.to_owned(),
                },
            }
            .encode(),
        );
        c
    }

    fn request_id(&mut self) -> u64 {
        self.next_request += 1;
        self.next_request
    }

    /// Whether the bind reply has come.
    pub fn is_bound(&self) -> bool {
        self.service_id.is_some()
    }

    /// Calls `method` with `args`; returns the request id its replies carry.
    /// With `drop_reply` the service sends nothing back.
    pub fn invoke(&mut self, method: &str, args: Vec<u8>, drop_reply: bool) -> u64 {
        let id = self.request_id();
        if !drop_reply {
            self.pending.insert(id);
        }
        if self.service_id.is_some() {
            self.send_invoke(id, method, args, drop_reply);
        } else {
            self.held.push((id, method.to_owned(), args, drop_reply));
        }
        id
    }

    fn send_invoke(&mut self, id: u64, method: &str, args: Vec<u8>, drop_reply: bool) -> bool {
        let (Some(service_id), Some(&method_id)) = (self.service_id, self.methods.get(method))
        else {
            return false;
        };
        self.out.push(
            Frame {
                request_id: id,
                msg: FrameMsg::Invoke {
                    service_id,
                    method_id,
                    args,
                    drop_reply,
                },
            }
            .encode(),
        );
        true
    }

    /// Feeds bytes read from the socket.
    pub fn receive(&mut self, bytes: &[u8]) -> Vec<ClientEvent> {
        self.decoder.push(bytes);
        let mut events = Vec::new();
        while let Some(frame) = self.decoder.next_frame() {
            let f = match frame {
                Ok(f) => f,
                Err(e) => {
                    events.push(ClientEvent::Fatal(e));
                    break;
                }
            };
            match f.msg {
                FrameMsg::BindReply {
                    success,
                    service_id,
                    methods,
                } if Some(f.request_id) == self.bind_request => {
                    self.bind_request = None;
                    if success {
                        self.service_id = Some(service_id);
                        self.methods = methods.into_iter().map(|m| (m.name, m.id)).collect();
                    }
                    events.push(ClientEvent::Bound { success });
                    for (id, method, args, drop_reply) in std::mem::take(&mut self.held) {
                        if !success || !self.send_invoke(id, &method, args, drop_reply) {
                            self.pending.remove(&id);
                            events.push(ClientEvent::UnknownMethod {
                                request_id: id,
                                method,
                            });
                        }
                    }
                }
                FrameMsg::InvokeReply {
                    success,
                    has_more,
                    reply,
                } if self.pending.contains(&f.request_id) => {
                    if !has_more {
                        self.pending.remove(&f.request_id);
                    }
                    events.push(ClientEvent::Reply {
                        request_id: f.request_id,
                        success,
                        has_more,
                        data: reply,
                    });
                }
                _ => {}
            }
        }
        events
    }

    /// Takes every frame queued for sending.
    pub fn take_transmit(&mut self) -> Vec<Vec<u8>> {
        std::mem::take(&mut self.out)
    }
}

#[cfg(test)]
mod tests {
    use super::super::host::{HostConnection, HostEvent, Port};
    use super::*;

    #[test]
    fn pipelined_calls_wait_for_the_bind_and_resolve_by_name() {
        let mut c = ClientConnection::new("ConsumerPort");
        let q = c.invoke("QueryCapabilities", vec![], false);
        let bogus = c.invoke("NoSuchMethod", vec![], false);
        let mut h = HostConnection::new(Port::Consumer);
        let ev = h.receive(&c.take_transmit().concat());
        assert!(ev.is_empty());
        let ev = c.receive(&h.take_transmit().concat());
        assert_eq!(ev[0], ClientEvent::Bound { success: true });
        assert_eq!(
            ev[1],
            ClientEvent::UnknownMethod {
                request_id: bogus,
                method: "NoSuchMethod".into()
            }
        );
        let ev = h.receive(&c.take_transmit().concat());
        assert_eq!(
            ev,
            vec![HostEvent::Call {
                request_id: q,
                method: "QueryCapabilities",
                args: vec![]
            }]
        );
        h.reply(q, Ok(vec![1, 2]), true);
        h.reply(q, Ok(vec![3]), false);
        let ev = c.receive(&h.take_transmit().concat());
        assert_eq!(ev.len(), 2);
        assert!(matches!(&ev[1], ClientEvent::Reply { has_more: false, data, .. } if *data == [3]));
    }
}

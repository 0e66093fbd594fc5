//! IPC framing, sans-IO. On the socket every frame is a 4-byte
//! little-endian length followed by a serialized `IPCFrame`. Reads split
//! frames anywhere and may carry several at once, so [`FrameDecoder`]
//! buffers bytes until a whole frame is there. A frame larger than the
//! receive limit ends the connection (as Perfetto's host does); a frame that
//! does not parse is dropped and counted, the stream goes on.

use protozero::{HeapBuffer, Writer};
use zerotrace_protos::protos::{IPCFrame, IPCFrameDecoder};

/// Largest frame (length header included) a peer may send: 128 KiB.
pub const MAX_FRAME_SIZE: usize = 128 * 1024;

/// Size of the length header.
pub const FRAME_HEADER_SIZE: usize = 4;

/// One method of a bound service, as a bind reply lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MethodInfo {
    /// The id to invoke it with.
    pub id: u32,
    /// Its name.
    pub name: String,
}

/// What an `IPCFrame` carries (its `msg` oneof).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FrameMsg {
    /// `BindService`.
    Bind {
        /// The service's name (`ProducerPort`, `ConsumerPort`).
        service_name: String,
    },
    /// `BindServiceReply`.
    BindReply {
        /// Whether the service exists.
        success: bool,
        /// Its id on this connection.
        service_id: u32,
        /// Its methods.
        methods: Vec<MethodInfo>,
    },
    /// `InvokeMethod`.
    Invoke {
        /// The bound service's id.
        service_id: u32,
        /// The method's id.
        method_id: u32,
        /// The encoded request message.
        args: Vec<u8>,
        /// The caller wants no reply.
        drop_reply: bool,
    },
    /// `InvokeMethodReply`.
    InvokeReply {
        /// The call succeeded.
        success: bool,
        /// More replies follow for the same request.
        has_more: bool,
        /// The encoded response message.
        reply: Vec<u8>,
    },
    /// `RequestError`.
    RequestError {
        /// What went wrong.
        error: String,
    },
    /// `SetPeerIdentity` (relays, over non-unix sockets only).
    SetPeerIdentity {
        /// Claimed pid.
        pid: Option<i32>,
        /// Claimed uid.
        uid: Option<i32>,
        /// A hint the machine id is derived from.
        machine_id_hint: Option<String>,
        /// The machine's name.
        machine_name: Option<String>,
    },
    /// No known message.
    Empty,
}

/// One IPC frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    /// Echoed in replies.
    pub request_id: u64,
    /// The message.
    pub msg: FrameMsg,
}

/// Why a frame could not be taken from the stream.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    /// The length header announces more than the limit: the connection
    /// must be closed.
    #[error("IPC frame too large: {size} bytes (limit {MAX_FRAME_SIZE})")]
    TooLarge {
        /// The announced payload size.
        size: usize,
    },
    /// The payload is not an `IPCFrame`: it is dropped.
    #[error("malformed IPC frame: {0}")]
    Malformed(protozero::DecodeError),
}

impl FrameError {
    /// Whether the connection cannot go on after it.
    pub fn is_fatal(&self) -> bool {
        matches!(self, FrameError::TooLarge { .. })
    }
}

impl Frame {
    /// The frame's bytes on the wire, length header included.
    pub fn encode(&self) -> Vec<u8> {
        // One slice for the whole frame: lengths are then backfilled in
        // place (never as patches across slices), so nested lengths are
        // compacted exactly as Perfetto's encoder writes them.
        let estimate = 64
            + match &self.msg {
                FrameMsg::Invoke { args, .. } => args.len(),
                FrameMsg::InvokeReply { reply, .. } => reply.len(),
                FrameMsg::BindReply { methods, .. } => {
                    methods.iter().map(|m| m.name.len() + 16).sum()
                }
                _ => 256,
            };
        let mut w =
            Writer::with_delegate(HeapBuffer::with_slice_sizes(estimate, estimate.max(4096)));
        {
            let mut f = IPCFrame::from_message(w.root());
            f.set_request_id(self.request_id);
            match &self.msg {
                FrameMsg::Bind { service_name } => {
                    f.begin_msg_bind_service().set_service_name(service_name);
                }
                FrameMsg::BindReply {
                    success,
                    service_id,
                    methods,
                } => {
                    let mut r = f.begin_msg_bind_service_reply();
                    r.set_success(*success);
                    r.set_service_id(*service_id);
                    for m in methods {
                        r.add_methods().set_id(m.id).set_name(&m.name);
                    }
                }
                FrameMsg::Invoke {
                    service_id,
                    method_id,
                    args,
                    drop_reply,
                } => {
                    let mut i = f.begin_msg_invoke_method();
                    i.set_service_id(*service_id);
                    i.set_method_id(*method_id);
                    i.set_args_proto(args);
                    i.set_drop_reply(*drop_reply);
                }
                FrameMsg::InvokeReply {
                    success,
                    has_more,
                    reply,
                } => {
                    let mut r = f.begin_msg_invoke_method_reply();
                    r.set_success(*success);
                    r.set_has_more(*has_more);
                    r.set_reply_proto(reply);
                }
                FrameMsg::RequestError { error } => {
                    f.begin_msg_request_error().set_error(error);
                }
                FrameMsg::SetPeerIdentity {
                    pid,
                    uid,
                    machine_id_hint,
                    machine_name,
                } => {
                    let mut p = f.begin_set_peer_identity();
                    if let Some(pid) = pid {
                        p.set_pid(*pid);
                    }
                    if let Some(uid) = uid {
                        p.set_uid(*uid);
                    }
                    if let Some(h) = machine_id_hint {
                        p.set_machine_id_hint(h);
                    }
                    if let Some(n) = machine_name {
                        p.set_machine_name(n);
                    }
                }
                FrameMsg::Empty => {}
            }
        }
        let payload = w.finish().unwrap_or_default();
        let mut out = Vec::with_capacity(FRAME_HEADER_SIZE + payload.len());
        out.extend_from_slice(&(payload.len() as u32).to_le_bytes());
        out.extend_from_slice(&payload);
        out
    }

    /// Parses a frame's payload (without the length header).
    pub fn decode(payload: &[u8]) -> Result<Frame, FrameError> {
        let d = IPCFrameDecoder::new(payload);
        if let Some(e) = d.decode_error() {
            return Err(FrameError::Malformed(e));
        }
        let request_id = d.request_id().unwrap_or(0);
        let msg = if let Some(b) = d.msg_bind_service() {
            FrameMsg::Bind {
                service_name: b.service_name().unwrap_or("").to_owned(),
            }
        } else if let Some(r) = d.msg_bind_service_reply() {
            FrameMsg::BindReply {
                success: r.success().unwrap_or(false),
                service_id: r.service_id().unwrap_or(0),
                methods: r
                    .methods()
                    .map(|m| MethodInfo {
                        id: m.id().unwrap_or(0),
                        name: m.name().unwrap_or("").to_owned(),
                    })
                    .collect(),
            }
        } else if let Some(i) = d.msg_invoke_method() {
            FrameMsg::Invoke {
                service_id: i.service_id().unwrap_or(0),
                method_id: i.method_id().unwrap_or(0),
                args: i.args_proto().unwrap_or(&[]).to_vec(),
                drop_reply: i.drop_reply().unwrap_or(false),
            }
        } else if let Some(r) = d.msg_invoke_method_reply() {
            FrameMsg::InvokeReply {
                success: r.success().unwrap_or(false),
                has_more: r.has_more().unwrap_or(false),
                reply: r.reply_proto().unwrap_or(&[]).to_vec(),
            }
        } else if let Some(e) = d.msg_request_error() {
            FrameMsg::RequestError {
                error: e.error().unwrap_or("").to_owned(),
            }
        } else if let Some(p) = d.set_peer_identity() {
            FrameMsg::SetPeerIdentity {
                pid: p.pid(),
                uid: p.uid(),
                machine_id_hint: p.machine_id_hint().map(str::to_owned),
                machine_name: p.machine_name().map(str::to_owned),
            }
        } else {
            FrameMsg::Empty
        };
        Ok(Frame { request_id, msg })
    }
}

/// Reassembles frames from a byte stream split anywhere.
#[derive(Debug, Default)]
pub struct FrameDecoder {
    buf: Vec<u8>,
    /// Start of the unconsumed bytes in `buf`.
    start: usize,
    /// Frames dropped because they did not parse.
    pub malformed: u64,
}

impl FrameDecoder {
    /// An empty decoder.
    pub fn new() -> FrameDecoder {
        FrameDecoder::default()
    }

    /// Appends bytes read from the socket.
    pub fn push(&mut self, bytes: &[u8]) {
        if self.start > 0 && self.start == self.buf.len() {
            self.buf.clear();
            self.start = 0;
        }
        self.buf.extend_from_slice(bytes);
    }

    /// Bytes received and not yet part of a returned frame.
    pub fn buffered(&self) -> usize {
        self.buf.len() - self.start
    }

    /// The next whole frame, if one is buffered. Malformed frames are
    /// skipped (and counted); an oversized one is an error after which the
    /// decoder returns nothing more.
    pub fn next_frame(&mut self) -> Option<Result<Frame, FrameError>> {
        loop {
            let rest = &self.buf[self.start..];
            if rest.len() < FRAME_HEADER_SIZE {
                self.compact();
                return None;
            }
            let size = u32::from_le_bytes([rest[0], rest[1], rest[2], rest[3]]) as usize;
            if size > MAX_FRAME_SIZE - FRAME_HEADER_SIZE {
                // Nothing after it can be trusted to be a frame boundary.
                self.start = self.buf.len();
                return Some(Err(FrameError::TooLarge { size }));
            }
            if rest.len() < FRAME_HEADER_SIZE + size {
                self.compact();
                return None;
            }
            let payload = &rest[FRAME_HEADER_SIZE..FRAME_HEADER_SIZE + size];
            self.start += FRAME_HEADER_SIZE + size;
            if size == 0 {
                continue;
            }
            match Frame::decode(payload) {
                Ok(f) => return Some(Ok(f)),
                Err(_) => self.malformed += 1,
            }
        }
    }

    /// Drops consumed bytes once they are the larger part of the buffer.
    fn compact(&mut self) {
        if self.start > 0 && self.start * 2 >= self.buf.len() {
            self.buf.drain(..self.start);
            self.start = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames() -> Vec<Frame> {
        vec![
            Frame {
                request_id: 1,
                msg: FrameMsg::Bind {
                    service_name: "ProducerPort".into(),
                },
            },
            Frame {
                request_id: 2,
                msg: FrameMsg::Invoke {
                    service_id: 1,
                    method_id: 4,
                    args: vec![1, 2, 3],
                    drop_reply: true,
                },
            },
            Frame {
                request_id: 2,
                msg: FrameMsg::InvokeReply {
                    success: true,
                    has_more: true,
                    reply: vec![9; 300],
                },
            },
        ]
    }

    #[test]
    fn any_split_gives_the_frames_back() {
        let bytes: Vec<u8> = frames().iter().flat_map(Frame::encode).collect();
        for split in [1, 2, 3, 5, 7, 64, bytes.len()] {
            let mut d = FrameDecoder::new();
            let mut got = Vec::new();
            for piece in bytes.chunks(split) {
                d.push(piece);
                while let Some(f) = d.next_frame() {
                    got.push(f.unwrap());
                }
            }
            assert_eq!(got, frames(), "split {split}");
            assert_eq!(d.buffered(), 0);
        }
    }

    #[test]
    fn oversized_frames_are_fatal_malformed_ones_are_skipped() {
        let mut d = FrameDecoder::new();
        d.push(&[3, 0, 0, 0, 0xff, 0xff, 0xff]);
        d.push(&frames()[0].encode());
        assert_eq!(d.next_frame(), Some(Ok(frames()[0].clone())));
        assert_eq!(d.malformed, 1);
        d.push(&((MAX_FRAME_SIZE as u32).to_le_bytes()));
        let e = d.next_frame().unwrap().unwrap_err();
        assert!(e.is_fatal());
        // The largest allowed frame passes.
        let mut d = FrameDecoder::new();
        let big = Frame {
            request_id: 1,
            msg: FrameMsg::InvokeReply {
                success: true,
                has_more: false,
                reply: vec![0; MAX_FRAME_SIZE - 64],
            },
        };
        let bytes = big.encode();
        assert!(bytes.len() <= MAX_FRAME_SIZE);
        d.push(&bytes);
        assert_eq!(d.next_frame(), Some(Ok(big)));
    }
}

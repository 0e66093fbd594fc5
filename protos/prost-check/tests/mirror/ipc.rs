//! The producer/service wire: CommitDataRequest (chunks to move, chunks to
//! patch with their patches) and IPCFrame (every member of its `msg` oneof):
//! strategies over the prost types, and the copy through our writers and back
//! out of our decoders.

use proptest::prelude::*;
use protozero::Message;
use zerotrace_protos::protos as zp;
use zerotrace_protos_prost_check::protos as pb;

use super::{Layout, Mirror, blob, byte_strings, checked, few, maybe, messages, text};

use pb::commit_data_request as pcd;
use pb::ipc_frame as pif;
use zp::commit_data_request as gcd;
use zp::ipc_frame as gif;

// ---- strategies -------------------------------------------------------------

/// A commit request with moves, patches and a flush id.
pub fn commit_data_request() -> BoxedStrategy<pb::CommitDataRequest> {
    let chunk = (
        maybe(any::<u32>()),
        maybe(any::<u32>()),
        maybe(any::<u32>()),
        maybe(blob()),
        maybe(any::<bool>()),
    )
        .prop_map(|v| pcd::ChunksToMove {
            page: v.0,
            chunk: v.1,
            target_buffer: v.2,
            data: v.3,
            chunk_incomplete: v.4,
        });
    let patch = (maybe(any::<u32>()), maybe(blob()))
        .prop_map(|(offset, data)| pcd::chunk_to_patch::Patch { offset, data });
    let to_patch = (
        maybe(any::<u32>()),
        maybe(any::<u32>()),
        maybe(any::<u32>()),
        few(patch),
        maybe(any::<bool>()),
    )
        .prop_map(|v| pcd::ChunkToPatch {
            target_buffer: v.0,
            writer_id: v.1,
            chunk_id: v.2,
            patches: v.3,
            has_more_patches: v.4,
        });
    (few(chunk), few(to_patch), maybe(any::<u64>()))
        .prop_map(|v| pb::CommitDataRequest {
            chunks_to_move: v.0,
            chunks_to_patch: v.1,
            flush_request_id: v.2,
        })
        .boxed()
}

/// Any member of `IPCFrame.msg`.
fn frame_msg() -> BoxedStrategy<pif::Msg> {
    let method = (maybe(any::<u32>()), maybe(text()))
        .prop_map(|(id, name)| pif::bind_service_reply::MethodInfo { id, name });
    prop_oneof![
        maybe(text())
            .prop_map(|service_name| pif::Msg::MsgBindService(pif::BindService { service_name })),
        (maybe(any::<bool>()), maybe(any::<u32>()), few(method)).prop_map(|v| {
            pif::Msg::MsgBindServiceReply(pif::BindServiceReply {
                success: v.0,
                service_id: v.1,
                methods: v.2,
            })
        }),
        (
            maybe(any::<u32>()),
            maybe(any::<u32>()),
            maybe(blob()),
            maybe(any::<bool>())
        )
            .prop_map(|v| pif::Msg::MsgInvokeMethod(pif::InvokeMethod {
                service_id: v.0,
                method_id: v.1,
                args_proto: v.2,
                drop_reply: v.3,
            })),
        (maybe(any::<bool>()), maybe(any::<bool>()), maybe(blob())).prop_map(|v| {
            pif::Msg::MsgInvokeMethodReply(pif::InvokeMethodReply {
                success: v.0,
                has_more: v.1,
                reply_proto: v.2,
            })
        }),
        maybe(text()).prop_map(|error| pif::Msg::MsgRequestError(pif::RequestError { error })),
        (
            maybe(any::<i32>()),
            maybe(any::<i32>()),
            maybe(text()),
            maybe(text())
        )
            .prop_map(|v| pif::Msg::SetPeerIdentity(pif::SetPeerIdentity {
                pid: v.0,
                uid: v.1,
                machine_id_hint: v.2,
                machine_name: v.3,
            })),
    ]
    .boxed()
}

/// An IPC frame: a request id, at most one message, test payloads.
pub fn ipc_frame() -> BoxedStrategy<pb::IpcFrame> {
    (maybe(any::<u64>()), maybe(frame_msg()), few(blob()))
        .prop_map(|v| pb::IpcFrame {
            request_id: v.0,
            msg: v.1,
            data_for_testing: v.2,
        })
        .boxed()
}

// ---- prost value <-> generated code -----------------------------------------

fn write_commit(v: &pb::CommitDataRequest, w: &mut zp::CommitDataRequest<'_>) {
    for c in &v.chunks_to_move {
        let mut m = w.add_chunks_to_move();
        c.page.map(|x| m.set_page(x));
        c.chunk.map(|x| m.set_chunk(x));
        c.target_buffer.map(|x| m.set_target_buffer(x));
        c.data.as_deref().map(|x| m.set_data(x));
        c.chunk_incomplete.map(|x| m.set_chunk_incomplete(x));
    }
    for c in &v.chunks_to_patch {
        let mut p = w.add_chunks_to_patch();
        c.target_buffer.map(|x| p.set_target_buffer(x));
        c.writer_id.map(|x| p.set_writer_id(x));
        c.chunk_id.map(|x| p.set_chunk_id(x));
        for patch in &c.patches {
            let mut pw = p.add_patches();
            patch.offset.map(|x| pw.set_offset(x));
            patch.data.as_deref().map(|x| pw.set_data(x));
        }
        c.has_more_patches.map(|x| p.set_has_more_patches(x));
    }
    v.flush_request_id.map(|x| w.set_flush_request_id(x));
}

fn read_commit(d: &zp::CommitDataRequestDecoder<'_>) -> pb::CommitDataRequest {
    pb::CommitDataRequest {
        chunks_to_move: messages(d.chunks_to_move(), |c| pcd::ChunksToMove {
            page: c.page(),
            chunk: c.chunk(),
            target_buffer: c.target_buffer(),
            data: c.data().map(<[u8]>::to_vec),
            chunk_incomplete: c.chunk_incomplete(),
        }),
        chunks_to_patch: messages(d.chunks_to_patch(), |c: &gcd::ChunkToPatchDecoder<'_>| {
            pcd::ChunkToPatch {
                target_buffer: c.target_buffer(),
                writer_id: c.writer_id(),
                chunk_id: c.chunk_id(),
                patches: messages(c.patches(), |p| pcd::chunk_to_patch::Patch {
                    offset: p.offset(),
                    data: p.data().map(<[u8]>::to_vec),
                }),
                has_more_patches: c.has_more_patches(),
            }
        }),
        flush_request_id: d.flush_request_id(),
    }
}

fn write_frame(v: &pb::IpcFrame, w: &mut zp::IPCFrame<'_>) {
    v.request_id.map(|x| w.set_request_id(x));
    match &v.msg {
        Some(pif::Msg::MsgBindService(m)) => {
            let mut b = w.begin_msg_bind_service();
            m.service_name.as_deref().map(|x| b.set_service_name(x));
        }
        Some(pif::Msg::MsgBindServiceReply(m)) => {
            let mut r = w.begin_msg_bind_service_reply();
            m.success.map(|x| r.set_success(x));
            m.service_id.map(|x| r.set_service_id(x));
            for method in &m.methods {
                let mut mi = r.add_methods();
                method.id.map(|x| mi.set_id(x));
                method.name.as_deref().map(|x| mi.set_name(x));
            }
        }
        Some(pif::Msg::MsgInvokeMethod(m)) => {
            let mut i = w.begin_msg_invoke_method();
            m.service_id.map(|x| i.set_service_id(x));
            m.method_id.map(|x| i.set_method_id(x));
            m.args_proto.as_deref().map(|x| i.set_args_proto(x));
            m.drop_reply.map(|x| i.set_drop_reply(x));
        }
        Some(pif::Msg::MsgInvokeMethodReply(m)) => {
            let mut r = w.begin_msg_invoke_method_reply();
            m.success.map(|x| r.set_success(x));
            m.has_more.map(|x| r.set_has_more(x));
            m.reply_proto.as_deref().map(|x| r.set_reply_proto(x));
        }
        Some(pif::Msg::MsgRequestError(m)) => {
            let mut e = w.begin_msg_request_error();
            m.error.as_deref().map(|x| e.set_error(x));
        }
        Some(pif::Msg::SetPeerIdentity(m)) => {
            let mut p = w.begin_set_peer_identity();
            m.pid.map(|x| p.set_pid(x));
            m.uid.map(|x| p.set_uid(x));
            m.machine_id_hint
                .as_deref()
                .map(|x| p.set_machine_id_hint(x));
            m.machine_name.as_deref().map(|x| p.set_machine_name(x));
        }
        None => {}
    }
    v.data_for_testing
        .iter()
        .for_each(|x| _ = w.add_data_for_testing(x));
}

fn read_frame(d: &zp::IPCFrameDecoder<'_>) -> pb::IpcFrame {
    let owned = |s: Option<&str>| s.map(str::to_owned);
    let msg = d.which_msg().map(|m| match m {
        gif::Msg::MsgBindService(b) => pif::Msg::MsgBindService(pif::BindService {
            service_name: owned(checked(b).service_name()),
        }),
        gif::Msg::MsgBindServiceReply(r) => {
            let r = checked(r);
            pif::Msg::MsgBindServiceReply(pif::BindServiceReply {
                success: r.success(),
                service_id: r.service_id(),
                methods: messages(r.methods(), |mi| pif::bind_service_reply::MethodInfo {
                    id: mi.id(),
                    name: owned(mi.name()),
                }),
            })
        }
        gif::Msg::MsgInvokeMethod(i) => {
            let i = checked(i);
            pif::Msg::MsgInvokeMethod(pif::InvokeMethod {
                service_id: i.service_id(),
                method_id: i.method_id(),
                args_proto: i.args_proto().map(<[u8]>::to_vec),
                drop_reply: i.drop_reply(),
            })
        }
        gif::Msg::MsgInvokeMethodReply(r) => {
            let r = checked(r);
            pif::Msg::MsgInvokeMethodReply(pif::InvokeMethodReply {
                success: r.success(),
                has_more: r.has_more(),
                reply_proto: r.reply_proto().map(<[u8]>::to_vec),
            })
        }
        gif::Msg::MsgRequestError(e) => pif::Msg::MsgRequestError(pif::RequestError {
            error: owned(checked(e).error()),
        }),
        gif::Msg::SetPeerIdentity(p) => {
            let p = checked(p);
            pif::Msg::SetPeerIdentity(pif::SetPeerIdentity {
                pid: p.pid(),
                uid: p.uid(),
                machine_id_hint: owned(p.machine_id_hint()),
                machine_name: owned(p.machine_name()),
            })
        }
    });
    pb::IpcFrame {
        request_id: d.request_id(),
        msg,
        data_for_testing: byte_strings(d.data_for_testing()),
    }
}

impl Mirror for pb::CommitDataRequest {
    fn write(&self, msg: Message<'_>, _: Layout) {
        write_commit(self, &mut zp::CommitDataRequest::from_message(msg));
    }
    fn read(bytes: &[u8]) -> Self {
        read_commit(&checked(zp::CommitDataRequestDecoder::new(bytes)))
    }
}

impl Mirror for pb::IpcFrame {
    fn write(&self, msg: Message<'_>, _: Layout) {
        write_frame(self, &mut zp::IPCFrame::from_message(msg));
    }
    fn read(bytes: &[u8]) -> Self {
        read_frame(&checked(zp::IPCFrameDecoder::new(bytes)))
    }
}

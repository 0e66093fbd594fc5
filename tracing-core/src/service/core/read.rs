//! Reading a session out: the service packets, then every buffer's packets
//! with the trusted fields appended, sliced into ReadBuffers replies under
//! the IPC frame limit or appended to the session's file.

use std::io::Write;

use protozero::Message;
use zerotrace_protos::protos::{ReadBuffersResponse, TraceStats};

use super::TracingService;
use super::state::{Session, SessionState};
use crate::service::action::{Action, Peer, Reply};
use crate::service::ids::{ConsumerId, RequestId, SessionId};
use crate::service::packet_validator::{TrustedFields, append_trusted_fields, validate};
use crate::service::service_packets::{
    ServiceEvent, clock_snapshot_packet, clone_snapshot_trigger_packet, encode, provenance_packet,
    service_event_packet, sync_marker_packet, system_info_packet, trace_config_packet,
    trace_stats_packet, trace_uuid_packet, trigger_packet,
};
use crate::service::trace_buffer::{CHUNK_FILL_BUCKETS, TraceBuffer};

/// Minimum time between two sync markers in one session's output.
const SYNC_MARKER_PERIOD_NS: u64 = 5_000_000_000;

/// Bytes of packets one step of a ReadBuffers hands out, as Perfetto's
/// service reads 32 KiB a task. A step's packets are copied twice on their
/// way out (into the encoded replies, then into frames queued for the
/// socket), so steps of megabytes cost the service several megabytes of
/// heap at every read, which the allocator kept: the soak
/// (`tracing-core/interop/src/soak`) measured 2 MiB steps at 4 MiB over
/// Perfetto's service, 128 KiB steps at 0.3 MiB over its peak, 32 KiB
/// steps below it, with reads as fast.
pub const READ_BATCH_BYTES: usize = 32 << 10;

/// Bytes of packets deflated into one `compressed_packets` packet.
const COMPRESSION_BATCH: usize = 500 * 1024;

/// Counters across the service, as `TraceStats` reports them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GlobalStats {
    /// Producers connected now.
    pub producers_connected: u32,
    /// Producers ever connected.
    pub producers_seen: u64,
    /// Data sources registered now.
    pub data_sources_registered: u32,
    /// Data sources ever registered.
    pub data_sources_seen: u64,
    /// Sessions now.
    pub tracing_sessions: u32,
    /// Trace buffers now.
    pub total_buffers: u32,
    /// Chunks the commit path discarded.
    pub chunks_discarded: u64,
    /// Patch groups the commit path discarded.
    pub patches_discarded: u64,
}

impl TracingService {
    /// The service-wide part of `TraceStats`.
    pub fn global_stats(&self) -> GlobalStats {
        GlobalStats {
            producers_connected: self.producers.len() as u32,
            producers_seen: self.stats.producers_seen,
            data_sources_registered: self
                .producers
                .values()
                .map(|p| p.data_sources.len() as u32)
                .sum(),
            data_sources_seen: self.stats.data_sources_seen,
            tracing_sessions: self.sessions.len() as u32,
            total_buffers: self.buffers.len() as u32,
            chunks_discarded: self.stats.commit.chunks_discarded,
            patches_discarded: self.stats.commit.patches_discarded,
        }
    }

    /// Encodes `TraceStats` of `session` into `m`.
    pub(super) fn write_trace_stats(&self, s: &Session, m: Message<'_>) {
        let mut t = TraceStats::from_message(m);
        let buffers: Vec<&TraceBuffer> = s
            .buffers
            .iter()
            .filter_map(|b| self.buffers.get(b).map(|(_, t)| t))
            .collect();
        for b in &buffers {
            let st = b.stats();
            let mut e = t.add_buffer_stats();
            e.set_buffer_size(st.buffer_size);
            e.set_bytes_written(st.bytes_written);
            e.set_bytes_overwritten(st.bytes_overwritten);
            e.set_bytes_read(st.bytes_read);
            e.set_padding_bytes_written(st.padding_bytes_written);
            e.set_chunks_written(st.chunks_written);
            e.set_chunks_rewritten(st.chunks_rewritten);
            e.set_chunks_overwritten(st.chunks_overwritten);
            e.set_chunks_discarded(st.chunks_discarded);
            e.set_chunks_read(st.chunks_read);
            e.set_chunks_committed_out_of_order(st.chunks_committed_out_of_order);
            e.set_write_wrap_count(st.write_wrap_count);
            e.set_patches_succeeded(st.patches_succeeded);
            e.set_patches_failed(st.patches_failed);
            e.set_abi_violations(st.abi_violations);
            e.set_trace_writer_packet_loss(st.trace_writer_packet_loss);
        }
        if !s.config.disable_chunk_usage_histograms {
            for b in CHUNK_FILL_BUCKETS {
                t.add_chunk_payload_histogram_def(b as i64);
            }
            for (index, b) in buffers.iter().enumerate() {
                for (&(producer, writer), h) in b.writer_stats() {
                    let Some(&seq) = s.sequences.ids.get(&(producer, writer)) else {
                        continue;
                    };
                    let mut w = t.add_writer_stats();
                    w.set_sequence_id(seq as u64);
                    w.set_buffer(index as u32);
                    w.set_chunk_payload_histogram_counts(h.counts.iter().copied());
                    w.set_chunk_payload_histogram_sum(h.sums.iter().map(|&v| v as i64));
                }
            }
        }
        let g = self.global_stats();
        t.set_producers_connected(g.producers_connected);
        t.set_producers_seen(g.producers_seen);
        t.set_data_sources_registered(g.data_sources_registered);
        t.set_data_sources_seen(g.data_sources_seen);
        t.set_tracing_sessions(g.tracing_sessions);
        t.set_total_buffers(g.total_buffers);
        t.set_chunks_discarded(g.chunks_discarded);
        t.set_patches_discarded(g.patches_discarded);
        t.set_invalid_packets(s.invalid_packets);
        t.set_flushes_requested(s.flushes.requested);
        t.set_flushes_succeeded(s.flushes.succeeded);
        t.set_flushes_failed(s.flushes.failed);
        if s.flushes.final_outcome != 0 {
            t.set_final_flush_outcome_raw(s.flushes.final_outcome);
        }
    }

    /// The service packets that precede the data of a read: on the first
    /// read the initial clock snapshot, the config, the uuid; then new clock
    /// snapshots, the sync marker (at most every 5 s), the provenance and
    /// system info (first read), the service events and the triggers.
    fn service_preamble(&mut self, session: SessionId) -> Vec<Vec<u8>> {
        let uid = self.opts.service_uid;
        let now = self.now;
        let system_info = match self.sessions.get(&session) {
            Some(s) if !s.preamble_written && !s.config.disable_system_info => {
                Some(self.env.system_info())
            }
            _ => None,
        };
        // Sequence ids for every writer that committed so far, in (producer,
        // writer) order, so the provenance can name them before the data.
        let mut provenance = Vec::new();
        if let Some(s) = self.sessions.get(&session) {
            for bid in &s.buffers {
                let writers: Vec<(u16, u16)> = self
                    .buffers
                    .get(bid)
                    .map(|(_, b)| b.writer_stats().keys().copied().collect())
                    .unwrap_or_default();
                provenance.push(writers);
            }
        }
        let Some(s) = self.sessions.get_mut(&session) else {
            return Vec::new();
        };
        let provenance: Vec<Vec<(u32, u16)>> = provenance
            .into_iter()
            .map(|ws| {
                ws.into_iter()
                    .map(|(p, w)| (s.sequence_id(p, w), p))
                    .collect()
            })
            .collect();
        let mut out = Vec::new();
        let primary = s.config.primary_trace_clock;
        if !s.preamble_written {
            if let Some(c) = &s.clocks.initial {
                out.push(clock_snapshot_packet(uid, primary, c));
            }
            if !s.config.disable_trace_config {
                out.push(trace_config_packet(uid, &s.config.raw));
                if let Some(t) = &s.clone_trigger {
                    out.push(clone_snapshot_trigger_packet(uid, t));
                }
            }
            out.push(trace_uuid_packet(uid, s.uuid));
        }
        for c in s.clocks.snapshots.drain(..) {
            out.push(clock_snapshot_packet(uid, primary, &c));
        }
        if s.last_sync_marker
            .is_none_or(|t| now.saturating_sub(t) >= SYNC_MARKER_PERIOD_NS)
        {
            out.push(sync_marker_packet(uid));
            s.last_sync_marker = Some(now);
        }
        if !s.preamble_written {
            out.push(provenance_packet(uid, now, &provenance));
            if let Some(info) = system_info {
                out.push(system_info_packet(uid, &info));
            }
            s.preamble_written = true;
        }
        out.extend(self.remote_machine_packets(session));
        let Some(s) = self.sessions.get_mut(&session) else {
            return out;
        };
        drain_service_events(s, uid, &mut out);
        for (name, producer, puid, ts) in s.triggers_received.drain(..) {
            out.push(trigger_packet(uid, ts, &name, &producer, puid));
        }
        s.read.buffer = 0;
        s.read.begun = false;
        out
    }

    /// Producer packets of `session`, with their trusted fields, until about
    /// `budget` bytes are collected; the bool says whether every buffer has
    /// been read to its end. Reading resumes where the last call stopped.
    fn read_data(&mut self, session: SessionId, budget: usize) -> (Vec<Vec<u8>>, bool) {
        let mut data = Vec::new();
        let mut bytes = 0;
        let Some(s) = self.sessions.get_mut(&session) else {
            return (data, true);
        };
        let mut packet = Vec::new();
        while let Some(&bid) = s.buffers.get(s.read.buffer) {
            let Some((_, buffer)) = self.buffers.get_mut(&bid) else {
                s.read.buffer += 1;
                s.read.begun = false;
                continue;
            };
            if !s.read.begun {
                buffer.begin_read();
                s.read.begun = true;
            }
            loop {
                if bytes >= budget {
                    return (data, false);
                }
                let Some(info) = buffer.read_next_packet(&mut packet) else {
                    break;
                };
                if validate(&packet).is_err() {
                    packet.clear();
                    s.invalid_packets += 1;
                    continue;
                }
                let (producer, writer) = (info.sequence.producer, info.sequence.writer);
                let identity = s.producer_meta.get(&producer).copied().unwrap_or_default();
                let sequence_id = s.sequence_id(producer, writer);
                let mut p = std::mem::take(&mut packet);
                append_trusted_fields(
                    &TrustedFields {
                        uid: identity.uid as i32,
                        pid: identity.pid,
                        sequence_id,
                        previous_packet_dropped: info.loss.0,
                        machine_id: identity.machine_id,
                    },
                    &mut p,
                );
                bytes += p.len();
                data.push(p);
            }
            s.read.buffer += 1;
            s.read.begun = false;
        }
        (data, true)
    }

    /// The packets that close a read that left nothing more to read, as
    /// Perfetto's service writes them after every such read (running or
    /// stopped, over IPC or into the file): "read tracing buffers
    /// completed", stamped now, with any service event recorded while the
    /// read was under way, in time order; then the trace stats. The trace
    /// processor takes "read completed" as a safe point of its sort window:
    /// a session read periodically without it is sorted whole.
    fn end_packets(&mut self, session: SessionId) -> Vec<Vec<u8>> {
        let uid = self.opts.service_uid;
        let now = self.now;
        let mut out = Vec::new();
        let Some(s) = self.sessions.get_mut(&session) else {
            return out;
        };
        if !s.config.disable_service_events {
            s.events
                .push((now, ServiceEvent::ReadTracingBuffersCompleted as u32, 1));
        }
        drain_service_events(s, uid, &mut out);
        let Some(s) = self.sessions.get(&session) else {
            return out;
        };
        out.push(trace_stats_packet(uid, |m| self.write_trace_stats(s, m)));
        out
    }

    /// Everything `session` has to give now, as whole packets.
    fn collect_packets(&mut self, session: SessionId) -> Vec<Vec<u8>> {
        let mut out = self.service_preamble(session);
        out.extend(self.read_data(session, usize::MAX).0);
        out.extend(self.end_packets(session));
        out
    }

    /// Starts streaming `session` to `consumer` as ReadBuffers replies. A
    /// read hands out about [`READ_BATCH_BYTES`] at a time; the driver asks
    /// for more with [`resume_read`](Self::resume_read) as the consumer
    /// drains its socket, so a large buffer never piles up in memory.
    pub(super) fn read_buffers(
        &mut self,
        session: SessionId,
        consumer: ConsumerId,
        request: RequestId,
    ) {
        let preamble = self.service_preamble(session);
        self.pending_reads.insert(consumer, (session, request));
        self.continue_read(consumer, preamble);
    }

    /// Whether a ReadBuffers of `consumer` has more to send.
    pub fn has_pending_read(&self, consumer: ConsumerId) -> bool {
        self.pending_reads.contains_key(&consumer)
    }

    /// Sends the next batch of a pending ReadBuffers of `consumer` (call it
    /// when the consumer's connection has room again).
    pub fn resume_read(&mut self, now: u64, consumer: ConsumerId) {
        self.advance(now);
        self.continue_read(consumer, Vec::new());
    }

    fn continue_read(&mut self, consumer: ConsumerId, mut packets: Vec<Vec<u8>>) {
        let Some(&(session, request)) = self.pending_reads.get(&consumer) else {
            return;
        };
        let (data, done) = self.read_data(session, READ_BATCH_BYTES);
        packets.extend(data);
        if done {
            packets.extend(self.end_packets(session));
            self.pending_reads.remove(&consumer);
        }
        let deflate = self
            .sessions
            .get(&session)
            .is_some_and(|s| s.config.deflate);
        if deflate {
            packets = compress(packets);
        }
        self.send_read_replies(consumer, request, &packets, done);
    }

    /// Slices `packets` into replies under the IPC frame limit; a packet
    /// larger than a reply spans several, only its last slice marked as
    /// such. The last reply has `has_more` = `!done`.
    fn send_read_replies(
        &mut self,
        consumer: ConsumerId,
        request: RequestId,
        packets: &[Vec<u8>],
        done: bool,
    ) {
        let max = self.opts.max_read_reply_bytes.max(1024);
        let to = Peer::Consumer(consumer);
        // Slices of the current reply: (bytes, last slice of its packet).
        let mut reply: Vec<(&[u8], bool)> = Vec::new();
        let mut size = 0;
        let mut replies = Vec::new();
        for p in packets {
            let mut rest: &[u8] = p;
            loop {
                let room = max.saturating_sub(size + 16);
                if room < 64 && !reply.is_empty() {
                    replies.push(encode_slices(&reply));
                    reply.clear();
                    size = 0;
                    continue;
                }
                let take = rest.len().min(room.max(64));
                let (head, tail) = rest.split_at(take);
                reply.push((head, tail.is_empty()));
                size += head.len() + 16;
                rest = tail;
                if rest.is_empty() {
                    break;
                }
            }
        }
        if !reply.is_empty() {
            replies.push(encode_slices(&reply));
        }
        if replies.is_empty() && done {
            // The stream must end with a reply that says so.
            replies.push(Vec::new());
        }
        let n = replies.len();
        for (i, data) in replies.into_iter().enumerate() {
            let r = if i + 1 == n && done {
                Reply::done(data)
            } else {
                Reply::more(data)
            };
            self.reply(to, request, r);
        }
    }

    /// Appends what `session` holds to its file; `last` closes it.
    pub(super) fn write_into_file(&mut self, session: SessionId, last: bool) {
        let Some(s) = self.sessions.get(&session) else {
            return;
        };
        if s.file.closed {
            return;
        }
        let (deflate, max, fflush) = (
            s.config.deflate,
            s.config.max_file_size_bytes,
            s.config.fflush_post_write,
        );
        let mut packets = self.collect_packets(session);
        if deflate {
            packets = compress(packets);
        }
        let Some(s) = self.sessions.get_mut(&session) else {
            return;
        };
        let mut data = Vec::new();
        let mut reached_limit = false;
        for p in &packets {
            let start = data.len();
            append_record(&mut data, p);
            if max > 0 && s.file.bytes_written + data.len() as u64 > max {
                data.truncate(start);
                reached_limit = true;
                break;
            }
        }
        s.file.bytes_written += data.len() as u64;
        let close = last || reached_limit;
        if close {
            s.file.closed = true;
            s.file.close_pending = true;
        }
        if !data.is_empty() {
            self.push(Action::WriteFile {
                session,
                data,
                sync: fflush,
            });
        }
        if close {
            self.push(Action::CloseFile { session });
        }
        if reached_limit
            && self
                .sessions
                .get(&session)
                .is_some_and(|s| s.state == SessionState::Started)
        {
            self.stop_session(session);
        }
    }
}

/// Moves the service events `s` recorded into `out` as packets, in time
/// order (events recorded at one time keep their order), or drops them
/// when the config disables service events.
fn drain_service_events(s: &mut Session, uid: u32, out: &mut Vec<Vec<u8>>) {
    if s.config.disable_service_events {
        s.events.clear();
        return;
    }
    s.events.sort_by_key(|e| e.0);
    for (ts, field, value) in s.events.drain(..) {
        out.push(service_event_packet(uid, ts, field, value));
    }
}

/// Appends one `Trace.packet` record (tag 1, length, bytes).
fn append_record(out: &mut Vec<u8>, packet: &[u8]) {
    out.push(0x0A);
    let mut len = packet.len() as u64;
    while len >= 0x80 {
        out.push((len as u8) | 0x80);
        len >>= 7;
    }
    out.push(len as u8);
    out.extend_from_slice(packet);
}

/// Encodes one ReadBuffersResponse from its slices.
fn encode_slices(slices: &[(&[u8], bool)]) -> Vec<u8> {
    encode(|m| {
        let mut r = ReadBuffersResponse::from_message(m);
        for (data, last) in slices {
            let mut s = r.add_slices();
            s.set_data(data);
            s.set_last_slice_for_packet(*last);
        }
    })
}

/// Deflates packets in batches into `compressed_packets` packets (each a
/// zlib stream of `Trace.packet` records), as Perfetto's service does.
fn compress(packets: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut batch = Vec::new();
    let flush = |batch: &mut Vec<u8>, out: &mut Vec<Vec<u8>>| {
        if batch.is_empty() {
            return;
        }
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        let compressed = z
            .write_all(batch)
            .and_then(|_| z.finish())
            .unwrap_or_default();
        out.push(encode(|m| {
            zerotrace_protos::protos::TracePacket::from_message(m)
                .set_compressed_packets(&compressed);
        }));
        batch.clear();
    };
    for p in packets {
        append_record(&mut batch, &p);
        if batch.len() >= COMPRESSION_BATCH {
            flush(&mut batch, &mut out);
        }
    }
    flush(&mut batch, &mut out);
    out
}

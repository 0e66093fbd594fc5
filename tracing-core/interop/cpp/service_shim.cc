// Service-side shims over the genuine Perfetto sources, for zerotrace's
// interop tests and benchmarks.
//
// The C SDK's public API exposes no service classes, yet its amalgamated
// source (vendored by the `perfetto-sdk-sys` crate, found by build.rs and never
// committed here) compiles all of them. This file includes that source, so the
// shims and Perfetto's own code form ONE translation unit: internal classes
// are reachable without headers of their own, and the 12 MB file is compiled
// exactly once (build.rs caches the static library across cargo profiles).
//
// Every shim has C linkage and a `zt_` prefix; Rust declares them in
// tracing-core/interop/src/genuine/. Add further service-side shims as new
// sections at the end of this file rather than as new translation units: two
// copies of the amalgamation must never be linked into one binary.
//
// No Perfetto code is copied here: the shims only call Perfetto's classes.

#include "perfetto_c.cc"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <list>
#include <memory>

// ---------------------------------------------------------------------------
// Section: trace buffers (TraceBufferV1 and TraceBufferV2).
// ---------------------------------------------------------------------------

namespace zt_shim {

// A genuine trace buffer plus the packet most recently read from it. The
// packet's slices point into the buffer and stay valid until the next read.
struct TraceBufferHandle {
  std::unique_ptr<perfetto::TraceBuffer> buffer;
  perfetto::TracePacket packet;
  bool has_packet = false;
};

// Copies the slices of `packet` into `dst` back to back.
void CopySlices(const perfetto::TracePacket& packet, uint8_t* dst) {
  for (const perfetto::Slice& slice : packet.slices()) {
    memcpy(dst, slice.start, slice.size);
    dst += slice.size;
  }
}

}  // namespace zt_shim

// What zt_tb_read_next reports about a packet besides its bytes.
struct ZtPacketInfo {
  uint16_t producer_id;
  uint16_t writer_id;
  uint32_t producer_uid;
  // `previous_packet_on_sequence_dropped` as the buffer reports it (V1: 0 or
  // 1; V2: a loss-reason bit set).
  uint32_t loss;
};

extern "C" {

// Creates a buffer of `size` bytes. `version` is 1 (TraceBufferV1) or 2
// (TraceBufferV2); `discard` selects the discard policy over the ring-buffer
// (overwrite) one. Returns null for an unknown version or a failed
// allocation.
zt_shim::TraceBufferHandle* zt_tb_create(uint32_t version,
                                         size_t size,
                                         bool discard) {
  using perfetto::TraceBuffer;
  const TraceBuffer::OverwritePolicy policy =
      discard ? TraceBuffer::kDiscard : TraceBuffer::kOverwrite;
  std::unique_ptr<TraceBuffer> buffer;
  if (version == 1) {
    buffer = perfetto::TraceBufferV1::Create(size, policy);
  } else if (version == 2) {
    buffer = perfetto::TraceBufferV2::Create(size, policy);
  }
  if (!buffer)
    return nullptr;
  auto* handle = new zt_shim::TraceBufferHandle();
  handle->buffer = std::move(buffer);
  return handle;
}

void zt_tb_destroy(zt_shim::TraceBufferHandle* handle) {
  delete handle;
}

// Hands one chunk's payload (the bytes after the 8-byte chunk header) to the
// buffer, exactly as the service's commit path does.
void zt_tb_copy_chunk(zt_shim::TraceBufferHandle* handle,
                      uint16_t producer_id,
                      uint32_t producer_uid,
                      uint16_t writer_id,
                      uint32_t chunk_id,
                      uint16_t num_fragments,
                      uint8_t chunk_flags,
                      bool chunk_complete,
                      const uint8_t* payload,
                      size_t len) {
  const perfetto::ClientIdentity identity(producer_uid, /*pid=*/0);
  handle->buffer->CopyChunkUntrusted(producer_id, identity, writer_id,
                                     chunk_id, num_fragments, chunk_flags,
                                     chunk_complete, payload, len);
}

// Applies `count` 4-byte patches to a stored chunk: `offsets[i]` (from the
// payload start) receives `data[4 * i .. 4 * i + 4]`. Returns whether the
// chunk was found and patched.
bool zt_tb_try_patch(zt_shim::TraceBufferHandle* handle,
                     uint16_t producer_id,
                     uint16_t writer_id,
                     uint32_t chunk_id,
                     const uint32_t* offsets,
                     const uint8_t* data,
                     size_t count,
                     bool more_patches_pending) {
  std::unique_ptr<perfetto::TraceBuffer::Patch[]> patches(
      new perfetto::TraceBuffer::Patch[count > 0 ? count : 1]);
  for (size_t i = 0; i < count; i++) {
    patches[i].offset_untrusted = offsets[i];
    memcpy(patches[i].data.data(), data + 4 * i, 4);
  }
  return handle->buffer->TryPatchChunkContents(producer_id, writer_id, chunk_id,
                                               patches.get(), count,
                                               more_patches_pending);
}

void zt_tb_begin_read(zt_shim::TraceBufferHandle* handle) {
  handle->has_packet = false;
  handle->buffer->BeginRead();
}

// Reads the next packet. Returns -1 when nothing more can be read in this
// pass, else the packet's size; its bytes are copied to `dst` when the size
// is at most `cap`. A larger packet stays available to zt_tb_copy_last.
int64_t zt_tb_read_next(zt_shim::TraceBufferHandle* handle,
                        uint8_t* dst,
                        size_t cap,
                        ZtPacketInfo* info) {
  perfetto::TracePacket& packet = handle->packet;
  packet.Clear();
  perfetto::TraceBuffer::PacketSequenceProperties props{};
  uint32_t loss = 0;
  handle->has_packet =
      handle->buffer->ReadNextTracePacket(&packet, &props, &loss);
  if (!handle->has_packet)
    return -1;
  info->producer_id = props.producer_id_trusted;
  info->writer_id = props.writer_id;
  info->producer_uid = static_cast<uint32_t>(props.producer_uid_trusted());
  info->loss = loss;
  const size_t size = packet.size();
  if (size <= cap)
    zt_shim::CopySlices(packet, dst);
  return static_cast<int64_t>(size);
}

// Copies the packet returned by the last zt_tb_read_next into `dst`, which
// must hold its size. Returns false if there is no such packet.
bool zt_tb_copy_last(zt_shim::TraceBufferHandle* handle, uint8_t* dst) {
  if (!handle->has_packet)
    return false;
  zt_shim::CopySlices(handle->packet, dst);
  return true;
}

// Copies the buffer's counters (BufferStats, by proto field number) into
// `out[0..count]`: out[i] is the field numbered i + 1.
void zt_tb_stats(const zt_shim::TraceBufferHandle* handle,
                 uint64_t* out,
                 size_t count) {
  const perfetto::TraceStats::BufferStats& s = handle->buffer->stats();
  const uint64_t fields[] = {
      s.bytes_written(),
      s.chunks_written(),
      s.chunks_overwritten(),
      s.write_wrap_count(),
      s.patches_succeeded(),
      s.patches_failed(),
      s.readaheads_succeeded(),
      s.readaheads_failed(),
      s.abi_violations(),
      s.chunks_rewritten(),
      s.chunks_committed_out_of_order(),
      s.buffer_size(),
      s.bytes_overwritten(),
      s.bytes_read(),
      s.padding_bytes_written(),
      s.padding_bytes_cleared(),
      s.chunks_read(),
      s.chunks_discarded(),
      s.trace_writer_packet_loss(),
      s.chunks_relocated(),
  };
  const size_t n = sizeof(fields) / sizeof(fields[0]);
  for (size_t i = 0; i < count; i++)
    out[i] = i < n ? fields[i] : 0;
}

}  // extern "C"

// ---------------------------------------------------------------------------
// Section: the genuine tracing service on its IPC sockets.
//
// What `traced` runs, minus its command line: Perfetto's ServiceIPCHost (the
// TracingService business logic plus the ProducerPort and ConsumerPort IPC
// hosts) listening on a producer and a consumer socket, driven by its own
// task runner on a dedicated thread. The host is created, started and
// destroyed on that thread, as Perfetto requires of everything bound to a
// task runner.
// ---------------------------------------------------------------------------

namespace zt_shim {

struct GenuineService {
  std::unique_ptr<perfetto::base::ThreadTaskRunner> runner;
  std::unique_ptr<perfetto::ServiceIPCHost> host;
};

// Starts the service on its own thread: `start` binds the host's sockets
// there. Null if they could not be bound.
template <typename StartFn>
GenuineService* StartService(StartFn start) {
  auto* svc = new GenuineService();
  svc->runner.reset(new perfetto::base::ThreadTaskRunner(
      perfetto::base::ThreadTaskRunner::CreateAndStart("zt-genuine-svc")));
  bool started = false;
  svc->runner->PostTaskAndWaitForTesting([svc, &start, &started] {
    svc->host = perfetto::ServiceIPCHost::CreateInstance(svc->runner->get());
    started = start(svc->host.get());
    if (!started)
      svc->host.reset();
  });
  if (!started) {
    delete svc;
    return nullptr;
  }
  return svc;
}

}  // namespace zt_shim

extern "C" {

// Starts the service listening on `producer_socket` (a comma-separated list
// is allowed, as for `traced`) and `consumer_socket` (AF_UNIX paths, `@name`
// abstract sockets or `host:port`). Returns null if a socket could not be
// bound.
zt_shim::GenuineService* zt_svc_start(const char* producer_socket,
                                      const char* consumer_socket) {
  return zt_shim::StartService([&](perfetto::ServiceIPCHost* host) {
    return host->Start(producer_socket, consumer_socket);
  });
}

// As zt_svc_start, with one more producer socket, `relay_socket`, that
// also exposes the RelayPort service (what traced's
// --enable-relay-endpoint does), for relays on other machines.
zt_shim::GenuineService* zt_svc_start_relay(const char* producer_socket,
                                            const char* relay_socket,
                                            const char* consumer_socket) {
  return zt_shim::StartService([&](perfetto::ServiceIPCHost* host) {
    std::list<perfetto::ListenEndpoint> producers;
    producers.emplace_back(producer_socket);
    perfetto::ListenEndpoint relay(relay_socket);
    relay.expose_relay_endpoint = true;
    producers.push_back(std::move(relay));
    return host->Start(std::move(producers),
                       perfetto::ListenEndpoint(consumer_socket));
  });
}

// Stops the service: destroys the host on its thread (closing every
// connection and both listening sockets), then joins the thread.
void zt_svc_stop(zt_shim::GenuineService* svc) {
  svc->runner->PostTaskAndWaitForTesting([svc] { svc->host.reset(); });
  delete svc;
}

}  // extern "C"

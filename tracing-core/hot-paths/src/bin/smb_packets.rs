//! Writes trace packets through a `TraceWriter` into a shared memory buffer
//! whose chunks an in-process "service" frees as soon as they are committed,
//! then prints what went through.
//!
//! Run: `cargo run --release -p zerotrace-hot-paths --bin smb_packets -- 100000`
//! (add `heap` after the count for the baseline: the same packets into a
//! reused heap buffer).
//! With `valgrind --tool=callgrind --toggle-collect='smb_packets::run_*'`
//! at two packet counts, the difference of the instruction totals divided
//! by the difference of the counts is the cost of one packet (the README's
//! instruction figures come from that; `cargo xtask instructions` checks it
//! against its budget): only the writing loops are counted.

use std::sync::{Arc, Mutex};

use protozero::Message;
use zerotrace_core::abi::SharedMemoryAbi;
use zerotrace_core::producer::{
    ArbiterConfig, BufferExhaustedPolicy, CommitSink, FlushCallback, SharedMemoryArbiter,
};
use zerotrace_core::protocol::CommitDataRequest;
use zerotrace_core::shm::{HeapShm, SharedMemoryRegion};

/// Frees every committed chunk at once, counting chunks and requests.
struct FreeingService {
    abi: SharedMemoryAbi,
    _region: Arc<dyn SharedMemoryRegion>,
    counts: Mutex<(u64, u64)>,
}

impl CommitSink for FreeingService {
    fn commit_data(&self, request: &mut CommitDataRequest, on_complete: Option<FlushCallback>) {
        let mut counts = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        counts.1 += 1;
        for m in &request.chunks_to_move {
            if let Ok(chunk) = self
                .abi
                .try_acquire_chunk_for_reading(m.page as usize, m.chunk as usize)
            {
                counts.0 += 1;
                let _ = self.abi.release_chunk_as_free(chunk);
            }
        }
        if let Some(cb) = on_complete {
            cb();
        }
    }
}

/// The TRACE_EVENT slice-begin packet of the benchmarks.
fn slice_begin(p: &mut Message<'_>, ts: u64) {
    p.append_uint64(8, ts);
    p.append_uint32(13, 2);
    let mut te = p.begin_nested(11);
    te.append_enum(9, 1);
    te.append_uint64(11, 0x9a3f_1c2b_7d4e_5f60);
    te.append_uint64(10, 42);
    te.append_uint64(3, 3);
    {
        let mut da = te.begin_nested(4);
        da.append_uint64(1, 7);
        da.append_int64(4, 1_234_567);
    }
    let mut da = te.begin_nested(4);
    da.append_uint64(1, 8);
    da.append_string(6, "https://example.org/");
}

/// The baseline: `packets` packets into one reused heap buffer; the bytes
/// written.
#[inline(never)]
fn run_heap(packets: u64) -> usize {
    let mut heap = protozero::HeapWriter::new();
    let mut bytes = 0;
    for i in 0..packets {
        heap.clear();
        slice_begin(&mut heap.root(), 1_718_000_123_456_789 + i);
        bytes += std::hint::black_box(&heap).written();
    }
    bytes
}

/// `packets` packets through `writer` into the shared memory buffer.
#[inline(never)]
fn run_write(writer: &mut zerotrace_core::producer::TraceWriter, packets: u64) {
    for i in 0..packets {
        writer.write_packet(|p| slice_begin(p, 1_718_000_123_456_789 + i));
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let packets: u64 = std::env::args().nth(1).map_or(Ok(100_000), |a| a.parse())?;
    if std::env::args().nth(2).as_deref() == Some("heap") {
        let bytes = run_heap(packets);
        println!("{packets} packets, {bytes} bytes into a reused heap buffer");
        return Ok(());
    }
    let region: Arc<dyn SharedMemoryRegion> = Arc::new(HeapShm::new(256 * 1024)?);
    // SAFETY: the service keeps `region` alive for as long as the view.
    let abi = unsafe { SharedMemoryAbi::new(region.as_ptr(), region.size(), 4096) }?;
    let service = Arc::new(FreeingService {
        abi,
        _region: region.clone(),
        counts: Mutex::new((0, 0)),
    });
    let arbiter =
        SharedMemoryArbiter::new(region, 4096, service.clone(), ArbiterConfig::default())?;
    let mut writer = arbiter.create_trace_writer(1, BufferExhaustedPolicy::StallThenAbort)?;
    run_write(&mut writer, packets);
    writer.flush(None);
    let (chunks, requests) = *service.counts.lock().unwrap_or_else(|e| e.into_inner());
    println!("{packets} packets in {chunks} chunks, {requests} commit requests");
    Ok(())
}

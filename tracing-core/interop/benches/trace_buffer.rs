//! The service trace buffer, ours against Perfetto's own `TraceBufferV1` and
//! `TraceBufferV2` (compiled from the amalgamation, see `build.rs`), in one
//! run, on one workload ([`Workload`]: 8 writers of 3 producers, 2,048 chunks
//! of 4 KiB pages, 8 MiB of payload; packets mostly 40–120 bytes, some up to
//! 1 KiB, a few of 8–20 KiB fragmented across chunks).
//!
//! Each variant takes the same chunk payloads, from the same addresses, in
//! the same commit order, then reads every readable packet back, copying its
//! bytes out into one reused output buffer (as the service's ReadBuffers
//! copies each packet into its reply). Cases:
//!
//! * `discard`: a fresh DISCARD buffer of 9 MiB each iteration, made and
//!   freed outside the timed region (all the data fits; nothing is
//!   overwritten). The process runs under `mlockall(MCL_FUTURE)`, so every
//!   buffer's memory arrives populated and no variant pays first-touch page
//!   faults while timed.
//! * `ring`: a RING_BUFFER buffer of 2 MiB, kept across iterations (steady
//!   state); every iteration writes all 8 MiB through it (four times its
//!   size, chunk ids continuing where the previous iteration stopped) and
//!   then reads out what survived.
//!
//! Variants: `zerotrace`, `perfetto_v1`, `perfetto_v2`, and `floor_memcpy`:
//! one bulk `memcpy` of all the payload into a buffer of the same size
//! (wrapping; fresh for `discard`, as the others) and one bulk `memcpy` of the surviving
//! bytes out. Groups `<case>` time ingest plus read-out, `<case>_ingest` the
//! ingest alone (the read-out runs untimed), `<case>_read` the read-out alone
//! (the ingest runs untimed). Throughput counts the chunk payload bytes
//! handed to the buffer, except in `_read` groups, where it counts the
//! packet bytes the variant read out.
//!
//! Run: `cargo bench -p zerotrace-interop --bench trace_buffer`, then
//! `python3 tracing-core/interop/benches/trace_buffer_ratios.py` for the GB/s
//! table and the ratios. On 64-bit Linux the clock is the thread's CPU time
//! (`BENCH_CLOCK=wall` for wall time).

#[path = "../../../protos/encode-bench/benches/support/clock.rs"]
mod clock;

use std::hint::black_box;
use std::time::Duration;

use clock::BenchClock;
use criterion::measurement::Measurement;
use criterion::{BenchmarkGroup, Criterion, Throughput, criterion_group, criterion_main};
use zerotrace_core::abi::ChunkFlags;
use zerotrace_core::service::__private::{ChunkMeta, FillPolicy, SequenceKey, TraceBuffer};
use zerotrace_interop::genuine::{BufferVersion, GenuineChunk, GenuinePolicy, GenuineTraceBuffer};
use zerotrace_interop::workload::{Workload, WorkloadConfig};

const MIB: usize = 1024 * 1024;
/// DISCARD buffer: the 8 MiB written fit, V1's 16-byte chunk headers too.
const DISCARD_SIZE: usize = 9 * MIB;
/// RING_BUFFER buffer: a quarter of what each iteration writes.
const RING_SIZE: usize = 2 * MIB;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Case {
    Discard,
    Ring,
}

impl Case {
    fn name(self) -> &'static str {
        match self {
            Case::Discard => "discard",
            Case::Ring => "ring",
        }
    }

    fn size(self) -> usize {
        match self {
            Case::Discard => DISCARD_SIZE,
            Case::Ring => RING_SIZE,
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Variant {
    Zerotrace,
    V1,
    V2,
    Floor,
}

const VARIANTS: [Variant; 4] = [Variant::Zerotrace, Variant::V1, Variant::V2, Variant::Floor];

impl Variant {
    fn name(self) -> &'static str {
        match self {
            Variant::Zerotrace => "zerotrace",
            Variant::V1 => "perfetto_v1",
            Variant::V2 => "perfetto_v2",
            Variant::Floor => "floor_memcpy",
        }
    }
}

/// The chunks in the forms each implementation takes, built once.
struct Feed {
    w: Workload,
    ours: Vec<ChunkMeta>,
    genuine: Vec<GenuineChunk>,
    /// Per chunk: how far its chunk id moves on per iteration (the number of
    /// chunks of its sequence), so a reused ring buffer sees each
    /// iteration's chunks as the continuation of the previous ones.
    stride: Vec<u32>,
}

impl Feed {
    fn new() -> Feed {
        let w = Workload::generate(WorkloadConfig::default());
        let ours = w
            .chunks
            .iter()
            .map(|c| ChunkMeta {
                sequence: SequenceKey {
                    producer: c.producer,
                    writer: c.writer,
                },
                chunk_id: c.chunk_id,
                num_fragments: c.num_fragments,
                flags: ChunkFlags::from_bits(c.flags),
                complete: true,
            })
            .collect();
        let genuine = w
            .chunks
            .iter()
            .map(|c| GenuineChunk {
                producer_id: c.producer,
                producer_uid: c.uid,
                writer_id: c.writer,
                chunk_id: c.chunk_id,
                num_fragments: c.num_fragments,
                flags: c.flags,
                complete: true,
            })
            .collect();
        let stride = w
            .chunks
            .iter()
            .map(|c| w.chunks_per_sequence[&(c.producer, c.writer)])
            .collect();
        Feed {
            w,
            ours,
            genuine,
            stride,
        }
    }
}

/// A buffer under test.
enum Buffer {
    Ours(Box<TraceBuffer>),
    Genuine(GenuineTraceBuffer),
    Floor(Vec<u8>),
}

impl Buffer {
    fn new(variant: Variant, case: Case) -> Buffer {
        let size = case.size();
        let genuine_policy = match case {
            Case::Discard => GenuinePolicy::Discard,
            Case::Ring => GenuinePolicy::RingBuffer,
        };
        match variant {
            Variant::Zerotrace => {
                let policy = match case {
                    Case::Discard => FillPolicy::Discard,
                    Case::Ring => FillPolicy::RingBuffer,
                };
                Buffer::Ours(Box::new(TraceBuffer::new(size, policy).expect("buffer")))
            }
            Variant::V1 => Buffer::Genuine(
                GenuineTraceBuffer::new(BufferVersion::V1, size, genuine_policy).expect("V1"),
            ),
            Variant::V2 => Buffer::Genuine(
                GenuineTraceBuffer::new(BufferVersion::V2, size, genuine_policy).expect("V2"),
            ),
            Variant::Floor => Buffer::Floor(vec![0; size]),
        }
    }

    /// Hands every chunk in; `epoch` moves the chunk ids on.
    fn ingest(&mut self, feed: &Feed, epoch: u32) {
        let bytes = &feed.w.bytes;
        match self {
            Buffer::Ours(b) => {
                for ((meta, c), stride) in feed.ours.iter().zip(&feed.w.chunks).zip(&feed.stride) {
                    let meta = ChunkMeta {
                        chunk_id: meta.chunk_id.wrapping_add(epoch.wrapping_mul(*stride)),
                        ..*meta
                    };
                    b.copy_chunk(&meta, &bytes[c.range.clone()]);
                }
            }
            Buffer::Genuine(b) => {
                for ((g, c), stride) in feed.genuine.iter().zip(&feed.w.chunks).zip(&feed.stride) {
                    let g = GenuineChunk {
                        chunk_id: g.chunk_id.wrapping_add(epoch.wrapping_mul(*stride)),
                        ..*g
                    };
                    b.copy_chunk(&g, &bytes[c.range.clone()]);
                }
            }
            Buffer::Floor(dst) => {
                // Wrapping bulk copies: the last `size` bytes survive.
                let mut src: &[u8] = bytes;
                let mut pos = 0;
                while !src.is_empty() {
                    let n = src.len().min(dst.len() - pos);
                    dst[pos..pos + n].copy_from_slice(&src[..n]);
                    src = &src[n..];
                    pos = (pos + n) % dst.len();
                }
            }
        }
    }

    /// Reads every readable packet into `out` (cleared first); returns the
    /// packet count.
    fn read(&mut self, feed: &Feed, out: &mut Vec<u8>) -> usize {
        out.clear();
        let mut n = 0;
        match self {
            Buffer::Ours(b) => {
                b.begin_read();
                while b.read_next_packet(out).is_some() {
                    n += 1;
                }
            }
            Buffer::Genuine(b) => {
                b.begin_read();
                while b.read_next_packet(out).is_some() {
                    n += 1;
                }
            }
            Buffer::Floor(src) => {
                let survived = feed.w.bytes.len().min(src.len());
                out.extend_from_slice(&src[..survived]);
                n = 1;
            }
        }
        n
    }
}

/// What one timed iteration covers.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Timed {
    IngestRead,
    Ingest,
    Read,
}

fn bench_case(c: &mut Criterion<BenchClock>, feed: &Feed, case: Case, timed: Timed) {
    let clock = BenchClock::from_env();
    let group_name = match timed {
        Timed::IngestRead => case.name().to_string(),
        Timed::Ingest => format!("{}_ingest", case.name()),
        Timed::Read => format!("{}_read", case.name()),
    };
    let mut g: BenchmarkGroup<'_, BenchClock> = c.benchmark_group(group_name);
    let mut out = Vec::with_capacity(feed.w.bytes.len() + 1024 * 1024);
    for variant in VARIANTS {
        let read_bytes = {
            let mut b = Buffer::new(variant, case);
            b.ingest(feed, 0);
            b.read(feed, &mut out);
            out.len()
        };
        g.throughput(Throughput::Bytes(if timed == Timed::Read {
            read_bytes as u64
        } else {
            feed.w.bytes.len() as u64
        }));
        // The ring buffer lives across iterations; epoch 0 was used above.
        let mut ring = (case == Case::Ring).then(|| {
            let mut b = Buffer::new(variant, case);
            b.ingest(feed, 0);
            b.read(feed, &mut out);
            b
        });
        let mut epoch = 0u32;
        g.bench_function(variant.name(), |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    // Only a reused (ring) buffer needs chunk ids to go on.
                    let epoch = if ring.is_some() {
                        epoch = epoch.wrapping_add(1);
                        epoch
                    } else {
                        0
                    };
                    // A fresh buffer is made (and later freed) untimed.
                    let mut fresh = None;
                    let buf = match ring.as_mut() {
                        Some(r) => r,
                        None => fresh.insert(Buffer::new(variant, case)),
                    };
                    match timed {
                        Timed::IngestRead => {
                            let t = clock.start();
                            buf.ingest(feed, epoch);
                            black_box(buf.read(feed, &mut out));
                            total += clock.end(t);
                        }
                        Timed::Ingest => {
                            let t = clock.start();
                            buf.ingest(feed, epoch);
                            total += clock.end(t);
                            black_box(buf.read(feed, &mut out));
                        }
                        Timed::Read => {
                            buf.ingest(feed, epoch);
                            let t = clock.start();
                            black_box(buf.read(feed, &mut out));
                            total += clock.end(t);
                        }
                    }
                }
                total
            })
        });
    }
    g.finish();
}

fn trace_buffer(c: &mut Criterion<BenchClock>) {
    prefault_all_memory();
    let feed = Feed::new();
    eprintln!(
        "workload: {} chunks, {} payload bytes, {} packets ({} bytes)",
        feed.w.chunks.len(),
        feed.w.bytes.len(),
        feed.w.packet_count(),
        feed.w.packet_bytes()
    );
    for case in [Case::Discard, Case::Ring] {
        for timed in [Timed::IngestRead, Timed::Ingest, Timed::Read] {
            bench_case(c, &feed, case, timed);
        }
    }
}

/// Makes every later allocation of the process arrive populated
/// (`mlockall(MCL_CURRENT | MCL_FUTURE)`), Perfetto's `mmap`ed buffers and
/// our heap ones alike, so no variant takes first-touch page faults inside
/// the timed region. On this project's VMs a first touch costs about 2 µs
/// per 4 KiB page, which would otherwise dominate a fresh DISCARD buffer and
/// say more about the hypervisor than about the buffers.
fn prefault_all_memory() {
    #[cfg(target_os = "linux")]
    {
        const MCL_CURRENT: i32 = 1;
        const MCL_FUTURE: i32 = 2;
        unsafe extern "C" {
            fn mlockall(flags: i32) -> i32;
        }
        // SAFETY: mlockall takes flags only and changes no memory contents.
        if unsafe { mlockall(MCL_CURRENT | MCL_FUTURE) } != 0 {
            eprintln!(
                "mlockall failed ({}): fresh buffers take page faults inside the timed region",
                std::io::Error::last_os_error()
            );
        }
    }
}

fn config() -> Criterion<BenchClock> {
    let clock = BenchClock::from_env();
    eprintln!(
        "measuring {} (BENCH_CLOCK=wall for wall time)",
        clock.name()
    );
    Criterion::default()
        .with_measurement(clock)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .sample_size(50)
}

criterion_group! {
    name = benches;
    config = config();
    targets = trace_buffer
}
criterion_main!(benches);

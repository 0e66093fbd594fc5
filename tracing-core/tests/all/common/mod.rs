//! Test support: a reference reader that plays the service's role — copies
//! committed chunks out of the SMB, applies patches, and reassembles packets per
//! writer from fragments and continuation flags — and sinks that feed it.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use zerotrace_core::abi::{ChunkFlags, ChunkHeader, FragmentError, FragmentIter, SharedMemoryAbi};
use zerotrace_core::producer::{CommitSink, FlushCallback};
use zerotrace_core::protocol::CommitDataRequest;
use zerotrace_core::shm::SharedMemoryRegion;

/// A chunk copied out of the SMB.
#[derive(Debug, Clone)]
pub struct StoredChunk {
    pub header: ChunkHeader,
    pub payload: Vec<u8>,
    /// Patches applied so far.
    pub patched: usize,
}

/// What reassembly produced for one writer.
#[derive(Debug, Default, Clone)]
pub struct WriterPackets {
    /// Whole packets in order (empty fragments skipped).
    pub packets: Vec<Vec<u8>>,
    /// Fragments carrying the abandoned-packet sentinel.
    pub abandoned: usize,
    /// Packets whose head or tail was missing (gap or unterminated).
    pub incomplete: usize,
}

/// Everything a reader saw.
#[derive(Debug, Default)]
pub struct ReferenceReader {
    pub chunks: BTreeMap<(u16, u32), StoredChunk>,
    /// Errors that must never happen with a correct producer.
    pub errors: Vec<String>,
    pub commits: usize,
}

impl ReferenceReader {
    /// Copies every chunk listed in `req` out of the SMB (acquire for reading,
    /// copy, release as free), then applies the patches, as the service does.
    pub fn process_commit(&mut self, abi: &SharedMemoryAbi, req: &CommitDataRequest) {
        self.commits += 1;
        self.read_moves(abi, req, &(0..req.chunks_to_move.len()).collect::<Vec<_>>());
        self.apply_patches(req);
    }

    /// Reads the moves of `req` in the given order.
    pub fn read_moves(&mut self, abi: &SharedMemoryAbi, req: &CommitDataRequest, order: &[usize]) {
        for &i in order {
            let m = &req.chunks_to_move[i];
            match abi.try_acquire_chunk_for_reading(m.page as usize, m.chunk as usize) {
                Ok(chunk) => {
                    let header = chunk.header();
                    let mut payload = Vec::new();
                    chunk.copy_payload(&mut payload);
                    if let Err(e) = abi.release_chunk_as_free(chunk) {
                        self.errors.push(format!("release: {e}"));
                    }
                    let key = (header.writer_id, header.chunk_id);
                    if self
                        .chunks
                        .insert(
                            key,
                            StoredChunk {
                                header,
                                payload,
                                patched: 0,
                            },
                        )
                        .is_some()
                    {
                        self.errors.push(format!("chunk {key:?} committed twice"));
                    }
                }
                Err(e) => self
                    .errors
                    .push(format!("acquire for reading {}/{}: {e}", m.page, m.chunk)),
            }
        }
    }

    /// Applies patches keyed by (writer, chunk id, payload offset).
    pub fn apply_patches(&mut self, req: &CommitDataRequest) {
        for p in &req.chunks_to_patch {
            let key = (p.writer_id as u16, p.chunk_id);
            let Some(c) = self.chunks.get_mut(&key) else {
                self.errors.push(format!("patch for unknown chunk {key:?}"));
                continue;
            };
            for d in &p.patches {
                let off = d.offset as usize;
                if off + 4 > c.payload.len() {
                    self.errors.push(format!("patch offset {off} out of range"));
                    continue;
                }
                c.payload[off..off + 4].copy_from_slice(&d.data);
                c.patched += 1;
            }
            if !p.has_more_patches {
                c.header.packets.flags = c
                    .header
                    .packets
                    .flags
                    .without(ChunkFlags::CHUNK_NEEDS_PATCHING);
            }
        }
    }

    /// Reassembles the packets of every writer from the stored chunks.
    pub fn reassemble(&self) -> (BTreeMap<u16, WriterPackets>, Vec<String>) {
        let mut out: BTreeMap<u16, WriterPackets> = BTreeMap::new();
        let mut errors = self.errors.clone();
        let mut partial: BTreeMap<u16, (u32, Vec<u8>)> = BTreeMap::new();
        let mut last_id: BTreeMap<u16, u32> = BTreeMap::new();
        for (&(writer, chunk_id), c) in &self.chunks {
            let w = out.entry(writer).or_default();
            let flags = c.header.packets.flags;
            if flags.contains(ChunkFlags::CHUNK_NEEDS_PATCHING) {
                errors.push(format!("chunk {writer}/{chunk_id} still needs patching"));
            }
            if let Some(prev) = last_id.insert(writer, chunk_id) {
                if prev.wrapping_add(1) != chunk_id {
                    errors.push(format!(
                        "writer {writer}: chunk id gap {prev} -> {chunk_id}"
                    ));
                }
            }
            let count = c.header.packets.count;
            let mut carried = partial.remove(&writer);
            if carried
                .as_ref()
                .is_some_and(|(id, _)| id.wrapping_add(1) != chunk_id)
            {
                carried = None;
                w.incomplete += 1;
            }
            for frag in FragmentIter::new(&c.payload, count) {
                let f = match frag {
                    Ok(f) => f,
                    Err(FragmentError::DroppedPacket { .. }) => {
                        w.abandoned += 1;
                        carried = None;
                        break;
                    }
                    Err(e) => {
                        errors.push(format!("writer {writer} chunk {chunk_id}: {e}"));
                        break;
                    }
                };
                let is_first = f.index == 0;
                let is_last = f.index + 1 == count;
                let mut data = if is_first
                    && flags.contains(ChunkFlags::FIRST_PACKET_CONTINUES_FROM_PREV_CHUNK)
                {
                    match carried.take() {
                        Some((_, mut head)) => {
                            head.extend_from_slice(f.data);
                            head
                        }
                        None => {
                            // Head lost (earlier chunk missing or abandoned).
                            w.incomplete += 1;
                            continue;
                        }
                    }
                } else {
                    if carried.take().is_some() {
                        errors.push(format!(
                            "writer {writer} chunk {chunk_id}: continuation flag missing"
                        ));
                    }
                    f.data.to_vec()
                };
                if is_last && flags.contains(ChunkFlags::LAST_PACKET_CONTINUES_ON_NEXT_CHUNK) {
                    carried = Some((chunk_id, std::mem::take(&mut data)));
                    continue;
                }
                if !data.is_empty() {
                    w.packets.push(data);
                }
            }
            if let Some(c) = carried {
                partial.insert(writer, c);
            }
        }
        for (writer, _) in partial {
            out.entry(writer).or_default().incomplete += 1;
        }
        (out, errors)
    }
}

/// A sink that services every commit synchronously from the SMB, like an
/// in-process service; it can shuffle the order in which moves are read.
pub struct InProcessService {
    abi: SharedMemoryAbi,
    _region: Arc<dyn SharedMemoryRegion>,
    pub reader: Mutex<ReferenceReader>,
    pub requests: Mutex<Vec<CommitDataRequest>>,
    shuffle_seed: Mutex<u64>,
}

impl InProcessService {
    pub fn new(
        region: Arc<dyn SharedMemoryRegion>,
        page_size: usize,
        shuffle_seed: u64,
    ) -> Arc<InProcessService> {
        // SAFETY: `_region` keeps the memory mapped for the life of the view.
        let abi =
            unsafe { SharedMemoryAbi::new(region.as_ptr(), region.size(), page_size) }.unwrap();
        Arc::new(InProcessService {
            abi,
            _region: region,
            reader: Mutex::new(ReferenceReader::default()),
            requests: Mutex::new(Vec::new()),
            shuffle_seed: Mutex::new(shuffle_seed),
        })
    }
}

impl CommitSink for InProcessService {
    fn commit_data(&self, request: &mut CommitDataRequest, on_complete: Option<FlushCallback>) {
        let request = std::mem::take(request);
        // The request must survive its wire encoding.
        let decoded = CommitDataRequest::decode(&request.encode()).unwrap();
        assert_eq!(decoded, request);
        let mut order: Vec<usize> = (0..request.chunks_to_move.len()).collect();
        {
            let mut s = self.shuffle_seed.lock().unwrap();
            if *s != 0 {
                for i in (1..order.len()).rev() {
                    *s ^= *s << 13;
                    *s ^= *s >> 7;
                    *s ^= *s << 17;
                    order.swap(i, (*s % (i as u64 + 1)) as usize);
                }
            }
        }
        {
            let mut r = self.reader.lock().unwrap();
            r.commits += 1;
            r.read_moves(&self.abi, &request, &order);
            r.apply_patches(&request);
        }
        self.requests.lock().unwrap().push(request);
        if let Some(cb) = on_complete {
            cb();
        }
    }
}

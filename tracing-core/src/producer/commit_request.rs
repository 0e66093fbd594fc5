//! [`CommitDataRequest`]: what a producer tells the service after filling
//! chunks — which chunks to move out of the SMB and which earlier chunks need
//! length patches — and its protobuf encoding
//! (`perfetto.protos.CommitDataRequest`, perfetto-abi.md §5.4).
//!
//! Encoding goes through the generated `zerotrace-protos` writers. Decoding
//! walks the fields with `protozero::Decoder` (field numbers named below) so
//! that malformed input becomes a typed error; it never panics.

use protozero::{DecodeError, Decoder, HeapWriter, Message};
use zerotrace_protos::protos::CommitDataRequest as RequestWriter;

/// `CommitDataRequest` field numbers.
mod field {
    pub const CHUNKS_TO_MOVE: u32 = 1;
    pub const CHUNKS_TO_PATCH: u32 = 2;
    pub const FLUSH_REQUEST_ID: u32 = 3;
    /// `CommitDataRequest.ChunksToMove`.
    pub mod mv {
        pub const PAGE: u32 = 1;
        pub const CHUNK: u32 = 2;
        pub const TARGET_BUFFER: u32 = 3;
        pub const DATA: u32 = 4;
        pub const CHUNK_INCOMPLETE: u32 = 5;
    }
    /// `CommitDataRequest.ChunkToPatch`.
    pub mod patch {
        pub const TARGET_BUFFER: u32 = 1;
        pub const WRITER_ID: u32 = 2;
        pub const CHUNK_ID: u32 = 3;
        pub const PATCHES: u32 = 4;
        pub const HAS_MORE_PATCHES: u32 = 5;
        /// `ChunkToPatch.Patch`.
        pub const OFFSET: u32 = 1;
        pub const DATA: u32 = 2;
    }
}

/// A chunk the service should copy out of the SMB (or, with `data`, a chunk
/// shipped inline when shared memory is emulated).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChunkToMove {
    /// Page index in the SMB.
    pub page: u32,
    /// Chunk index within the page.
    pub chunk: u32,
    /// Service buffer the chunk goes to.
    pub target_buffer: u32,
    /// Whole chunk bytes (emulation mode only).
    pub data: Option<Vec<u8>>,
    /// The chunk was scraped while still being written (emulation only).
    pub chunk_incomplete: bool,
}

/// One 4-byte backfill.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PatchData {
    /// Offset from the start of the chunk payload.
    pub offset: u32,
    /// The bytes to write there.
    pub data: [u8; 4],
}

/// Patches for one chunk of one writer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChunkToPatch {
    /// Service buffer holding the chunk.
    pub target_buffer: u32,
    /// Writer that owns the chunk.
    pub writer_id: u32,
    /// The chunk.
    pub chunk_id: u32,
    /// The backfills, in order.
    pub patches: Vec<PatchData>,
    /// More patches for this chunk will follow in a later request.
    pub has_more_patches: bool,
}

/// A batch of moves and patches sent with one `CommitData` call.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CommitDataRequest {
    /// Chunks to move, in the order they were completed.
    pub chunks_to_move: Vec<ChunkToMove>,
    /// Chunks to patch (applied after the moves).
    pub chunks_to_patch: Vec<ChunkToPatch>,
    /// Acknowledges a service flush request.
    pub flush_request_id: Option<u64>,
}

/// Why a `CommitDataRequest` could not be decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum CommitDecodeError {
    /// The protobuf was malformed.
    #[error(transparent)]
    Decode(#[from] DecodeError),
    /// A patch's data was not exactly 4 bytes.
    #[error("patch data must be 4 bytes, got {len}")]
    PatchSize {
        /// Length found.
        len: usize,
    },
}

impl CommitDataRequest {
    /// Whether the request carries nothing.
    pub fn is_empty(&self) -> bool {
        self.chunks_to_move.is_empty()
            && self.chunks_to_patch.is_empty()
            && self.flush_request_id.is_none()
    }

    /// Appends the fields of the request to `msg` (a root, or a nested message
    /// opened for a field of type `CommitDataRequest`).
    pub fn write_to(&self, msg: Message<'_>) {
        let mut w = RequestWriter::from_message(msg);
        for m in &self.chunks_to_move {
            let mut c = w.add_chunks_to_move();
            c.set_page(m.page)
                .set_chunk(m.chunk)
                .set_target_buffer(m.target_buffer);
            if let Some(d) = &m.data {
                c.set_data(d);
            }
            if m.chunk_incomplete {
                c.set_chunk_incomplete(true);
            }
        }
        for p in &self.chunks_to_patch {
            let mut c = w.add_chunks_to_patch();
            c.set_target_buffer(p.target_buffer)
                .set_writer_id(p.writer_id)
                .set_chunk_id(p.chunk_id);
            for d in &p.patches {
                c.add_patches().set_offset(d.offset).set_data(&d.data);
            }
            if p.has_more_patches {
                c.set_has_more_patches(true);
            }
        }
        if let Some(id) = self.flush_request_id {
            w.set_flush_request_id(id);
        }
    }

    /// The serialized request.
    pub fn encode(&self) -> Vec<u8> {
        let mut w = HeapWriter::new();
        self.write_to(w.root());
        w.to_vec()
    }

    /// Parses a serialized request; unknown fields are skipped.
    pub fn decode(bytes: &[u8]) -> Result<CommitDataRequest, CommitDecodeError> {
        let mut req = CommitDataRequest::default();
        let mut d = Decoder::new(bytes);
        while let Some(f) = d.read_field() {
            let f = f?;
            match f.id {
                field::CHUNKS_TO_MOVE => req.chunks_to_move.push(decode_move(f.as_bytes()?)?),
                field::CHUNKS_TO_PATCH => req.chunks_to_patch.push(decode_patch(f.as_bytes()?)?),
                field::FLUSH_REQUEST_ID => req.flush_request_id = Some(f.as_u64()?),
                _ => {}
            }
        }
        Ok(req)
    }
}

fn decode_move(bytes: &[u8]) -> Result<ChunkToMove, CommitDecodeError> {
    let mut m = ChunkToMove::default();
    let mut d = Decoder::new(bytes);
    while let Some(f) = d.read_field() {
        let f = f?;
        match f.id {
            field::mv::PAGE => m.page = f.as_u32()?,
            field::mv::CHUNK => m.chunk = f.as_u32()?,
            field::mv::TARGET_BUFFER => m.target_buffer = f.as_u32()?,
            field::mv::DATA => m.data = Some(f.as_bytes()?.to_vec()),
            field::mv::CHUNK_INCOMPLETE => m.chunk_incomplete = f.as_bool()?,
            _ => {}
        }
    }
    Ok(m)
}

fn decode_patch(bytes: &[u8]) -> Result<ChunkToPatch, CommitDecodeError> {
    let mut p = ChunkToPatch::default();
    let mut d = Decoder::new(bytes);
    while let Some(f) = d.read_field() {
        let f = f?;
        match f.id {
            field::patch::TARGET_BUFFER => p.target_buffer = f.as_u32()?,
            field::patch::WRITER_ID => p.writer_id = f.as_u32()?,
            field::patch::CHUNK_ID => p.chunk_id = f.as_u32()?,
            field::patch::HAS_MORE_PATCHES => p.has_more_patches = f.as_bool()?,
            field::patch::PATCHES => {
                let mut e = PatchData::default();
                let mut pd = Decoder::new(f.as_bytes()?);
                while let Some(g) = pd.read_field() {
                    let g = g?;
                    match g.id {
                        field::patch::OFFSET => e.offset = g.as_u32()?,
                        field::patch::DATA => {
                            let b = g.as_bytes()?;
                            e.data = b
                                .try_into()
                                .map_err(|_| CommitDecodeError::PatchSize { len: b.len() })?;
                        }
                        _ => {}
                    }
                }
                p.patches.push(e);
            }
            _ => {}
        }
    }
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_encoding_and_round_trip() {
        let req = CommitDataRequest {
            chunks_to_move: vec![ChunkToMove {
                page: 2,
                chunk: 0,
                target_buffer: 1,
                ..Default::default()
            }],
            chunks_to_patch: vec![ChunkToPatch {
                target_buffer: 1,
                writer_id: 7,
                chunk_id: 300,
                patches: vec![PatchData {
                    offset: 12,
                    data: [0x85, 0x80, 0x80, 0x00],
                }],
                has_more_patches: true,
            }],
            flush_request_id: Some(9),
        };
        let bytes = req.encode();
        // chunks_to_move {page: 2, chunk: 0, target_buffer: 1} with a compacted length.
        assert_eq!(
            &bytes[..8],
            &[0x0A, 0x06, 0x08, 0x02, 0x10, 0x00, 0x18, 0x01]
        );
        // flush_request_id: 9 at the end.
        assert_eq!(&bytes[bytes.len() - 2..], &[0x18, 0x09]);
        assert_eq!(CommitDataRequest::decode(&bytes), Ok(req));
        assert!(CommitDataRequest::default().is_empty());
    }

    #[test]
    fn rejects_bad_input() {
        assert!(CommitDataRequest::decode(&[0x0A, 0x05, 0x08]).is_err());
        // A patch with 3 data bytes.
        let bad = [0x12, 0x07, 0x22, 0x05, 0x12, 0x03, 1, 2, 3];
        assert_eq!(
            CommitDataRequest::decode(&bad),
            Err(CommitDecodeError::PatchSize { len: 3 })
        );
    }
}

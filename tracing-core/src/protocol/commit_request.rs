//! [`CommitDataRequest`]: what a producer tells the service after filling
//! chunks — which chunks to move out of the SMB and which earlier chunks need
//! length patches — and its protobuf encoding
//! (`perfetto.protos.CommitDataRequest`, upstream
//! `protos/perfetto/common/commit_data_request.proto`).
//!
//! Encoding and decoding both go through the code generated from that schema
//! in `zerotrace-protos`; a malformed message at any level becomes a typed
//! error, never a panic.

use protozero::{DecodeError, HeapWriter, Message};
use zerotrace_protos::protos::{
    CommitDataRequest as RequestWriter, CommitDataRequestDecoder as RequestDecoder,
};

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
    /// Empties the request but keeps its vectors' capacity, so a batch
    /// reuses the storage of the one before.
    pub fn clear(&mut self) {
        self.chunks_to_move.clear();
        self.chunks_to_patch.clear();
        self.flush_request_id = None;
    }

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
        let d = RequestDecoder::new(bytes);
        check(d.decode_error())?;
        let mut req = CommitDataRequest {
            flush_request_id: d.flush_request_id(),
            ..CommitDataRequest::default()
        };
        let mut moves = d.chunks_to_move();
        for m in &mut moves {
            check(m.decode_error())?;
            req.chunks_to_move.push(ChunkToMove {
                page: m.page().unwrap_or(0),
                chunk: m.chunk().unwrap_or(0),
                target_buffer: m.target_buffer().unwrap_or(0),
                data: m.data().map(<[u8]>::to_vec),
                chunk_incomplete: m.chunk_incomplete().unwrap_or(false),
            });
        }
        check(moves.error())?;
        let mut patches = d.chunks_to_patch();
        for p in &mut patches {
            check(p.decode_error())?;
            let mut group = ChunkToPatch {
                target_buffer: p.target_buffer().unwrap_or(0),
                writer_id: p.writer_id().unwrap_or(0),
                chunk_id: p.chunk_id().unwrap_or(0),
                patches: Vec::new(),
                has_more_patches: p.has_more_patches().unwrap_or(false),
            };
            let mut items = p.patches();
            for e in &mut items {
                check(e.decode_error())?;
                let data = e.data().unwrap_or(&[]);
                group.patches.push(PatchData {
                    offset: e.offset().unwrap_or(0),
                    data: data
                        .try_into()
                        .map_err(|_| CommitDecodeError::PatchSize { len: data.len() })?,
                });
            }
            check(items.error())?;
            req.chunks_to_patch.push(group);
        }
        check(patches.error())?;
        Ok(req)
    }
}

/// A decode error reported by a generated decoder, as a typed error.
fn check(error: Option<DecodeError>) -> Result<(), CommitDecodeError> {
    error.map_or(Ok(()), |e| Err(CommitDecodeError::Decode(e)))
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

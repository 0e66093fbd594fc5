//! A query's rows as Perfetto's RPC sends them: `QueryResult` messages of
//! one `CellsBatch` each, the first also carrying the column names and the
//! statement counts, the last marked `is_last_batch`.
//!
//! Batches are cut as upstream's serializer cuts them: only between rows,
//! before a row that would take the batch past [`CELLS_PER_BATCH`] cells or
//! once the batch's estimated size has passed [`BATCH_SPLIT_THRESHOLD`]
//! bytes. A batch is laid out as upstream lays it out: the NUL-terminated
//! strings first (one field, always present), then the cell types, the
//! packed varints, the doubles (after a filler field that puts their
//! payload on an 8-byte boundary of the message sent, so that JavaScript
//! can view them in place), the blobs, and the end marker.
//!
//! The rows come from SQLite as it steps (`sql/streaming.rs`); only the
//! last statement's rows are sent, as upstream sends them, and its
//! messages go out as they are made. An earlier statement's rows are
//! stepped through and dropped, never encoded nor held (upstream steps
//! them to completion too): `SELECT` of millions of rows followed by
//! `; SELECT 1` holds no more than one batch at any time.

use protozero::HeapWriter;
use zerotrace_protos::protos::trace_processor_rpc::TraceProcessorMethod;
use zerotrace_protos::protos::{QueryResult, TraceProcessorRpcStream};

use crate::sql::streaming::{Cell, RowSink};

/// The most cells a batch holds (upstream's default).
pub const CELLS_PER_BATCH: usize = 50_000;
/// The estimated size past which a batch ends at the next row (upstream's
/// default, 128 KiB).
pub const BATCH_SPLIT_THRESHOLD: usize = 128 * 1024;
/// The size a message may not reach: a nested length is at most four
/// 7-bit groups.
pub const MAX_MESSAGE_BYTES: usize = 1 << 28;

/// The estimate a batch starts with (upstream's).
const BATCH_BASE_ESTIMATE: usize = 16;
/// `CellsBatch` field numbers written raw.
const CELLS_FIELD: u32 = 1;
const VARINT_CELLS_FIELD: u32 = 2;
const FLOAT64_CELLS_TAG: u8 = (3 << 3) | 2;
const BLOB_CELLS_TAG: u8 = (4 << 3) | 2;
const STRING_CELLS_FIELD: u32 = 5;
const PADDING_TAG: u8 = 7 << 3;

/// A `CellsBatch.CellType`, as its byte in `cells`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum CellType {
    /// `CELL_NULL`.
    Null = 1,
    /// `CELL_VARINT`.
    Varint = 2,
    /// `CELL_FLOAT64`.
    Float64 = 3,
    /// `CELL_STRING`.
    String = 4,
    /// `CELL_BLOB`.
    Blob = 5,
}

/// How each message of a result is wrapped for its transport.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// A bare `QueryResult` (the `/query` endpoint: one HTTP chunk each).
    Query,
    /// A `TraceProcessorRpcStream` entry: a `TraceProcessorRpc` with its
    /// `seq`, answering `TPM_QUERY_STREAMING` (`/rpc` and `/websocket`).
    Rpc,
}

/// Where a batch is cut; upstream's defaults unless a test wants smaller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchLimits {
    /// The most cells in a batch.
    pub cells_per_batch: usize,
    /// The estimated size past which a batch ends at the next row.
    pub split_threshold: usize,
}

impl Default for BatchLimits {
    fn default() -> Self {
        BatchLimits {
            cells_per_batch: CELLS_PER_BATCH,
            split_threshold: BATCH_SPLIT_THRESHOLD,
        }
    }
}

/// Encodes a query's rows into the messages that answer it.
pub(crate) struct ResultEncoder<'o> {
    /// Where finished messages go.
    out: &'o mut dyn FnMut(&[u8]),
    /// The current statement is the last: its messages go out as made.
    streaming: bool,
    /// Some message went out already.
    streamed: bool,
    /// The most bytes held at once (finished messages not yet sent and
    /// the batch being filled).
    peak_held: usize,
    framing: Framing,
    limits: BatchLimits,
    first_seq: i64,
    next_seq: i64,
    /// Finished messages, each framed.
    frames: Vec<Vec<u8>>,
    columns: Vec<String>,
    last_sql: String,
    statements: u32,
    with_output: u32,
    current_has_row: bool,
    /// The current statement is handing over rows (it has not ended).
    mid_rows: bool,
    wrote_metadata: bool,
    // The batch being filled.
    types: Vec<u8>,
    varints: Vec<u8>,
    doubles: Vec<u8>,
    strings: Vec<u8>,
    blobs: Vec<u8>,
    estimate: usize,
    writer: HeapWriter,
}

impl std::fmt::Debug for ResultEncoder<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResultEncoder")
            .field("framing", &self.framing)
            .field("next_seq", &self.next_seq)
            .finish_non_exhaustive()
    }
}

impl<'o> ResultEncoder<'o> {
    /// An encoder whose first message (for [`Framing::Rpc`]) gets `seq`,
    /// handing each finished message to `out`.
    pub(crate) fn new(
        framing: Framing,
        limits: BatchLimits,
        seq: i64,
        out: &'o mut dyn FnMut(&[u8]),
    ) -> Self {
        ResultEncoder {
            out,
            streaming: false,
            streamed: false,
            peak_held: 0,
            framing,
            limits,
            first_seq: seq,
            next_seq: seq,
            frames: Vec::new(),
            columns: Vec::new(),
            last_sql: String::new(),
            statements: 0,
            with_output: 0,
            current_has_row: false,
            mid_rows: false,
            wrote_metadata: false,
            types: Vec::new(),
            varints: Vec::new(),
            doubles: Vec::new(),
            strings: Vec::new(),
            blobs: Vec::new(),
            estimate: BATCH_BASE_ESTIMATE,
            writer: HeapWriter::new(),
        }
    }

    /// Ends the result: the last batch, with `error` when the query failed
    /// (when `rows_kept` is false, what was encoded and not yet sent is
    /// dropped first: the answer is the error alone). Sends what waited;
    /// returns the next `seq`.
    pub(crate) fn finish(mut self, error: Option<&str>, rows_kept: bool) -> i64 {
        if !rows_kept && !self.streamed {
            self.discard();
            self.columns.clear();
        }
        self.flush(true, error);
        for f in std::mem::take(&mut self.frames) {
            (self.out)(&f);
        }
        self.next_seq
    }

    /// Whether a statement failed while handing over its rows (not before
    /// the first): what it sent before stays part of the answer.
    pub(crate) fn has_rows(&self) -> bool {
        self.mid_rows && self.streaming
    }

    /// The most bytes the encoder held at once so far.
    pub(crate) fn peak_held(&self) -> usize {
        self.peak_held
    }

    /// Notes what is held now.
    fn note_held(&mut self) {
        let held = self.frames.iter().map(Vec::len).sum::<usize>()
            + self.types.len()
            + self.varints.len()
            + self.doubles.len()
            + self.strings.len()
            + self.blobs.len();
        self.peak_held = self.peak_held.max(held);
    }

    /// Drops every message and the batch being filled.
    fn discard(&mut self) {
        self.frames.clear();
        self.next_seq = self.first_seq;
        self.wrote_metadata = false;
        self.clear_batch();
    }

    fn clear_batch(&mut self) {
        self.types.clear();
        self.varints.clear();
        self.doubles.clear();
        self.strings.clear();
        self.blobs.clear();
        self.estimate = BATCH_BASE_ESTIMATE;
    }

    /// Encodes the batch being filled as the next message.
    fn flush(&mut self, last: bool, error: Option<&str>) {
        let mut writer = std::mem::take(&mut self.writer);
        writer.clear();
        let seq = self.next_seq;
        match self.framing {
            Framing::Query => {
                let mut r = QueryResult::from_message(writer.root());
                write_result(&mut r, &mut self.parts(), last, error);
            }
            Framing::Rpc => {
                let mut s = TraceProcessorRpcStream::from_message(writer.root());
                let mut m = s.add_msg();
                m.set_seq(seq)
                    .set_response(TraceProcessorMethod::TpmQueryStreaming);
                let mut r = m.begin_query_result();
                write_result(&mut r, &mut self.parts(), last, error);
            }
        }
        let frame = match writer.error() {
            None if writer.written() < MAX_MESSAGE_BYTES => writer.to_vec(),
            _ => self.too_big_frame(seq, writer.written()),
        };
        self.writer = writer;
        self.wrote_metadata = true;
        if self.streaming {
            self.streamed = true;
            (self.out)(&frame);
        } else {
            self.frames.push(frame);
            self.note_held();
        }
        self.next_seq = seq.saturating_add(1);
        self.clear_batch();
    }

    /// What replaces a message that grew too big to frame: an empty last
    /// batch and an error saying so (upstream's answer).
    fn too_big_frame(&self, seq: i64, size: usize) -> Vec<u8> {
        let msg = format!(
            "The query ended up with a response that is too big ({size} bytes). This usually \
             happens when a single row is >= 256 MiB. Consider writing large values to a file \
             instead."
        );
        let mut w = HeapWriter::new();
        {
            let write = |r: &mut QueryResult<'_>| {
                r.add_batch().set_is_last_batch(true);
                r.set_error(&msg);
            };
            match self.framing {
                Framing::Query => write(&mut QueryResult::from_message(w.root())),
                Framing::Rpc => {
                    let mut s = TraceProcessorRpcStream::from_message(w.root());
                    let mut m = s.add_msg();
                    m.set_seq(seq)
                        .set_response(TraceProcessorMethod::TpmQueryStreaming);
                    write(&mut m.begin_query_result());
                }
            }
        }
        w.to_vec()
    }

    fn parts(&self) -> Parts<'_> {
        Parts {
            metadata: (!self.wrote_metadata).then_some(Metadata {
                columns: &self.columns,
                statements: self.statements,
                with_output: self.with_output,
                last_sql: &self.last_sql,
            }),
            types: &self.types,
            varints: &self.varints,
            doubles: &self.doubles,
            strings: &self.strings,
            blobs: &self.blobs,
        }
    }
}

/// What the first message says of the query.
struct Metadata<'a> {
    columns: &'a [String],
    statements: u32,
    with_output: u32,
    last_sql: &'a str,
}

/// A batch's encoded pieces.
struct Parts<'a> {
    metadata: Option<Metadata<'a>>,
    types: &'a [u8],
    varints: &'a [u8],
    doubles: &'a [u8],
    strings: &'a [u8],
    blobs: &'a [u8],
}

/// Writes one `QueryResult`: metadata if first, one batch, the error.
fn write_result(r: &mut QueryResult<'_>, p: &mut Parts<'_>, last: bool, error: Option<&str>) {
    if let Some(m) = p.metadata.take() {
        for c in m.columns {
            r.add_column_names(c);
        }
        r.set_statement_count(m.statements)
            .set_statement_with_output_count(m.with_output)
            .set_last_statement_sql(m.last_sql);
    }
    {
        let mut b = r.add_batch();
        let msg = b.message();
        {
            let mut s = msg.begin_nested(STRING_CELLS_FIELD);
            s.append_raw_bytes(p.strings);
        }
        if !p.types.is_empty() {
            msg.append_bytes(CELLS_FIELD, p.types);
        }
        if !p.varints.is_empty() {
            msg.append_bytes(VARINT_CELLS_FIELD, p.varints);
        }
        if !p.doubles.is_empty() {
            let mut preamble = [0u8; 11];
            preamble[0] = FLOAT64_CELLS_TAG;
            let n = 1 + put_varint(&mut preamble[1..], p.doubles.len() as u64);
            let off = msg.written() + n;
            let mut pad = off.next_multiple_of(8) - off;
            if pad == 1 {
                // A filler field takes at least two bytes.
                pad = 9;
            }
            if pad > 0 {
                let mut filler = [0x80u8; 9];
                filler[0] = PADDING_TAG;
                filler[pad - 1] = 0;
                msg.append_raw_bytes(&filler[..pad]);
            }
            msg.append_raw_bytes(&preamble[..n]);
            msg.append_raw_bytes(p.doubles);
        }
        if !p.blobs.is_empty() {
            msg.append_raw_bytes(p.blobs);
        }
        if last {
            b.set_is_last_batch(true);
        }
    }
    if let Some(e) = error {
        r.set_error(if e.is_empty() { "Unknown error" } else { e });
    }
}

/// Writes `v` as a varint at the start of `out` (room for 10 bytes);
/// returns its length.
fn put_varint(out: &mut [u8], mut v: u64) -> usize {
    let mut i = 0;
    while v >= 0x80 {
        if let Some(b) = out.get_mut(i) {
            *b = (v as u8) | 0x80;
        }
        v >>= 7;
        i += 1;
    }
    if let Some(b) = out.get_mut(i) {
        *b = v as u8;
    }
    i + 1
}

/// Appends `v` as a varint.
fn push_varint(out: &mut Vec<u8>, v: u64) {
    let mut buf = [0u8; 10];
    let n = put_varint(&mut buf, v);
    out.extend_from_slice(&buf[..n]);
}

impl RowSink for ResultEncoder<'_> {
    fn statement(&mut self, sql: &str, columns: &[&str], last: bool) {
        self.discard();
        self.streaming = last;
        self.columns = columns.iter().map(|c| (*c).to_owned()).collect();
        self.last_sql.clear();
        self.last_sql.push_str(sql);
        self.statements = self.statements.saturating_add(1);
        self.current_has_row = false;
    }

    fn row(&mut self) {
        self.mid_rows = true;
        if !self.current_has_row {
            self.current_has_row = true;
            self.with_output = self.with_output.saturating_add(1);
        }
        if !self.streaming {
            // Not the answer: stepped through, not encoded.
            return;
        }
        self.note_held();
        let n = self.columns.len();
        if !self.types.is_empty()
            && (self.types.len() + n > self.limits.cells_per_batch
                || self.estimate > self.limits.split_threshold)
        {
            self.flush(false, None);
        }
    }

    fn cell(&mut self, cell: Cell<'_>) {
        if !self.streaming {
            return;
        }
        let t = match cell {
            Cell::Null => CellType::Null,
            Cell::Int(v) => {
                push_varint(&mut self.varints, v as u64);
                self.estimate += 4;
                CellType::Varint
            }
            Cell::Real(v) => {
                self.doubles.extend_from_slice(&v.to_le_bytes());
                self.estimate += 8;
                CellType::Float64
            }
            Cell::Text(t) => {
                // Upstream copies up to the first NUL, which ends the cell.
                let t = t.split(|&b| b == 0).next().unwrap_or_default();
                self.strings.extend_from_slice(t);
                self.strings.push(0);
                self.estimate += t.len() + 1 + 4;
                CellType::String
            }
            Cell::Blob(b) => {
                self.blobs.push(BLOB_CELLS_TAG);
                push_varint(&mut self.blobs, b.len() as u64);
                self.blobs.extend_from_slice(b);
                self.estimate += b.len() + 4;
                CellType::Blob
            }
        };
        self.types.push(t as u8);
    }

    fn statement_done(&mut self) {
        self.mid_rows = false;
    }
}

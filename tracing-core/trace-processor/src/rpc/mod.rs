//! Perfetto's trace processor RPC, sans-IO: what `trace_processor_shell
//! -D` answers on each HTTP endpoint and on its framed stream, as bytes in
//! and bytes out; a server (the CLI's `zerotrace sql --httpd`, the
//! `zerotrace-tp` binary) only moves those bytes.
//!
//! A [`RpcSession`] holds one trace, loaded in chunks (`/parse`, then
//! `/notify_eof`; a trace given on the command line comes loaded) and
//! answers SQL over it (`/query`): each answer is a run of `QueryResult`
//! messages split into cell batches as upstream splits them
//! (`batches.rs`), and a bad query is reported in the result's `error` as
//! upstream reports it (`traceback.rs`). `/rpc` and the WebSocket carry
//! the same methods as `TraceProcessorRpc` messages with sequence numbers
//! (`framing.rs` cuts the stream); a broken stream or out-of-order `seq`
//! gets a `fatal_error` and the connection is closed, and a method not
//! served gets `invalid_request`, as upstream. `restore.rs` drops what the
//! client's SQL created and detaches what it attached.
//!
//! A trace sent in chunks may be gzip-compressed (`feed.rs`). A running
//! query can be stopped from another thread, or by the session's optional
//! time limit (`cancel.rs`): its answer's error says why. Only the last
//! statement's rows are encoded; earlier ones are stepped through. The
//! status is kept as bytes beside the session ([`StatusBoard`]), so a
//! server answers `/status` without waiting for a running query.
//!
//! Not served: metrics, metatracing, trace summaries and export answer
//! their result message with its `error` set (`unsupported.rs`), on the
//! stream and at their HTTP endpoints; SQL packages and structured queries
//! get `invalid_request` on the stream.

pub mod batches;
mod cancel;
pub mod decode;
mod feed;
mod framing;
mod restore;
mod traceback;
mod unsupported;

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use protozero::HeapWriter;
use zerotrace_protos::protos::trace_processor_rpc::TraceProcessorMethod;
use zerotrace_protos::protos::{
    AppendTraceDataResult, QueryArgsDecoder, StatusResult, TraceProcessorRpcDecoder,
    TraceProcessorRpcStream,
};

use crate::{LoadOptions, TraceProcessor};
use batches::{BatchLimits, Framing, ResultEncoder};
pub use cancel::QueryCancel;
use feed::Feed;
pub use framing::MAX_FRAME_BYTES;
use framing::{Frame, FrameReader};
use restore::InitialObjects;
pub use unsupported::Unsupported;

/// `StatusResult.api_version`: upstream's `TRACE_PROCESSOR_CURRENT_API_VERSION`
/// of the Perfetto release whose protocol this speaks (v51).
pub const API_VERSION: i32 = 14;

/// `TPM_EXPORT`, newer than the schema our messages are generated from.
const TPM_EXPORT: i32 = 21;

/// The trace a session answers about.
#[derive(Debug)]
enum Trace {
    /// Loaded (or empty), with the objects its SQL started with.
    Ready(Box<TraceProcessor>, InitialObjects),
    /// Bytes arriving; not yet queryable.
    Loading(Box<Feed>),
    /// The load failed; every later call says so until a new trace starts.
    Failed(String),
}

/// What one call on the framed stream sends back.
#[derive(Debug, Default, PartialEq)]
pub struct RpcOutput {
    /// Whole `TraceProcessorRpcStream` entries, in order.
    pub frames: Vec<Vec<u8>>,
    /// The stream is broken: send the frames, then close the connection.
    pub close: bool,
}

/// The session's `/status` answer, readable while the session is busy:
/// the session rewrites it whenever the trace changes, and a server
/// answers `/status` from a clone of this without taking the session.
#[derive(Debug, Clone, Default)]
pub struct StatusBoard(Arc<Mutex<Vec<u8>>>);

impl StatusBoard {
    /// The encoded `StatusResult` as of the last change.
    pub fn get(&self) -> Vec<u8> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn set(&self, status: Vec<u8>) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = status;
    }
}

/// One client's view of the trace processor: the trace, the stream's
/// sequence numbers and its unread bytes.
#[derive(Debug)]
pub struct RpcSession {
    trace: Trace,
    /// The loaded trace's name for `/status`, when given on the command line.
    name: Option<String>,
    /// `/notify_eof` came (or the trace came loaded): the next `/parse`
    /// starts a new trace.
    eof: bool,
    version: String,
    limits: BatchLimits,
    load_options: LoadOptions,
    /// Users' SQL packages every trace loaded later gets (`--add-sql-package`).
    sql_packages: Vec<crate::SqlPackage>,
    rx: FrameReader,
    rx_seq: i64,
    tx_seq: i64,
    /// What stops the running query (a fresh one per [`RpcSession::new_cancel`]).
    cancel: QueryCancel,
    /// The most time one query may run.
    query_timeout: Option<Duration>,
    board: StatusBoard,
}

impl RpcSession {
    /// A session over an empty trace, waiting for `/parse`.
    pub fn new() -> Result<Self, crate::Error> {
        let tp = TraceProcessor::from_bytes(&[])?;
        Ok(Self::with_trace(tp, None))
    }

    /// A session over a trace already loaded, named `name` in `/status`.
    pub fn with_trace(tp: TraceProcessor, name: Option<String>) -> Self {
        let initial = InitialObjects::of(&tp);
        let eof = name.is_some();
        let session = RpcSession {
            trace: Trace::Ready(Box::new(tp), initial),
            name,
            eof,
            version: format!("zerotrace v{}", env!("CARGO_PKG_VERSION")),
            limits: BatchLimits::default(),
            load_options: LoadOptions::default(),
            sql_packages: Vec::new(),
            rx: FrameReader::default(),
            rx_seq: 0,
            tx_seq: 0,
            cancel: QueryCancel::default(),
            query_timeout: None,
            board: StatusBoard::default(),
        };
        session.board.set(session.status());
        session
    }

    /// The `/status` answer, kept current, readable without the session.
    pub fn status_board(&self) -> StatusBoard {
        self.board.clone()
    }

    /// Stops each query that runs longer than `limit` (none: no limit,
    /// the default); its answer's error names the limit.
    pub fn set_query_timeout(&mut self, limit: Option<Duration>) {
        self.query_timeout = limit;
    }

    /// A fresh handle that stops the queries of the next calls (until the
    /// next `new_cancel`); a cancel given to an earlier handle no longer
    /// counts. A server takes one per request and hands it to whatever
    /// watches the client.
    pub fn new_cancel(&mut self) -> QueryCancel {
        self.cancel = QueryCancel::default();
        self.cancel.clone()
    }

    /// Rewrites the status board after the trace or its name changed.
    fn trace_changed(&self) {
        self.board.set(self.status());
    }

    /// Cuts batches at other limits than upstream's (for tests).
    pub fn set_batch_limits(&mut self, limits: BatchLimits) {
        self.limits = limits;
    }

    /// What traces loaded over `/parse` keep (`--no-ftrace-raw`).
    pub fn set_load_options(&mut self, options: LoadOptions) {
        self.load_options = options;
    }

    /// The users' SQL packages that traces loaded over `/parse` (and
    /// after a reset) get, as the one given on the command line got them.
    pub fn set_sql_packages(&mut self, packages: Vec<crate::SqlPackage>) {
        self.sql_packages = packages;
    }

    /// `tp` with the users' SQL packages registered.
    fn with_packages(&self, tp: TraceProcessor) -> Result<TraceProcessor, String> {
        for p in &self.sql_packages {
            tp.add_sql_package(p.clone()).map_err(|e| e.to_string())?;
        }
        Ok(tp)
    }

    /// `/status`: an encoded `StatusResult`.
    pub fn status(&self) -> Vec<u8> {
        let mut w = HeapWriter::new();
        {
            let mut s = StatusResult::from_message(w.root());
            self.write_status(&mut s);
        }
        w.to_vec()
    }

    fn write_status(&self, s: &mut StatusResult<'_>) {
        s.set_loaded_trace_name(self.name.as_deref().unwrap_or_default())
            .set_human_readable_version(&self.version)
            .set_api_version(API_VERSION);
    }

    /// `/parse`: takes the trace's next bytes (after a finished trace,
    /// they start a new one); an encoded `AppendTraceDataResult`, with an
    /// error when the bytes do not load.
    pub fn parse(&mut self, data: &[u8]) -> Vec<u8> {
        let error = self.append(data).err();
        let mut w = HeapWriter::new();
        {
            let mut r = AppendTraceDataResult::from_message(w.root());
            if let Some(e) = &error {
                r.set_error(e);
            }
        }
        w.to_vec()
    }

    fn append(&mut self, data: &[u8]) -> Result<(), String> {
        if self.eof {
            self.eof = false;
            self.name = None;
            self.trace = Trace::Loading(Box::new(Feed::with_options(&self.load_options)));
            self.trace_changed();
        }
        if matches!(self.trace, Trace::Ready(..)) {
            self.trace = Trace::Loading(Box::new(Feed::with_options(&self.load_options)));
        }
        let result = match &mut self.trace {
            Trace::Loading(feed) => feed.push(data).map_err(|e| e.to_string()),
            Trace::Failed(e) => return Err(e.clone()),
            Trace::Ready(..) => Ok(()),
        };
        if let Err(e) = &result {
            self.trace = Trace::Failed(e.clone());
        }
        result
    }

    /// `/notify_eof`: the trace is whole; its tables are built.
    pub fn notify_eof(&mut self) -> Result<(), String> {
        self.eof = true;
        let trace = std::mem::replace(&mut self.trace, Trace::Failed(String::new()));
        let (trace, result) = match trace {
            Trace::Loading(feed) => {
                match feed
                    .finish()
                    .map_err(crate::Error::from)
                    .and_then(|storage| {
                        TraceProcessor::from_storage_with_options(storage, self.load_options)
                    })
                    .map_err(|e| e.to_string())
                    .and_then(|tp| self.with_packages(tp))
                {
                    Ok(tp) => {
                        let initial = InitialObjects::of(&tp);
                        (Trace::Ready(Box::new(tp), initial), Ok(()))
                    }
                    Err(e) => (Trace::Failed(e.clone()), Err(e)),
                }
            }
            Trace::Failed(e) => (Trace::Failed(e.clone()), Err(e)),
            ready => (ready, Ok(())),
        };
        self.trace = trace;
        self.trace_changed();
        result
    }

    /// `/restore_initial_tables`: drops the tables, views, indexes and
    /// triggers the client's SQL created.
    pub fn restore_initial_tables(&mut self) {
        if let Trace::Ready(tp, initial) = &self.trace {
            initial.restore(tp);
        }
    }

    /// `/query`: runs the `QueryArgs` in `args`; the `QueryResult`
    /// messages that answer it, one per batch (each an HTTP chunk).
    pub fn query(&mut self, args: &[u8]) -> Vec<Vec<u8>> {
        let mut frames = Vec::new();
        self.query_into(args, &mut |f| frames.push(f.to_vec()));
        frames
    }

    /// [`RpcSession::query`], each message handed to `out` as soon as it
    /// is made (the last statement's batches while SQLite steps).
    pub fn query_into(&mut self, args: &[u8], out: &mut dyn FnMut(&[u8])) {
        let sql = QueryArgsDecoder::new(args).sql_query().unwrap_or_default();
        self.run_query(sql, Framing::Query, 0, out);
    }

    fn run_query(&self, sql: &str, framing: Framing, seq: i64, out: &mut dyn FnMut(&[u8])) -> i64 {
        self.run_query_peak(sql, framing, seq, out).0
    }

    /// [`RpcSession::run_query`], also telling the most bytes its encoder
    /// held at once.
    fn run_query_peak(
        &self,
        sql: &str,
        framing: Framing,
        seq: i64,
        out: &mut dyn FnMut(&[u8]),
    ) -> (i64, usize) {
        let mut enc = ResultEncoder::new(framing, self.limits, seq, out);
        let tp = match &self.trace {
            Trace::Ready(tp, _) => tp,
            Trace::Loading(_) => {
                let error = "the trace is still loading: send notify_eof before querying";
                return (enc.finish(Some(error), false), 0);
            }
            Trace::Failed(e) => return (enc.finish(Some(e), false), 0),
        };
        let deadline = self.query_timeout.map(|t| (Instant::now() + t, t));
        let (stop, timer) = self.cancel.clone().stop_check(deadline);
        let result = tp.engine.query_streaming_until(sql, &mut enc, stop);
        let peak = enc.peak_held();
        let seq = match result {
            Ok(()) => enc.finish(None, true),
            Err(e) => {
                let kept = enc.has_rows();
                let error = match self.cancel.reason().or_else(|| timer.reason()) {
                    Some(why) => format!("The query was interrupted: {why}"),
                    None => traceback::describe(sql, &e),
                };
                enc.finish(Some(&error), kept)
            }
        };
        (seq, peak)
    }

    /// `/rpc` and `/websocket`: takes the stream's next bytes and answers
    /// every whole `TraceProcessorRpc` among them.
    pub fn rpc(&mut self, bytes: &[u8]) -> RpcOutput {
        let mut frames = Vec::new();
        let close = self.rpc_into(bytes, &mut |f| frames.push(f.to_vec()));
        RpcOutput { frames, close }
    }

    /// [`RpcSession::rpc`], each stream entry handed to `out` as soon as it
    /// is made; true when the stream is broken and must be closed.
    pub fn rpc_into(&mut self, bytes: &[u8], out: &mut dyn FnMut(&[u8])) -> bool {
        self.rx.push(bytes);
        loop {
            match self.rx.next_frame() {
                Frame::Message(m) => {
                    if !self.request(&m, out) {
                        return true;
                    }
                }
                Frame::Incomplete => return false,
                Frame::Error => {
                    out(&fatal("RPC framing error"));
                    return true;
                }
            }
        }
    }

    /// Answers one request; false when the stream must close.
    fn request(&mut self, msg: &[u8], out: &mut dyn FnMut(&[u8])) -> bool {
        let req = TraceProcessorRpcDecoder::new(msg);
        let seq = req.seq().unwrap_or(0);
        if seq != 0 && self.rx_seq != 0 && seq != self.rx_seq.wrapping_add(1) {
            out(&fatal(&format!(
                "RPC request out of order. Expected {}, got {} (ERR:rpc_seq)",
                self.rx_seq.wrapping_add(1),
                seq
            )));
            return false;
        }
        self.rx_seq = seq;
        let method = req.request_raw().unwrap_or(0);
        const NOT_SET: &str = "RPC error: request field not set";
        if method == TPM_EXPORT {
            self.unsupported(method, Unsupported::Export, out);
            return true;
        }
        match TraceProcessorMethod::from_i32(method) {
            Some(TraceProcessorMethod::TpmAppendTraceData) => {
                let error = match req.append_trace_data() {
                    Some(data) => self.append(data).err(),
                    None => Some(NOT_SET.to_owned()),
                };
                out(&self.response(method, |m| {
                    let mut r = m.begin_append_result();
                    if let Some(e) = &error {
                        r.set_error(e);
                    }
                }));
            }
            Some(TraceProcessorMethod::TpmFinalizeTraceData) => {
                let error = self.notify_eof().err();
                out(&self.response(method, |m| {
                    let mut r = m.begin_finalize_data_result();
                    if let Some(e) = &error {
                        r.set_error(e);
                    }
                }));
            }
            Some(TraceProcessorMethod::TpmQueryStreaming) => match req.query_args() {
                Some(args) => {
                    let sql = args.sql_query().unwrap_or_default();
                    self.tx_seq = self.run_query(sql, Framing::Rpc, self.tx_seq, out);
                }
                None => out(&self.response(method, |m| {
                    m.begin_query_result().set_error(NOT_SET);
                })),
            },
            Some(TraceProcessorMethod::TpmRestoreInitialTables) => {
                self.restore_initial_tables();
                out(&self.response(method, |_| {}));
            }
            Some(TraceProcessorMethod::TpmGetStatus) => {
                let status = self.status();
                out(&self.response(method, |m| {
                    m.message().append_bytes(
                        zerotrace_protos::protos::TraceProcessorRpc::FIELD_STATUS,
                        &status,
                    );
                }));
            }
            Some(TraceProcessorMethod::TpmResetTraceProcessor) => {
                self.eof = false;
                self.name = None;
                self.trace = match TraceProcessor::from_bytes(&[])
                    .map_err(|e| e.to_string())
                    .and_then(|tp| self.with_packages(tp))
                {
                    Ok(tp) => {
                        let initial = InitialObjects::of(&tp);
                        Trace::Ready(Box::new(tp), initial)
                    }
                    Err(e) => Trace::Failed(e),
                };
                self.trace_changed();
                out(&self.response(method, |_| {}));
            }
            Some(TraceProcessorMethod::TpmComputeMetric) => {
                self.unsupported(method, Unsupported::ComputeMetric, out)
            }
            Some(TraceProcessorMethod::TpmSummarizeTrace) => {
                self.unsupported(method, Unsupported::TraceSummary, out)
            }
            Some(TraceProcessorMethod::TpmDisableAndReadMetatrace) => {
                self.unsupported(method, Unsupported::Metatrace, out)
            }
            _ => {
                let seq = self.next_tx_seq();
                let mut w = HeapWriter::new();
                {
                    let mut s = TraceProcessorRpcStream::from_message(w.root());
                    let mut m = s.add_msg();
                    m.set_seq(seq)
                        .set_response_raw(method)
                        .set_invalid_request_raw(method);
                }
                out(&w.to_vec());
            }
        }
        true
    }

    /// Answers `method`, which is not served, with its result's error.
    fn unsupported(&mut self, method: i32, what: Unsupported, out: &mut dyn FnMut(&[u8])) {
        let result = what.result();
        out(&self.response(method, |m| {
            m.message().append_bytes(what.response_field(), &result);
        }));
    }

    fn next_tx_seq(&mut self) -> i64 {
        let seq = self.tx_seq;
        self.tx_seq = seq.wrapping_add(1);
        seq
    }

    /// One response entry answering `method`, its arguments written by `f`.
    fn response(
        &mut self,
        method: i32,
        f: impl FnOnce(&mut zerotrace_protos::protos::TraceProcessorRpc<'_>),
    ) -> Vec<u8> {
        let seq = self.next_tx_seq();
        let mut w = HeapWriter::new();
        {
            let mut s = TraceProcessorRpcStream::from_message(w.root());
            let mut m = s.add_msg();
            m.set_seq(seq).set_response_raw(method);
            f(&mut m);
        }
        w.to_vec()
    }
}

/// A stream entry carrying only a fatal error.
fn fatal(message: &str) -> Vec<u8> {
    let mut w = HeapWriter::new();
    {
        let mut s = TraceProcessorRpcStream::from_message(w.root());
        s.add_msg().set_fatal_error(message);
    }
    w.to_vec()
}

#[cfg(test)]
mod tests;

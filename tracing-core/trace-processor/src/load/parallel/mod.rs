//! A load on several threads whose tables are the one-thread load's, byte
//! for byte: the work that does not depend on what came before (reading
//! the file, inflating a gzip file, splitting a protobuf trace into its
//! packets, inflating `compressed_packets`) runs ahead on a pre-stage of
//! threads, and the ordered stage (the loader, on the calling thread) takes
//! each read's result in the order it was read, as it would have taken the
//! read itself (`consume.rs`).
//!
//! The threads: a framer reads, inflates a gzip file's stream and splits
//! the reads (`batch.rs`; splitting carries state from read to read, so it
//! is one thread); workers walk each batch's packets and inflate their
//! `compressed_packets`; the
//! ordered stage puts the batches back in read order. Until the loader has
//! told the format, the framer hands on each read as it is and waits for
//! the loader's word: a protobuf trace's splitter then moves to the framer;
//! any other format's reads go on as they are (still read and inflated on
//! the framer's thread).
//!
//! Memory is bounded: at most [`in_flight`] batches are between the framer
//! and the ordered stage (the ordered stage hands back a credit for each
//! batch it took, with the batch's buffers for a later read, so that the
//! buffers are not allocated and faulted in read after read), each a read
//! of [`CHUNK`] bytes, the packets carried into it, a walk per packet
//! (about 100 bytes) and what it inflated ahead
//! (`batch::PRE_INFLATE_PER_BATCH`). Nothing holds the whole trace.

// The threaded load is started by the driver, which comes with SQL; the
// loader itself only takes its batches.
#![cfg_attr(not(feature = "sql"), allow(dead_code))]

mod batch;
mod consume;
#[cfg(test)]
mod tests;

pub(crate) use batch::Ahead;

use std::collections::BTreeMap;
use std::io::Read;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, Sender, SyncSender, channel, sync_channel};
use std::sync::{Arc, Mutex};

use crate::error::{Error, TraceError};
use crate::load::Loader;
use crate::load::tokenizer::TraceTokenizer;
use batch::Batch;

/// Bytes read per batch (the one-thread driver's read size).
pub const CHUNK: usize = 1 << 20;

/// Batches between the framer and the ordered stage at most, for
/// `workers` inflating threads.
pub fn in_flight(workers: usize) -> usize {
    2 * workers + 2
}

/// What the pre-stage hands the ordered stage for one read.
enum Piece {
    /// Bytes to push as they are (the format not told yet, or not protobuf).
    Raw(Batch),
    /// A protobuf trace's read, split and partly inflated.
    Framed(Batch),
    /// Reading failed: the load ends with this error.
    Failed(Error),
    /// The end of the trace, with the splitter when the framer had it.
    Done(Option<TraceTokenizer>),
}

/// A piece with its place in the read order.
struct Message {
    seq: u64,
    piece: Piece,
    /// The reader's bytes read when the piece was read (None: report no
    /// progress for it, as for the first two bytes the driver looks at).
    read: Option<u64>,
    /// For a gzip file: its compressed bytes read so far.
    source: Option<u64>,
}

/// The loader's word on the format, after each raw read until told.
enum Told {
    /// Not yet: hand on the next read as it is, and ask again.
    Waiting,
    /// Protobuf: split the reads from now on with this splitter.
    Proto(TraceTokenizer),
    /// Another format: hand on every read as it is.
    Other,
}

/// How a load observes its progress: called after each read is pushed,
/// with the reader's bytes read then.
pub type Progress<'a> = &'a mut dyn FnMut(u64);

/// Loads the trace `r` yields (plain, or gzip told by its magic) into
/// `loader` on `threads` threads in all (at least one framer and one
/// worker beside this one). `read` counts the bytes `r` yields as it is
/// read; `progress` is told after each read the loader took.
pub fn load<R: Read + Send>(
    loader: &mut Loader,
    r: R,
    read: &AtomicU64,
    threads: usize,
    progress: Progress<'_>,
) -> Result<(), Error> {
    let workers = threads.saturating_sub(2).max(1);
    // A credit is room for one piece, with a spent batch's buffers to
    // read into when one came back.
    let (credit_tx, credit_rx) = channel::<Option<Batch>>();
    for _ in 0..in_flight(workers) {
        let _ = credit_tx.send(None);
    }
    let (job_tx, job_rx) = sync_channel::<Message>(in_flight(workers));
    let (done_tx, done_rx) = channel::<Message>();
    let (told_tx, told_rx) = channel::<Told>();
    let job_rx = Arc::new(Mutex::new(job_rx));
    std::thread::scope(|s| {
        s.spawn(move || {
            let mut framer = Framer {
                out: job_tx,
                credits: credit_rx,
                told: told_rx,
                read,
                seq: 0,
            };
            framer.run(r);
        });
        for _ in 0..workers {
            let jobs = Arc::clone(&job_rx);
            let done = done_tx.clone();
            s.spawn(move || work(&jobs, &done));
        }
        // Only the threads hold these: when the ordered stage ends, early
        // or not, every channel it shares closes and the threads return.
        drop((job_rx, done_tx));
        let result = order(loader, &done_rx, &credit_tx, &told_tx, progress);
        drop((done_rx, credit_tx, told_tx));
        result
    })
}

/// A worker: inflates each batch ahead and hands every piece on.
fn work(jobs: &Mutex<Receiver<Message>>, done: &Sender<Message>) {
    loop {
        let next = match jobs.lock() {
            Ok(rx) => rx.recv(),
            Err(_) => return,
        };
        let Ok(mut m) = next else { return };
        if let Piece::Framed(b) = &mut m.piece {
            b.prepare();
        }
        if done.send(m).is_err() {
            return;
        }
    }
}

/// The ordered stage: takes the pieces in read order into the loader.
fn order(
    loader: &mut Loader,
    done: &Receiver<Message>,
    credits: &Sender<Option<Batch>>,
    told: &Sender<Told>,
    progress: Progress<'_>,
) -> Result<(), Error> {
    let mut early = BTreeMap::new();
    let mut next = 0u64;
    let mut telling = true;
    loop {
        let m = match early.remove(&next) {
            Some(m) => m,
            None => {
                let Ok(m) = done.recv() else {
                    // The pre-stage ended without its last piece: a thread
                    // panicked.
                    return Err(std::io::Error::other("the load's pre-stage stopped").into());
                };
                if m.seq != next {
                    early.insert(m.seq, m);
                    continue;
                }
                m
            }
        };
        next += 1;
        let spent = match m.piece {
            Piece::Raw(batch) => {
                if let Some(c) = m.source {
                    loader.set_source_bytes(c);
                }
                loader.push(batch.data())?;
                if telling {
                    let word = if loader.is_proto() {
                        Told::Proto(loader.take_splitter())
                    } else if loader.is_sniffing() {
                        Told::Waiting
                    } else {
                        Told::Other
                    };
                    telling = matches!(word, Told::Waiting);
                    let _ = told.send(word);
                }
                batch
            }
            Piece::Framed(mut batch) => {
                if let Some(c) = m.source {
                    loader.set_source_bytes(c);
                }
                loader.push_batch(&mut batch)?;
                batch
            }
            Piece::Failed(e) => return Err(e),
            Piece::Done(splitter) => {
                if let Some(t) = splitter {
                    loader.put_splitter(t);
                }
                return Ok(());
            }
        };
        if let Some(r) = m.read {
            progress(r);
        }
        let _ = credits.send(Some(spent));
    }
}

/// The framer: reads the trace and splits its reads.
struct Framer<'a> {
    out: SyncSender<Message>,
    credits: Receiver<Option<Batch>>,
    told: Receiver<Told>,
    read: &'a AtomicU64,
    seq: u64,
}

impl Framer<'_> {
    /// Waits until the ordered stage has room for a piece: a batch to read
    /// into (a spent one when it came back); None when the load ended.
    fn credit(&mut self) -> Option<Batch> {
        self.credits.recv().ok().map(Option::unwrap_or_default)
    }

    /// Sends `piece`, for which a credit was taken; false when the load
    /// ended.
    fn send(&mut self, piece: Piece, read: Option<u64>, source: Option<u64>) -> bool {
        let seq = self.seq;
        self.seq += 1;
        self.out
            .send(Message {
                seq,
                piece,
                read,
                source,
            })
            .is_ok()
    }

    /// Takes a credit and sends `piece`; false when the load ended.
    fn send_last(&mut self, piece: Piece) -> bool {
        self.credit().is_some() && self.send(piece, None, None)
    }

    /// Reads the whole trace, as the one-thread driver reads it: its first
    /// two bytes tell a gzip file, which is read inflated.
    fn run(&mut self, mut r: impl Read) {
        let mut head = [0u8; 2];
        let mut got = 0;
        while got < 2 {
            match r.read(&mut head[got..]) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) => {
                    self.send_last(Piece::Failed(e.into()));
                    return;
                }
            }
        }
        let head = &head[..got];
        let mut state = Told::Waiting;
        if head == [0x1f, 0x8b] {
            let chained = std::io::Cursor::new(head.to_vec()).chain(r);
            let gz = flate2::read::MultiGzDecoder::new(chained);
            self.pump(gz, true, &mut state);
        } else {
            if self.credit().is_none() {
                return;
            }
            let head = Batch::of_bytes(head.to_vec());
            if !self.send_raw(head, None, None, &mut state) {
                return;
            }
            self.pump(r, false, &mut state);
        }
    }

    /// Hands on a read as it is; while the format is not told, waits for
    /// the loader's word on it. False when the load ended.
    fn send_raw(
        &mut self,
        batch: Batch,
        read: Option<u64>,
        source: Option<u64>,
        state: &mut Told,
    ) -> bool {
        if !self.send(Piece::Raw(batch), read, source) {
            return false;
        }
        if matches!(state, Told::Waiting) {
            match self.told.recv() {
                Ok(word) => *state = word,
                Err(_) => return false,
            }
        }
        true
    }

    /// Reads `r` to its end in reads of [`CHUNK`] bytes (`gzip`: the
    /// inflated stream of a gzip file, whose errors are the file's).
    fn pump(&mut self, mut r: impl Read, gzip: bool, state: &mut Told) {
        loop {
            let Some(mut batch) = self.credit() else {
                return;
            };
            let n = match batch.read_from(&mut r, CHUNK) {
                Ok(n) => n,
                Err(e) => {
                    let e = match gzip {
                        true => TraceError::Gzip(e.to_string()).into(),
                        false => e.into(),
                    };
                    self.send(Piece::Failed(e), None, None);
                    return;
                }
            };
            let read = self.read.load(Ordering::Relaxed);
            if n == 0 {
                let splitter = match std::mem::replace(state, Told::Other) {
                    Told::Proto(t) => Some(t),
                    _ => None,
                };
                self.send(Piece::Done(splitter), None, None);
                return;
            }
            let source = gzip.then_some(read);
            let sent = match state {
                Told::Proto(t) => {
                    batch.frame(t);
                    self.send(Piece::Framed(batch), Some(read), source)
                }
                _ => self.send_raw(batch, Some(read), source, state),
            };
            if !sent {
                return;
            }
        }
    }
}

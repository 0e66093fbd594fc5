//! The thin I/O driver: reads a trace file or any reader, plain or
//! gzip-compressed (told by the gzip magic), in chunks into the loading
//! core, telling an observer how far it has read (for a progress line).
//! A gzip file's compressed bytes read so far go to the loader with the
//! bytes they inflated to, so that its budget bounds the ratio too.
//! A file loaded with more than one thread goes through the parallel
//! pre-stage (`load/parallel/`), which makes the same tables.

use std::io::Read;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::{Error, TraceError};
use crate::load::budget::LoadBudget;
use crate::load::{Loader, parallel};
use crate::load_options::LoadOptions;
use crate::storage::Storage;

/// Bytes read per chunk.
const CHUNK: usize = 1 << 20;

/// How far a load has got, as told after each chunk to the observer that
/// `TraceProcessor::open_with_progress` was given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoadProgress {
    /// Bytes of the file read so far (compressed bytes for a gzip file).
    pub read: u64,
    /// The file's size, when known.
    pub total: Option<u64>,
    /// Every byte is read: the loader now sorts and parses the packets
    /// (the last report of a load).
    pub reading_done: bool,
}

/// Loads a trace from a reader (plain or gzip).
pub fn load_reader(r: impl Read) -> Result<Storage, Error> {
    load_reader_with_budget(r, LoadBudget::default())
}

/// Loads a trace from a reader (plain or gzip) within `budget`.
pub fn load_reader_with_budget(r: impl Read, budget: LoadBudget) -> Result<Storage, Error> {
    let read = Arc::new(AtomicU64::new(0));
    let counting = Counting {
        inner: r,
        read: read.clone(),
    };
    let options = LoadOptions {
        budget,
        ..LoadOptions::default()
    };
    load_observed(counting, &read, &options, &mut |_| {})
}

/// Loads a trace from a reader, calling `chunk_done(reading_done)` after
/// each chunk is pushed and once, with `true`, before the loader finishes;
/// `read` counts the reader's bytes.
fn load_observed(
    mut r: impl Read,
    read: &AtomicU64,
    options: &LoadOptions,
    chunk_done: &mut dyn FnMut(bool),
) -> Result<Storage, Error> {
    let mut loader = Loader::with_budget(options.budget);
    loader.apply_load_flags(options);
    let mut head = [0u8; 2];
    let mut got = 0;
    while got < 2 {
        let n = r.read(&mut head[got..])?;
        if n == 0 {
            break;
        }
        got += n;
    }
    let head = &head[..got];
    if head == [0x1f, 0x8b] {
        let chained = std::io::Cursor::new(head.to_vec()).chain(r);
        let gz = flate2::read::MultiGzDecoder::new(chained);
        pump(&mut loader, gz, Some(read), chunk_done)?;
    } else {
        loader.push(head)?;
        pump(&mut loader, r, None, chunk_done)?;
    }
    chunk_done(true);
    Ok(loader.finish()?)
}

/// Pushes what `r` reads; `compressed`: for a gzip stream, the count of
/// the compressed bytes read so far.
fn pump(
    loader: &mut Loader,
    mut r: impl Read,
    compressed: Option<&AtomicU64>,
    chunk_done: &mut dyn FnMut(bool),
) -> Result<(), Error> {
    let mut buf = vec![0u8; CHUNK];
    loop {
        let n = match r.read(&mut buf) {
            Ok(n) => n,
            Err(e) if compressed.is_some() => {
                return Err(TraceError::Gzip(e.to_string()).into());
            }
            Err(e) => return Err(e.into()),
        };
        if n == 0 {
            return Ok(());
        }
        if let Some(c) = compressed {
            loader.set_source_bytes(c.load(Ordering::Relaxed));
        }
        loader.push(&buf[..n])?;
        chunk_done(false);
    }
}

/// A reader that counts the bytes it hands out.
struct Counting<R> {
    inner: R,
    read: Arc<AtomicU64>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// Loads a trace file (plain or gzip).
pub fn load_file(path: &Path) -> Result<Storage, Error> {
    load_file_with_progress(path, &mut |_| {})
}

/// Loads a trace file (plain or gzip), telling `progress` how many of the
/// file's bytes were read after each chunk.
pub fn load_file_with_progress(
    path: &Path,
    progress: &mut dyn FnMut(LoadProgress),
) -> Result<Storage, Error> {
    load_file_with_budget(path, LoadBudget::default(), progress)
}

/// Loads a trace file (plain or gzip) within `budget`, telling `progress`
/// how many of the file's bytes were read after each chunk.
pub fn load_file_with_budget(
    path: &Path,
    budget: LoadBudget,
    progress: &mut dyn FnMut(LoadProgress),
) -> Result<Storage, Error> {
    let options = LoadOptions {
        budget,
        ..LoadOptions::default()
    };
    load_file_with_options(path, &options, progress)
}

/// Loads a trace file (plain or gzip) as `options` say (its budget,
/// whether to analyze its proto content, how many threads), telling
/// `progress` how many of the file's bytes were read after each chunk.
pub fn load_file_with_options(
    path: &Path,
    options: &LoadOptions,
    progress: &mut dyn FnMut(LoadProgress),
) -> Result<Storage, Error> {
    let f = std::fs::File::open(path)?;
    let total = f.metadata().ok().filter(|m| m.is_file()).map(|m| m.len());
    let read = Arc::new(AtomicU64::new(0));
    let counting = std::io::BufReader::new(Counting {
        inner: f,
        read: read.clone(),
    });
    load_counted(counting, &read, options, &mut |read, reading_done| {
        progress(LoadProgress {
            read,
            total,
            reading_done,
        })
    })
}

/// Loads what `r` yields (plain or gzip) as `options` say, `read` counting
/// its bytes: on `options.threads` threads, the one-thread path for 1.
/// `progress(read, reading_done)` is told after each chunk and once, with
/// `true`, before the loader finishes.
pub(crate) fn load_counted(
    r: impl Read + Send,
    read: &AtomicU64,
    options: &LoadOptions,
    progress: &mut dyn FnMut(u64, bool),
) -> Result<Storage, Error> {
    if options.threads <= 1 {
        return load_observed(r, read, options, &mut |reading_done| {
            progress(read.load(Ordering::Relaxed), reading_done)
        });
    }
    let mut loader = Loader::with_budget(options.budget);
    loader.apply_load_flags(options);
    parallel::load(&mut loader, r, read, options.threads, &mut |r| {
        progress(r, false)
    })?;
    progress(read.load(Ordering::Relaxed), true);
    Ok(loader.finish()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_counts_the_file_bytes_up_to_its_size() {
        let dir = std::env::temp_dir().join(format!("ztp-driver-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.pftrace");
        // Empty packets, over two chunks.
        let mut trace = Vec::new();
        while trace.len() < CHUNK + 10 {
            trace.extend_from_slice(&[0x0a, 0]);
        }
        let mut seen = Vec::new();
        std::fs::write(&path, &trace).unwrap();
        load_file_with_progress(&path, &mut |p| seen.push(p)).unwrap();
        let total = trace.len() as u64;
        assert!(seen.len() >= 2, "{seen:?}");
        assert!(
            seen.iter()
                .all(|p| p.total == Some(total) && p.read <= total)
        );
        assert!(seen.windows(2).all(|w| w[0].read <= w[1].read));
        let last = seen.last().unwrap();
        assert_eq!((last.read, last.reading_done), (total, true));
        assert_eq!(seen.iter().filter(|p| p.reading_done).count(), 1);
        let _ = std::fs::remove_dir_all(&dir);
    }
}

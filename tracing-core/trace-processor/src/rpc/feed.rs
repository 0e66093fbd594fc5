//! A trace arriving over `/parse` (or `TPM_APPEND_TRACE_DATA`) in chunks,
//! plain or gzip-compressed as the file path takes it: Google's Python
//! client streams every trace, a `.pftrace.gz` too, through `/parse`. The
//! gzip magic on the trace's first two bytes (which may come in different
//! chunks) says which; gzip members are inflated incrementally across
//! chunks straight into the [`Loader`], which holds the load to the
//! session's budget (`LoadOptions::budget`, as the file path does): it is
//! told how many compressed bytes came, so a small upload that inflates
//! past the budget's ratio or its memory is refused with the loader's
//! error naming the limit.

use std::io::{self, Write};

use flate2::write::MultiGzDecoder;

use crate::error::TraceError;
use crate::load::Loader;
use crate::storage::Storage;

/// The gzip magic.
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// A trace being fed, chunk by chunk.
#[derive(Debug)]
pub(crate) enum Feed {
    /// Fewer than two bytes so far: not yet known whether gzip.
    Sniffing(Box<Loader>, Vec<u8>),
    /// A plain trace.
    Plain(Box<Loader>),
    /// A gzip-compressed trace, inflated into the loader.
    Gzip(Box<MultiGzDecoder<Sink>>),
}

/// Where inflated bytes go: the loader, which keeps to its budget. A
/// loader error is kept to be reported as itself (flate2 only passes on
/// `io::Error`).
#[derive(Debug)]
pub(crate) struct Sink {
    loader: Box<Loader>,
    /// Compressed bytes taken so far.
    compressed: u64,
    error: Option<TraceError>,
}

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if let Err(e) = self.loader.push(buf) {
            self.error = Some(e);
        }
        match &self.error {
            Some(e) => Err(io::Error::other(e.to_string())),
            None => Ok(buf.len()),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Feed {
    /// A new trace, loaded as `options` say (its budget; whether its proto
    /// content is analyzed).
    pub(crate) fn with_options(options: &crate::LoadOptions) -> Self {
        let mut loader = Loader::with_budget(options.budget);
        loader.apply_load_flags(options);
        Feed::Sniffing(Box::new(loader), Vec::new())
    }

    /// Takes the trace's next bytes.
    pub(crate) fn push(&mut self, data: &[u8]) -> Result<(), TraceError> {
        if let Feed::Sniffing(loader, head) = self {
            head.extend_from_slice(data);
            if head.len() < GZIP_MAGIC.len() {
                return Ok(());
            }
            let head = std::mem::take(head);
            let loader = std::mem::take(loader);
            if head.starts_with(&GZIP_MAGIC) {
                *self = Feed::Gzip(Box::new(MultiGzDecoder::new(Sink {
                    loader,
                    compressed: 0,
                    error: None,
                })));
            } else {
                *self = Feed::Plain(loader);
            }
            return self.push(&head);
        }
        match self {
            Feed::Plain(loader) => loader.push(data),
            Feed::Gzip(dec) => {
                let sink = dec.get_mut();
                sink.compressed = sink.compressed.saturating_add(data.len() as u64);
                sink.loader.set_source_bytes(sink.compressed);
                dec.write_all(data)
                    .map_err(|e| gzip_error(dec.get_mut(), e))
            }
            Feed::Sniffing(..) => Ok(()),
        }
    }

    /// The trace is whole: what it loads to.
    pub(crate) fn finish(self) -> Result<Storage, TraceError> {
        match self {
            Feed::Sniffing(mut loader, head) => {
                loader.push(&head)?;
                loader.finish()
            }
            Feed::Plain(loader) => loader.finish(),
            Feed::Gzip(mut dec) => {
                if let Err(e) = dec.try_finish() {
                    return Err(gzip_error(dec.get_mut(), e));
                }
                let sink = dec.finish().map_err(|e| TraceError::Gzip(e.to_string()))?;
                sink.loader.finish()
            }
        }
    }
}

/// The error to report for `e`: the loader's or the budget's own, else
/// the gzip stream's.
fn gzip_error(sink: &mut Sink, e: io::Error) -> TraceError {
    sink.error
        .take()
        .unwrap_or_else(|| TraceError::Gzip(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gzip(bytes: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(bytes).unwrap();
        e.finish().unwrap()
    }

    #[test]
    fn bytes_over_the_budget_are_the_loaders_error() {
        // The decoder keeps up to one buffer of output back until the next
        // write or the end: the error comes then.
        // 5000 bytes of empty packets: a protobuf trace, as the loader
        // tells formats by content.
        let mut f = Feed::with_options(&crate::LoadOptions {
            budget: crate::LoadBudget::with_max_memory(4096),
            ..crate::LoadOptions::default()
        });
        let err = match f.push(&gzip(&b"\x0a\x00".repeat(2500))) {
            Err(e) => e,
            Ok(()) => f.finish().unwrap_err(),
        };
        assert_eq!(err, TraceError::OverBudget { limit: 4096 });
    }

    #[test]
    fn a_broken_gzip_stream_is_a_gzip_error() {
        let mut f = Feed::with_options(&crate::LoadOptions::default());
        let mut z = gzip(b"\x0a\x00");
        z.truncate(z.len() - 4);
        f.push(&z).unwrap();
        assert!(matches!(f.finish(), Err(TraceError::Gzip(_))));
    }
}

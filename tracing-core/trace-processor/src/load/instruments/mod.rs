//! Apple Instruments' XML, as `xctrace export` writes a Time Profiler (or
//! CPU Profiler) table, read into the tables upstream's importer fills:
//! `instruments_sample` (profiler samples of source `instruments`), the
//! stack-profile mappings, frames and callsites, threads and processes
//! with their names, and the CPUs sampled on.
//!
//! Told by its first bytes, as upstream tells it: the XML declaration
//! `<?xml version="1.0"?>`, a line break and `<trace-query-result>`.
//! Read as the bytes arrive (`xml_stream.rs`, over quick-xml), its
//! elements gathered with their `id`/`ref` back-references (`rows.rs`);
//! the samples go into the tables in time order when the trace ends
//! (`import.rs`). Sample times are the export's own (ns from the
//! recording's start): a file on its own is its own timeline, as upstream
//! makes it; in an archive whose protobuf trace claimed BOOTTIME, the
//! `dev.perfetto.clock_sync` signposts of the points-of-interest table
//! place them on BOOTTIME (`clock_sync.rs`). XML that does not read ends the load with an error, as
//! upstream's does. Tests over exports written from the format's
//! description: `tests/all/instruments_xml.rs`.

pub mod clock_sync;
mod import;
mod rows;
pub mod xml_stream;

use crate::error::TraceError;
use crate::parser::Parser;

use super::reader::FormatReader;
use rows::{Feed, RowData};
use xml_stream::{XmlError, XmlStream};

/// How an export opens.
pub const HEAD: &[u8] = b"<?xml version=\"1.0\"?>\n<trace-query-result>";

/// The format's name in errors.
const FORMAT: &str = "instruments_xml";

/// Whether `head` opens an Instruments XML export.
pub fn sniff(head: &[u8]) -> bool {
    head.starts_with(HEAD)
}

/// The streaming reader.
#[derive(Debug, Default)]
pub struct InstrumentsLoad {
    xml: XmlStream,
    data: RowData,
}

fn malformed(e: &XmlError) -> TraceError {
    let offset = match e {
        XmlError::Syntax { offset, .. }
        | XmlError::Mismatched { offset, .. }
        | XmlError::AfterRoot { offset }
        | XmlError::UndefinedEntity { offset, .. }
        | XmlError::TooLarge { offset, .. } => *offset,
        XmlError::Unfinished(_) => 0,
    };
    TraceError::Malformed {
        format: FORMAT,
        offset,
        message: e.to_string(),
    }
}

impl InstrumentsLoad {
    /// A number that did not read, as an error.
    fn check(&self) -> Result<(), TraceError> {
        match &self.data.failed {
            Some((offset, message)) => Err(TraceError::Malformed {
                format: FORMAT,
                offset: *offset,
                message: message.clone(),
            }),
            None => Ok(()),
        }
    }
}

impl FormatReader for InstrumentsLoad {
    fn push(&mut self, p: &mut Parser, data: &[u8]) -> Result<(), TraceError> {
        let mut feed = Feed {
            data: &mut self.data,
            p,
        };
        let res = self.xml.push(data, &mut feed).map_err(|e| malformed(&e));
        // A number that did not read comes first: it stopped the reading.
        self.check()?;
        res
    }

    fn held_bytes(&self) -> u64 {
        self.xml.held_bytes().saturating_add(self.data.held_bytes())
    }

    fn on_boottime_timeline(&mut self, boottime: u64) {
        self.data.clock.place_on_boottime(boottime);
    }

    fn finish(mut self: Box<Self>, p: &mut Parser) -> Result<(), TraceError> {
        let mut feed = Feed {
            data: &mut self.data,
            p,
        };
        let res = self.xml.finish(&mut feed).map_err(|e| malformed(&e));
        self.check()?;
        res?;
        import::import(p, &mut self.data);
        Ok(())
    }
}

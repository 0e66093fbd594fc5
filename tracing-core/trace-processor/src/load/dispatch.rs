//! Which reader the loader's bytes go to: the trace's first bytes are held
//! until its format can be told (`format.rs`), then every push goes to the
//! protobuf loading core or to the reader of the text or other format, and
//! `finish` ends that reader. Kept apart from the protobuf core so that a
//! new format is one variant and one arm here.

use super::reader::FormatReader;
use super::{Loader, dumpstate, format, gecko, json, pprof, simpleperf, strace, systrace};
use crate::error::TraceError;

/// What the loader found the trace to be (`format.rs`).
#[derive(Debug)]
pub(super) enum Content {
    /// Its first bytes, until there are enough to tell.
    Sniffing(Vec<u8>),
    /// A protobuf `Trace`: the loading core in `mod.rs`.
    Proto,
    /// Chrome JSON.
    Json(Box<json::JsonLoad>),
    /// Systrace text.
    Systrace(Box<systrace::SystraceLoad>),
    /// Any other format's reader.
    Other(Box<dyn FormatReader>),
    /// A zip or tar archive of traces, or a manifest alone, held until the
    /// trace ends (`archive/`).
    Archive(Box<super::archive::ArchiveLoad>),
}

impl Loader {
    /// Feeds the next bytes of the trace.
    pub fn push(&mut self, data: &[u8]) -> Result<(), TraceError> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        match &mut self.content {
            Content::Proto => self.push_proto(data),
            Content::Json(_) | Content::Systrace(_) | Content::Other(_) => self.push_text(data),
            Content::Archive(a) => {
                a.push(data);
                self.bytes_pushed += data.len() as u64;
                // The archive's own bytes are taken in too (listing its
                // members is work on them), besides what its members
                // give when they are read at the end.
                self.parser.storage.work.take(data.len() as u64);
                self.identity.on_bytes(data);
                let res = self.budget.check_bytes(a.held_bytes());
                if let Err(e) = &res {
                    self.failed = Some(e.clone());
                }
                res
            }
            Content::Sniffing(head) => {
                let waited = head.len() >= format::TAR_LOOKAHEAD;
                head.extend_from_slice(data);
                if head.len() < format::TAR_LOOKAHEAD {
                    return Ok(());
                }
                // Text that no format fits yet waits for its first line
                // break; only a push bringing one (or the limit) is looked
                // at again, so that waiting costs no scan per push.
                let still_waiting =
                    waited && head.len() < format::TEXT_LOOKAHEAD && !data.contains(&b'\n');
                if still_waiting || format::wants_a_line(head) {
                    return Ok(());
                }
                self.told()
            }
        }
    }

    /// Tells the format from the bytes held, and feeds them to its reader.
    pub(super) fn told(&mut self) -> Result<(), TraceError> {
        let Content::Sniffing(head) = std::mem::replace(&mut self.content, Content::Proto) else {
            return Ok(());
        };
        let told = format::sniff(&head);
        if let Ok(f) = told {
            self.archive.first_format.get_or_insert(f);
        }
        match told {
            Ok(format::Format::Json) => {
                self.content = Content::Json(Box::default());
                if self.archive.members_started <= 1 {
                    self.no_swapper();
                }
                self.push_text(&head)
            }
            Ok(format::Format::Systrace) => {
                self.content = Content::Systrace(Box::default());
                self.push_text(&head)
            }
            Ok(format::Format::Zip | format::Format::Tar | format::Format::Manifest)
                if self.archive.active =>
            {
                let e = TraceError::Archive {
                    message: "an archive or manifest inside an archive is not read".into(),
                };
                self.failed = Some(e.clone());
                Err(e)
            }
            Ok(format::Format::Zip) => self.hold_archive(Some(super::archive::Kind::Zip), head),
            Ok(format::Format::Tar) => self.hold_archive(Some(super::archive::Kind::Tar), head),
            Ok(format::Format::Manifest) => self.hold_archive(None, head),
            Ok(format::Format::Strace) => {
                self.content = Content::Other(Box::<strace::StraceLoad>::default());
                self.push_text(&head)
            }
            Ok(format::Format::Fuchsia) => {
                self.content = Content::Other(Box::<super::fuchsia::FuchsiaLoad>::default());
                self.push_text(&head)
            }
            Ok(format::Format::ArtMethod) => {
                self.content = Content::Other(Box::<super::art_method::ArtMethodLoad>::default());
                self.push_text(&head)
            }
            Ok(format::Format::Simpleperf) => {
                self.content = Content::Other(Box::<simpleperf::SimpleperfLoad>::default());
                self.push_text(&head)
            }
            Ok(format::Format::Gecko) => {
                self.content = Content::Other(Box::<gecko::GeckoLoad>::default());
                self.push_text(&head)
            }
            Ok(format::Format::Pprof) => {
                self.content = Content::Other(Box::<pprof::PprofLoad>::default());
                self.push_text(&head)
            }
            Ok(format::Format::PerfText) => {
                self.content = Content::Other(Box::<super::perf_text::PerfTextLoad>::default());
                self.push_text(&head)
            }
            Ok(format::Format::CollapsedStack) => {
                self.content =
                    Content::Other(Box::<super::collapsed_stack::CollapsedStackLoad>::default());
                self.push_text(&head)
            }
            Ok(format::Format::InstrumentsXml) => {
                self.content =
                    Content::Other(Box::<super::instruments::InstrumentsLoad>::default());
                self.push_text(&head)
            }
            Ok(format::Format::Dumpstate) => {
                self.content = Content::Other(Box::<dumpstate::DumpstateLoad>::default());
                self.push_text(&head)
            }
            Ok(format::Format::Proto) => self.push_proto(&head),
            Err(seen) => {
                let e = TraceError::UnknownFormat { seen };
                self.failed = Some(e.clone());
                Err(e)
            }
        }
    }

    /// A trace in which pid 0 and tid 0 are no swapper (JSON and the
    /// profilers' formats): the trackers start without it.
    fn no_swapper(&mut self) {
        self.parser.processes = crate::tracker::process::ProcessTracker::default();
        if let Some(t) = self.parser.storage.threads.get_mut(0) {
            t.name = crate::column_store::strings::StrId::NULL;
        }
    }

    /// Feeds a text format's reader.
    fn push_text(&mut self, data: &[u8]) -> Result<(), TraceError> {
        self.bytes_pushed += data.len() as u64;
        self.parser.storage.work.take(data.len() as u64);
        self.identity.on_bytes(data);
        let res = match &mut self.content {
            Content::Json(j) => j.push(&mut self.parser, data).and_then(|()| {
                let taken = self.bytes_pushed.saturating_add(j.held_bytes());
                self.budget.check_bytes(taken)
            }),
            Content::Systrace(t) => {
                t.push(&mut self.parser, data);
                let taken = self.bytes_pushed.saturating_add(t.held_bytes());
                self.budget.check_bytes(taken)
            }
            Content::Other(r) => r.push(&mut self.parser, data).and_then(|()| {
                let taken = self.bytes_pushed.saturating_add(r.held_bytes());
                self.budget.check_bytes(taken)
            }),
            Content::Sniffing(_) | Content::Proto | Content::Archive(_) => Ok(()),
        };
        let res = res.and_then(|()| match &mut self.content {
            Content::Other(r) => {
                let embedded = r.take_embedded_proto();
                if embedded.is_empty() {
                    Ok(())
                } else {
                    self.push_embedded(&embedded)
                }
            }
            _ => Ok(()),
        });
        if let Err(e) = &res {
            self.failed = Some(e.clone());
        }
        res
    }

    /// Protobuf trace bytes carried inside another format: their packets
    /// go through the protobuf core's tokenizer and sort window, as a
    /// protobuf trace's do (the bytes were counted as the format's own).
    fn push_embedded(&mut self, data: &[u8]) -> Result<(), TraceError> {
        let mut tokenizer = std::mem::take(&mut self.tokenizer);
        let res = tokenizer.push_at(data, &mut |p, at| self.on_top_packet(p, at));
        self.tokenizer = tokenizer;
        res?;
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        self.check_budget()
    }

    /// Ends a reader other than the protobuf core: its result, or `None`
    /// for a protobuf trace.
    pub(super) fn finish_text(&mut self) -> Option<Result<(), TraceError>> {
        match std::mem::replace(&mut self.content, Content::Proto) {
            Content::Json(j) => Some(j.finish(&mut self.parser)),
            Content::Systrace(t) => {
                let lines = t.finish(&mut self.parser);
                systrace::import(&mut self.parser, &lines);
                Some(Ok(()))
            }
            Content::Other(r) => {
                // A format that carried protobuf packets ends through the
                // protobuf core too, which parses them (None).
                let carried = r.embedded_proto_bytes() > 0;
                match r.finish(&mut self.parser) {
                    Ok(()) if carried => None,
                    res => Some(res),
                }
            }
            Content::Sniffing(_) | Content::Proto | Content::Archive(_) => None,
        }
    }

    /// Holds an archive's bytes (or a manifest's) until the trace ends.
    fn hold_archive(
        &mut self,
        kind: Option<super::archive::Kind>,
        head: Vec<u8>,
    ) -> Result<(), TraceError> {
        self.content =
            Content::Archive(Box::new(super::archive::ArchiveLoad::new(kind, Vec::new())));
        self.push(&head)
    }
}

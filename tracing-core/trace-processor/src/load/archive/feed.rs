//! An archive's members loaded one after the other into the loader, onto
//! one timeline: each member's bytes are streamed from the archive (a
//! deflated or gzip member inflated as it is pushed, so no member is held
//! decompressed beside the archive), the member's reader is ended before
//! the next starts, and what is per file (the protobuf framing, sequence
//! state) starts afresh while the sort window, clocks, machines and tables
//! are shared. The inflated bytes are held to the load's budget and its
//! ratio against the archive's size.

use std::io::Read;

use super::ArchiveLoad;
use super::container::{Archive, Kind, Member, is_hidden};
use super::manifest::{self, Manifest};
use crate::clock::{BOOTTIME, machine_clock};
use crate::error::TraceError;
use crate::load::dispatch::Content;
use crate::load::{Loader, format};
use crate::tables::trace_file::TraceFileRow;

/// Bytes of a member read to tell its format.
const HEAD: usize = 512;
/// Bytes pushed at a time.
const CHUNK: usize = 1 << 20;

/// What a member is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum MemberType {
    /// A trace manifest.
    Manifest,
    /// A trace, maybe gzip-compressed.
    Trace { format: format::Format, gzip: bool },
    /// An archive inside the archive.
    Archive(Kind),
}

impl MemberType {
    /// Upstream's reading order (lower first): the manifest, protobuf
    /// traces, containers, the rest.
    fn priority(self) -> i32 {
        match self {
            MemberType::Manifest => -1,
            MemberType::Trace { gzip: true, .. } | MemberType::Archive(_) => 1,
            MemberType::Trace {
                format: format::Format::Proto,
                ..
            } => 0,
            MemberType::Trace { .. } => 2,
        }
    }

    /// Its `trace_type`.
    fn name(self) -> String {
        match self {
            MemberType::Manifest => "perfetto_manifest".to_string(),
            MemberType::Archive(k) => k.name().to_string(),
            MemberType::Trace { gzip: true, .. } => "gzip".to_string(),
            MemberType::Trace { format, .. } => format_name(format),
        }
    }
}

/// A format's `trace_type`, as upstream names it (the format's name in
/// lower case, the manifest's `perfetto_manifest`).
pub(crate) fn format_name(f: format::Format) -> String {
    match f {
        format::Format::Manifest => "perfetto_manifest".to_string(),
        format::Format::PerfText => "perf_text".to_string(),
        format::Format::CollapsedStack => "collapsed_stack".to_string(),
        format::Format::InstrumentsXml => "instruments_xml".to_string(),
        other => format!("{other:?}").to_ascii_lowercase(),
    }
}

/// The type of a member starting with `head` (inflated when gzip).
fn member_type(head: &[u8], gzip: bool) -> Result<MemberType, String> {
    Ok(match format::sniff(head)? {
        format::Format::Manifest => MemberType::Manifest,
        format::Format::Zip => MemberType::Archive(Kind::Zip),
        format::Format::Tar => MemberType::Archive(Kind::Tar),
        format => MemberType::Trace { format, gzip },
    })
}

/// Reads up to [`HEAD`] bytes.
fn read_head(mut r: impl Read) -> std::io::Result<Vec<u8>> {
    let mut head = Vec::with_capacity(HEAD);
    r.by_ref().take(HEAD as u64).read_to_end(&mut head)?;
    Ok(head)
}

fn io_error(member: &str, e: std::io::Error) -> TraceError {
    TraceError::Archive {
        message: format!("member {member:?}: {e}"),
    }
}

/// A member to load, in reading order.
#[derive(Debug)]
struct Entry {
    priority: i32,
    member: Member,
    file_id: u32,
    ty: MemberType,
}

impl Loader {
    /// Appends a `trace_file` row, its id.
    pub(crate) fn add_trace_file(
        &mut self,
        parent: Option<u32>,
        name: Option<&str>,
        size: u64,
    ) -> u32 {
        let storage = &mut self.parser.storage;
        let id = u32::try_from(storage.trace_files.len()).unwrap_or(u32::MAX);
        let name = storage.strings.intern_opt(name);
        let trace_type = storage.strings.intern("unknown");
        storage.trace_files.push(TraceFileRow {
            parent_id: parent,
            name,
            size: i64::try_from(size).unwrap_or(i64::MAX),
            trace_type,
            processing_order: None,
            is_container: 0,
        });
        id
    }

    /// Marks a `trace_file` row as read now, with its type.
    pub(crate) fn start_trace_file(&mut self, id: u32, trace_type: &str, container: bool) {
        let storage = &mut self.parser.storage;
        let order = storage
            .trace_files
            .iter()
            .filter(|f| f.processing_order.is_some())
            .count() as i64;
        let trace_type = storage.strings.intern(trace_type);
        if let Some(f) = storage.trace_files.get_mut(id as usize) {
            f.trace_type = trace_type;
            f.processing_order = Some(order);
            f.is_container = u32::from(container);
        }
    }

    fn set_trace_file_size(&mut self, id: u32, size: u64) {
        if let Some(f) = self.parser.storage.trace_files.get_mut(id as usize) {
            f.size = i64::try_from(size).unwrap_or(i64::MAX);
        }
    }

    /// The `trace_file` row of a trace that is no archive: the whole file.
    pub(crate) fn root_trace_file(&mut self) {
        if !self.parser.storage.trace_files.is_empty() {
            return;
        }
        let format = self.archive.first_format.unwrap_or(format::Format::Proto);
        let root = self.add_trace_file(None, None, self.bytes_pushed);
        self.start_trace_file(root, &format_name(format), false);
    }

    /// At the end of the trace, when it is an archive (or a manifest
    /// alone): loads its members; whether it was one.
    pub(crate) fn finish_archive(&mut self) -> Result<bool, TraceError> {
        if !matches!(self.content, Content::Archive(_)) {
            return Ok(false);
        }
        let Content::Archive(load) =
            std::mem::replace(&mut self.content, Content::Sniffing(Vec::new()))
        else {
            return Ok(false);
        };
        self.load_archive(*load)?;
        Ok(true)
    }

    fn load_archive(&mut self, load: ArchiveLoad) -> Result<(), TraceError> {
        let ArchiveLoad { kind, bytes } = load;
        let Some(kind) = kind else {
            // A manifest on its own: read and applied, with nothing to merge.
            let root = self.add_trace_file(None, None, bytes.len() as u64);
            self.start_trace_file(root, "perfetto_manifest", false);
            let m = manifest::parse(&bytes)?;
            self.apply_manifest(&m);
            return Ok(());
        };
        self.archive.active = true;
        let identity = self.identity.clone();
        let root = self.add_trace_file(None, None, bytes.len() as u64);
        self.start_trace_file(root, kind.name(), true);
        let mut archive = Archive::open(kind, &bytes)?;
        let mut entries = Vec::new();
        for member in archive.members()? {
            if is_hidden(&member.name) {
                continue;
            }
            let file_id = self.add_trace_file(Some(root), Some(&member.name), member.stored_size);
            let head = read_head(archive.read(&member)?).map_err(|e| io_error(&member.name, e))?;
            let gzip = head.starts_with(&[0x1f, 0x8b]);
            let head = if gzip {
                read_head(flate2::read::MultiGzDecoder::new(archive.read(&member)?))
                    .map_err(|e| io_error(&member.name, e))?
            } else {
                head
            };
            let ty = member_type(&head, gzip).map_err(|seen| TraceError::Archive {
                message: format!("member {:?}: unknown trace format: {seen}", member.name),
            })?;
            entries.push(Entry {
                priority: ty.priority(),
                member,
                file_id,
                ty,
            });
        }
        entries.sort_by(|a, b| {
            (a.priority, &a.member.name, a.member.index).cmp(&(
                b.priority,
                &b.member.name,
                b.member.index,
            ))
        });
        let mut manifest: Option<Manifest> = None;
        let archive_len = bytes.len() as u64;
        let mut inflated = 0u64;
        for e in &entries {
            match e.ty {
                MemberType::Archive(k) => {
                    return Err(TraceError::Archive {
                        message: format!(
                            "member {:?} is itself a {} archive: nested archives are not read",
                            e.member.name,
                            k.name()
                        ),
                    });
                }
                MemberType::Manifest => {
                    if manifest.is_some() {
                        return Err(TraceError::Manifest {
                            message: "multiple perfetto_manifest files in archive".into(),
                        });
                    }
                    self.start_trace_file(e.file_id, &e.ty.name(), false);
                    let mut text = Vec::new();
                    archive
                        .read(&e.member)?
                        .take(manifest::MAX_MANIFEST_BYTES + 1)
                        .read_to_end(&mut text)
                        .map_err(|err| io_error(&e.member.name, err))?;
                    if text.len() as u64 > manifest::MAX_MANIFEST_BYTES {
                        return Err(TraceError::Manifest {
                            message: format!("more than {} bytes", manifest::MAX_MANIFEST_BYTES),
                        });
                    }
                    self.set_trace_file_size(e.file_id, text.len() as u64);
                    let m = manifest::parse(&text)?;
                    self.apply_manifest(&m);
                    manifest = Some(m);
                }
                MemberType::Trace { format, gzip } => {
                    let entry = manifest.as_ref().and_then(|m| m.entry(&e.member.name));
                    self.begin_member(entry, manifest.as_ref(), format);
                    let mut file_id = e.file_id;
                    self.start_trace_file(file_id, &e.ty.name(), gzip);
                    let reader = archive.read(&e.member)?;
                    let mut reader: Box<dyn Read + '_> = if gzip {
                        file_id = self.add_trace_file(Some(file_id), Some(""), 0);
                        self.start_trace_file(file_id, &format_name(format), false);
                        Box::new(flate2::read::MultiGzDecoder::new(reader))
                    } else {
                        reader
                    };
                    let mut buf = vec![0u8; CHUNK];
                    let mut size = 0u64;
                    loop {
                        let n = reader
                            .read(&mut buf)
                            .map_err(|err| io_error(&e.member.name, err))?;
                        if n == 0 {
                            break;
                        }
                        size += n as u64;
                        inflated += n as u64;
                        self.budget.check_ratio(inflated, archive_len)?;
                        self.push(buf.get(..n).unwrap_or_default())?;
                    }
                    drop(reader);
                    self.set_trace_file_size(file_id, size);
                    let pin = manifest
                        .as_ref()
                        .and_then(|m| super::clocks::pin_of(self, m, &e.member.name));
                    self.end_member(pin)?;
                }
            }
        }
        self.archive.fixed_machine = None;
        self.archive.remap = None;
        self.set_machine_of_text(0);
        self.identity = identity;
        Ok(())
    }

    /// The manifest's machines and trace clock, before any trace member.
    fn apply_manifest(&mut self, m: &Manifest) {
        self.archive.pins.clear();
        for f in &m.files {
            if let Some(name) = &f.machine {
                self.named_machine(name);
            }
            for (_, name) in &f.machines {
                self.named_machine(name);
            }
        }
        for (k, v) in &m.attributes {
            let key = format!("manifest_attribute.{k}");
            match v {
                manifest::Attribute::Int(i) => self.parser.storage.set_metadata_int(&key, *i),
                manifest::Attribute::Str(s) => self.parser.storage.set_metadata_str(&key, s),
            }
        }
        if let Some(tt) = &m.trace_time {
            let machine = tt
                .file
                .as_deref()
                .map_or(0, |f| self.machine_of_file(m, f, tt.machine.as_deref()));
            self.parser
                .clocks
                .set_trace_clock(machine_clock(tt.clock, machine));
            self.archive.default_clock = Some(BOOTTIME);
        }
        super::clocks::relate(self, m);
    }

    /// The machine index of a manifest machine name, made on first use
    /// with a synthetic raw id past the 32-bit ids packets embed.
    pub(crate) fn named_machine(&mut self, name: &str) -> u32 {
        if let Some(i) = self.archive.named.get(name) {
            return *i;
        }
        let i = u32::try_from(self.machines.len()).unwrap_or(u32::MAX);
        let raw = (1i64 << 32) + self.archive.named.len() as i64;
        self.machines.push(raw);
        self.machine_ids.insert(raw, i);
        let name_id = self.parser.storage.strings.intern(name);
        self.parser
            .storage
            .machines
            .push(crate::storage::rows::MachineRow {
                raw_id: raw,
                name: name_id,
                ..Default::default()
            });
        self.archive.named.insert(name.to_string(), i);
        i
    }

    /// The machine of a file the manifest lists (`machine` names one of a
    /// multi-machine file's machines); the host when it says none.
    pub(crate) fn machine_of_file(&self, m: &Manifest, file: &str, machine: Option<&str>) -> u32 {
        let Some(entry) = m.entry(file) else {
            return 0;
        };
        if let Some(name) = machine {
            return self.archive.named.get(name).copied().unwrap_or(0);
        }
        if let Some(name) = &entry.machine {
            return self.archive.named.get(name).copied().unwrap_or(0);
        }
        entry
            .machines
            .iter()
            .find(|(id, _)| *id == 0)
            .and_then(|(_, n)| self.archive.named.get(n).copied())
            .unwrap_or(0)
    }

    /// Sets the machine text formats' rows go to.
    fn set_machine_of_text(&mut self, machine: u32) {
        self.parser.machine = machine;
        self.parser.processes.set_machine(machine);
        self.parser.tracks.set_machine(machine);
    }

    /// Gets ready to read the next member: its machines as the manifest
    /// says, and the trace clock claimed by the first protobuf member's
    /// machine when nothing chose it.
    fn begin_member(
        &mut self,
        entry: Option<&manifest::FileEntry>,
        manifest: Option<&Manifest>,
        format: format::Format,
    ) {
        self.archive.members_started += 1;
        self.archive.fixed_machine = entry
            .and_then(|e| e.machine.as_deref())
            .and_then(|n| self.archive.named.get(n).copied());
        self.archive.remap = entry.filter(|e| !e.machines.is_empty()).map(|e| {
            e.machines
                .iter()
                .map(|(id, n)| {
                    (
                        i64::from(*id),
                        self.archive.named.get(n).copied().unwrap_or(0),
                    )
                })
                .collect()
        });
        let base = self.archive.machine_for(0).unwrap_or(0);
        self.set_machine_of_text(base);
        let chosen = manifest.is_some_and(|m| m.trace_time.is_some());
        if format == format::Format::Proto && !chosen && !self.archive.clock_claimed {
            self.archive.clock_claimed = true;
            self.parser
                .clocks
                .set_trace_clock(machine_clock(BOOTTIME, base));
        }
    }

    /// Ends the member read: its reader finishes into the tables (a text
    /// format's times placed on the timeline by `pin`, else by its own
    /// clock), and what is per file starts afresh for the next.
    fn end_member(&mut self, pin: Option<super::clocks::Pin>) -> Result<(), TraceError> {
        if matches!(self.content, Content::Sniffing(_)) {
            self.told()?;
        }
        match std::mem::replace(&mut self.content, Content::Sniffing(Vec::new())) {
            Content::Json(mut j) => {
                let base = self.parser.machine;
                j.map_times(&mut |ts| super::clocks::text_time(self, pin, None, base, ts));
                j.finish(&mut self.parser)?;
            }
            Content::Systrace(t) => {
                let mut lines = t.finish(&mut self.parser);
                let base = self.parser.machine;
                for l in &mut lines {
                    l.ts = super::clocks::text_time(self, pin, Some(3), base, l.ts);
                }
                crate::load::systrace::import(&mut self.parser, &lines);
            }
            Content::Other(mut r) => {
                if self.archive.clock_claimed {
                    let boottime = machine_clock(BOOTTIME, self.parser.machine);
                    r.on_boottime_timeline(boottime);
                }
                r.finish(&mut self.parser)?;
            }
            Content::Proto => {
                if self.tokenizer.pending_len() > 0 {
                    self.parser.storage.stats.incr("tokenizer_skipped_packets");
                }
                self.tokenizer = Default::default();
                self.sequences = Default::default();
                self.ftrace_clock_ts = None;
            }
            Content::Sniffing(_) | Content::Archive(_) => {}
        }
        if let Some(e) = self.failed.take() {
            return Err(e);
        }
        Ok(())
    }
}

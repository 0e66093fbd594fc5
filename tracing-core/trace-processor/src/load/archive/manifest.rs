//! The trace manifest (`perfetto_manifest`): a JSON member of an archive
//! saying how the other members merge onto one timeline: which machine
//! each file belongs to (`machine`, or `machines` renaming the ids a
//! multi-machine trace embeds), which clock is the merged timeline
//! (`trace_time`), how a file's clock relates to another file's
//! (`clocks`: `sync_to` and `offset_ns`) and attributes of the archive.
//! Read here into typed values and checked in full before any trace
//! member is read, as upstream checks it; what the format means is
//! upstream's (docs/reference/perfetto-manifest.md), the reading is ours.

use serde_json::Value;

use crate::error::TraceError;

/// Most bytes a manifest may have.
pub const MAX_MANIFEST_BYTES: u64 = 16 << 20;

/// The builtin clocks a manifest may name, with their ids.
const CLOCKS: [(&str, u64); 6] = [
    ("REALTIME", 1),
    ("REALTIME_COARSE", 2),
    ("MONOTONIC", 3),
    ("MONOTONIC_COARSE", 4),
    ("MONOTONIC_RAW", 5),
    ("BOOTTIME", 6),
];

/// A manifest, read and checked.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Manifest {
    /// The clock of the merged timeline.
    pub trace_time: Option<TraceTime>,
    /// What each listed file gets.
    pub files: Vec<FileEntry>,
    /// `manifest_attribute.<key>` metadata, in order (the last of a key wins).
    pub attributes: Vec<(String, Attribute)>,
    /// Each path's first entry in `files`, so that a lookup per member
    /// does not scan a list the manifest makes as long as it likes.
    by_path: crate::hash::HashMap<String, usize>,
}

/// `trace_time`: the clock that becomes the timeline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceTime {
    /// The builtin clock's id.
    pub clock: u64,
    /// The file whose machine owns the clock (else the host).
    pub file: Option<String>,
    /// Which machine of that multi-machine file.
    pub machine: Option<String>,
}

/// One entry of `files`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileEntry {
    /// The member's path.
    pub path: String,
    /// `machine.name`: the whole file on this named machine.
    pub machine: Option<String>,
    /// `machines`: embedded machine id → name.
    pub machines: Vec<(u32, String)>,
    /// `clocks`: this file's clock related to another file's.
    pub clocks: Option<ClockOverride>,
}

/// `clocks` of a file entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClockOverride {
    /// The file's own clock related (None: the file is clockless and its
    /// own timeline is pinned to the reference).
    pub clock: Option<u64>,
    /// Which of a multi-machine file's machines owns that clock.
    pub machine: Option<String>,
    /// The reference file.
    pub sync_file: String,
    /// Which of the reference file's machines.
    pub sync_machine: Option<String>,
    /// The reference clock (None: the reference file's own timeline).
    pub sync_clock: Option<u64>,
    /// At one instant the source reads T and the reference T + offset.
    pub offset_ns: i64,
}

/// An attribute's value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Attribute {
    /// An integer.
    Int(i64),
    /// A string.
    Str(String),
}

fn error(message: impl Into<String>) -> TraceError {
    TraceError::Manifest {
        message: message.into(),
    }
}

/// Whether a trace's first bytes (after whitespace) open a manifest.
pub fn sniff(head: &[u8]) -> bool {
    let start = head
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(head.len());
    head.get(start..)
        .is_some_and(|h| h.starts_with(b"{\"perfetto_manifest\""))
}

/// The id of a clock name.
fn clock(v: &Value, what: &str) -> Result<u64, TraceError> {
    let name = v
        .as_str()
        .ok_or_else(|| error(format!("{what} must be a clock name")))?;
    CLOCKS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, id)| *id)
        .ok_or_else(|| {
            let names: Vec<&str> = CLOCKS.iter().map(|(n, _)| *n).collect();
            error(format!(
                "unknown clock name: {name}. Use one of {}",
                names.join(", ")
            ))
        })
}

fn string(v: Option<&Value>, what: &str) -> Result<Option<String>, TraceError> {
    match v {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(error(format!("{what} must be a string"))),
    }
}

fn machine_name(v: &Value, what: &str) -> Result<String, TraceError> {
    match v.get("name") {
        Some(Value::String(s)) if !s.is_empty() => Ok(s.clone()),
        _ => Err(error(format!("{what}: name must be non-empty"))),
    }
}

/// Reads and checks a manifest.
pub fn parse(bytes: &[u8]) -> Result<Manifest, TraceError> {
    let doc: Value =
        serde_json::from_slice(bytes).map_err(|e| error(format!("not valid JSON: {e}")))?;
    let root = doc
        .get("perfetto_manifest")
        .filter(|v| v.is_object())
        .ok_or_else(|| error("perfetto_manifest must be an object"))?;
    match root.get("version") {
        None => return Err(error("missing required field: version")),
        Some(v) if v.as_i64() == Some(1) => {}
        Some(v) => {
            return Err(error(format!(
                "unsupported version: {v}. Only version 1 is supported"
            )));
        }
    }
    let mut m = Manifest::default();
    if let Some(tt) = root.get("trace_time") {
        let c = tt
            .get("clock")
            .ok_or_else(|| error("trace_time: clock is required"))?;
        let machine = string(tt.get("machine"), "trace_time.machine")?;
        let file = string(tt.get("file"), "trace_time.file")?;
        if machine.is_some() && file.is_none() {
            return Err(error("trace_time: a machine needs the file named too"));
        }
        m.trace_time = Some(TraceTime {
            clock: clock(c, "trace_time.clock")?,
            file,
            machine,
        });
    }
    if let Some(files) = root.get("files") {
        let files = files
            .as_array()
            .ok_or_else(|| error("files must be an array"))?;
        for f in files {
            let entry = file_entry(f)?;
            m.by_path.entry(entry.path.clone()).or_insert(m.files.len());
            m.files.push(entry);
        }
    }
    if let Some(attrs) = root.get("attributes") {
        let obj = attrs
            .as_object()
            .ok_or_else(|| error("attributes must be an object of string or integer values"))?;
        for (k, v) in obj {
            if k.is_empty() {
                return Err(error("attributes: keys must be non-empty"));
            }
            let value = match v {
                Value::String(s) => Attribute::Str(s.clone()),
                Value::Number(n) if n.as_i64().is_some() => Attribute::Int(n.as_i64().unwrap_or(0)),
                _ => {
                    return Err(error(format!(
                        "attributes: '{k}' must be a string or an integer"
                    )));
                }
            };
            m.attributes.push((k.clone(), value));
        }
    }
    check_references(&m)?;
    Ok(m)
}

fn file_entry(f: &Value) -> Result<FileEntry, TraceError> {
    let path =
        string(f.get("path"), "files[].path")?.ok_or_else(|| error("files[]: path is required"))?;
    let mut e = FileEntry {
        path,
        ..FileEntry::default()
    };
    if f.get("machine").is_some() && f.get("machines").is_some() {
        return Err(error("machine and machines are mutually exclusive"));
    }
    if let Some(mv) = f.get("machine") {
        e.machine = Some(machine_name(mv, "machine")?);
    }
    if let Some(ms) = f.get("machines") {
        let ms = ms
            .as_array()
            .ok_or_else(|| error("machines must be an array"))?;
        for mv in ms {
            let id = mv
                .get("id")
                .and_then(Value::as_i64)
                .and_then(|i| u32::try_from(i).ok())
                .ok_or_else(|| error("machines: id must be in [0, 4294967295]"))?;
            e.machines.push((id, machine_name(mv, "machines")?));
        }
    }
    if let Some(c) = f.get("clocks") {
        let sync = c
            .get("sync_to")
            .ok_or_else(|| error("clocks: a sync_to block is required"))?;
        let sync_file = string(sync.get("file"), "clocks: sync_to.file")?;
        let sync_machine = string(sync.get("machine"), "clocks: sync_to.machine")?;
        let Some(sync_file) = sync_file else {
            return Err(error(if sync_machine.is_some() {
                "clocks: a machine name alone is ambiguous, name the file too"
            } else {
                "clocks: sync_to.file is required"
            }));
        };
        let offset_ns = match c.get("offset_ns") {
            None => 0,
            Some(Value::Number(n)) => match n.as_i64() {
                Some(i64::MIN) => return Err(error("offset_ns is out of range")),
                Some(i) => i,
                None => return Err(error("offset_ns must be an integer")),
            },
            Some(_) => return Err(error("offset_ns must be an integer")),
        };
        e.clocks = Some(ClockOverride {
            clock: c
                .get("clock")
                .map(|v| clock(v, "clocks.clock"))
                .transpose()?,
            machine: string(c.get("machine"), "clocks.machine")?,
            sync_file,
            sync_machine,
            sync_clock: sync
                .get("clock")
                .map(|v| clock(v, "clocks: sync_to.clock"))
                .transpose()?,
            offset_ns,
        });
    }
    Ok(e)
}

/// Files and machines named by `trace_time` and `clocks` must be declared.
fn check_references(m: &Manifest) -> Result<(), TraceError> {
    let entry = |path: &str| m.entry(path);
    let machine_of = |file: &str, machine: &Option<String>, what: &str| -> Result<(), TraceError> {
        let Some(f) = entry(file) else {
            return Err(error(format!(
                "{what} names unknown file '{file}'. It must match the path of an entry in the files array"
            )));
        };
        match machine {
            None if !f.machines.is_empty() => Err(error(format!(
                "'{file}' is a multi-machine trace; also name the machine"
            ))),
            // A file's own `machine` or one of its `machines` may be named.
            Some(name)
                if f.machine.as_ref() != Some(name)
                    && !f.machines.iter().any(|(_, n)| n == name) =>
            {
                Err(error(format!(
                    "'{name}' is not a machine declared by file '{file}'"
                )))
            }
            _ => Ok(()),
        }
    };
    if let Some(TraceTime {
        file: Some(file),
        machine,
        ..
    }) = &m.trace_time
    {
        machine_of(file, machine, "trace_time.file")?;
    }
    for f in &m.files {
        let Some(c) = &f.clocks else { continue };
        machine_of(&c.sync_file, &c.sync_machine, "sync_to.file")?;
        if !f.machines.is_empty() && c.machine.is_none() {
            return Err(error(format!(
                "file '{}' is a multi-machine trace; name which machine the clock is on",
                f.path
            )));
        }
    }
    Ok(())
}

impl Manifest {
    /// The entry of the member at `path`.
    pub fn entry(&self, path: &str) -> Option<&FileEntry> {
        match self.by_path.get(path) {
            Some(&i) => self.files.get(i),
            // Built by hand, not read: no index.
            None if self.by_path.is_empty() => self.files.iter().find(|f| f.path == path),
            None => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_manifest_reads_into_machines_clocks_and_attributes() {
        let m = parse(
            br#"{"perfetto_manifest": {"version": 1,
                "trace_time": {"clock": "REALTIME"},
                "files": [
                  {"path": "a.pb", "machines": [{"id": 0, "name": "p"}, {"id": 7, "name": "vm"}]},
                  {"path": "b.json", "machine": {"name": "s"},
                   "clocks": {"offset_ns": -5, "sync_to": {"file": "a.pb", "machine": "vm", "clock": "BOOTTIME"}}}],
                "attributes": {"run": 42, "name": "x"}}}"#,
        )
        .unwrap();
        assert_eq!(m.trace_time.as_ref().map(|t| t.clock), Some(1));
        assert_eq!(m.files[0].machines, vec![(0, "p".into()), (7, "vm".into())]);
        let c = m.entry("b.json").and_then(|f| f.clocks.clone()).unwrap();
        assert_eq!((c.clock, c.sync_clock, c.offset_ns), (None, Some(6), -5));
        assert_eq!(m.attributes.len(), 2);
    }

    #[test]
    fn a_manifest_that_breaks_a_rule_is_refused_saying_which() {
        let err = |s: &str| parse(s.as_bytes()).unwrap_err().to_string();
        assert!(err(r#"{"perfetto_manifest": {}}"#).contains("version"));
        assert!(err(r#"{"perfetto_manifest": {"version": 2}}"#).contains("unsupported version"));
        assert!(
            err(r#"{"perfetto_manifest": {"version": 1, "trace_time": {"clock": "TAI"}}}"#)
                .contains("unknown clock name")
        );
        assert!(
            err(
                r#"{"perfetto_manifest": {"version": 1, "files": [{"path": "a",
                "clocks": {"sync_to": {"file": "b"}}}]}}"#
            )
            .contains("unknown file 'b'")
        );
        assert!(
            err(
                r#"{"perfetto_manifest": {"version": 1, "files": [{"path": "a",
                "machine": {"name": ""}}]}}"#
            )
            .contains("non-empty")
        );
    }

    #[test]
    fn sync_to_names_a_file_and_the_machine_that_file_is_on() {
        let manifest = |sync_machine: &str| {
            format!(
                r#"{{"perfetto_manifest": {{"version": 1, "files": [
                  {{"path": "a.pb", "machine": {{"name": "phone"}}}},
                  {{"path": "b.pb", "machine": {{"name": "server"}},
                   "clocks": {{"sync_to": {{"file": "a.pb", "machine": "{sync_machine}"}}}}}}]}}}}"#
            )
        };
        // A single-machine file's own machine is declared by it.
        let m = parse(manifest("phone").as_bytes()).unwrap();
        let c = m.entry("b.pb").and_then(|f| f.clocks.clone()).unwrap();
        assert_eq!(c.sync_machine.as_deref(), Some("phone"));
        // Another file's machine is not.
        let err = parse(manifest("server").as_bytes())
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("'server' is not a machine declared by file 'a.pb'"),
            "{err}"
        );
    }
}

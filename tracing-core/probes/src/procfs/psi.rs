//! Pressure stall information, `/proc/pressure/{cpu,io,memory}`: a `some`
//! and (on newer kernels, also for cpu) a `full` line, each ending in
//! `total=<µs>`, the cumulative stall time.

use super::ProcError;

const FILE: &str = "/proc/pressure/*";

/// Which tasks a line counts: `some` (at least one stalled) or `full` (all).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// The `some` line.
    Some,
    /// The `full` line.
    Full,
}

/// The resource a pressure file is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resource {
    /// `/proc/pressure/cpu`.
    Cpu,
    /// `/proc/pressure/io`.
    Io,
    /// `/proc/pressure/memory`.
    Memory,
}

impl Resource {
    /// All three, in upstream's order.
    pub const ALL: [Resource; 3] = [Resource::Cpu, Resource::Io, Resource::Memory];

    /// The file's path relative to the root.
    pub fn path(self) -> &'static str {
        match self {
            Resource::Cpu => "proc/pressure/cpu",
            Resource::Io => "proc/pressure/io",
            Resource::Memory => "proc/pressure/memory",
        }
    }
}

/// One line of a pressure file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PsiLine {
    /// `some` or `full`.
    pub kind: Kind,
    /// `total=`: cumulative stall time, µs.
    pub total_us: u64,
}

/// Parses one pressure file.
pub fn parse(bytes: &[u8]) -> Result<Vec<PsiLine>, ProcError> {
    let text = std::str::from_utf8(bytes).map_err(|_| ProcError::malformed(FILE, "not text"))?;
    let mut out = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let mut words = line.split_ascii_whitespace();
        let kind = match words.next() {
            Some("some") => Kind::Some,
            Some("full") => Kind::Full,
            _ => {
                return Err(ProcError::malformed(
                    FILE,
                    format!("unknown line {line:.60?}"),
                ));
            }
        };
        let total_us = words
            .find_map(|w| w.strip_prefix("total="))
            .and_then(|t| t.parse().ok())
            .ok_or_else(|| ProcError::malformed(FILE, format!("no total= in {line:.60?}")))?;
        out.push(PsiLine { kind, total_us });
    }
    Ok(out)
}

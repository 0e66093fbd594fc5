//! The data sets the decoders are compared on, so every library reads the
//! very same bytes: the traces `cargo xtask decode-data` records through
//! zerotrace's in-process service (threads of nested TrackEvent slices with
//! debug annotations of every scalar kind and a few nested ones, interned
//! names, flows between threads, counters, an async track, and the system
//! probes' packets), read from files here so this crate depends on nothing
//! above `zerotrace-protos`; the genuine Perfetto SDK trace committed with
//! zerotrace-core's interop tests; and Perfetto's synthetic TrackEvent trace,
//! written here. Plus the split of a `Trace` into its packets.

use std::path::PathBuf;

/// The command that records the data sets this module reads.
pub const RECORD_COMMAND: &str = "cargo xtask decode-data";

/// Why a data set could not be had.
#[derive(Debug)]
pub enum DataError {
    /// A recorded data set is not on disk.
    Missing(PathBuf),
    /// Reading or writing a file failed.
    Io(std::io::Error),
    /// The bytes are not a `Trace` made of field-1 packets.
    Malformed(String),
}

impl std::fmt::Display for DataError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DataError::Missing(path) => write!(
                f,
                "{} is missing: record the data sets with `{RECORD_COMMAND}`",
                path.display()
            ),
            DataError::Io(e) => write!(f, "{e}"),
            DataError::Malformed(e) => write!(f, "not a trace: {e}"),
        }
    }
}

impl std::error::Error for DataError {}

impl From<std::io::Error> for DataError {
    fn from(e: std::io::Error) -> Self {
        DataError::Io(e)
    }
}

/// Splits a serialized `Trace` (a run of field-1 length-delimited
/// `TracePacket`s) into the packets' bytes, borrowed from `trace`.
pub fn packets(trace: &[u8]) -> Result<Vec<&[u8]>, DataError> {
    let mut out = Vec::new();
    for field in protozero::Decoder::new(trace) {
        let field = field.map_err(|e| DataError::Malformed(e.to_string()))?;
        if field.id != 1 {
            return Err(DataError::Malformed(format!(
                "field {} in a Trace",
                field.id
            )));
        }
        out.push(
            field
                .as_bytes()
                .map_err(|e| DataError::Malformed(e.to_string()))?,
        );
    }
    Ok(out)
}

/// The total size of `packets`: what the benches report as throughput.
pub fn total_bytes(packets: &[&[u8]]) -> u64 {
    packets.iter().map(|p| p.len() as u64).sum()
}

#[path = "../../examples/synthetic_trace/scenarios.rs"]
mod scenarios;

/// Perfetto's synthetic TrackEvent trace: the four scenarios of its
/// "writing TrackEvent protos synthetically" guide (sync and async slices,
/// a flow, a counter), as `protos/examples/synthetic_trace` writes them.
pub fn synthetic_trace() -> Result<Vec<u8>, DataError> {
    scenarios::synthetic_trace().map_err(|e| DataError::Malformed(e.to_string()))
}

/// The genuine Perfetto SDK trace (about 300 KB) committed at
/// `tracing-core/tests/vectors/genuine-session.pftrace`.
pub fn genuine_trace() -> Result<Vec<u8>, DataError> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tracing-core/tests/vectors/genuine-session.pftrace");
    Ok(std::fs::read(path)?)
}

/// How much a recorded data set holds, as `cargo xtask decode-data`
/// recorded it (its `NAME.size` file).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceSize {
    /// Worker threads (each its own sequence, with its own interned data).
    pub workers: u32,
    /// Frames per worker; a frame is about 11 slices and 2 counter samples.
    pub frames: u32,
    /// How long the system probes recorded, at least (0: no probes).
    pub probes_ms: u64,
    /// How many times over the trace was written (traces concatenate).
    pub copies: u32,
}

impl TraceSize {
    /// Reads the `key value` lines of a `NAME.size` file.
    fn parse(text: &str) -> Result<TraceSize, String> {
        let mut size = TraceSize {
            workers: 0,
            frames: 0,
            probes_ms: 0,
            copies: 1,
        };
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let (key, value) = line
                .split_once(' ')
                .ok_or_else(|| format!("not `key value`: {line:?}"))?;
            let bad = |e: std::num::ParseIntError| format!("{key}: {e}");
            match key {
                "workers" => size.workers = value.trim().parse().map_err(bad)?,
                "frames" => size.frames = value.trim().parse().map_err(bad)?,
                "probes_ms" => size.probes_ms = value.trim().parse().map_err(bad)?,
                "copies" => size.copies = value.trim().parse().map_err(bad)?,
                _ => return Err(format!("unknown key {key}")),
            }
        }
        Ok(size)
    }
}

/// A recorded data set: the trace and how much it holds.
#[derive(Debug, Clone)]
pub struct Recorded {
    /// The serialized `Trace`.
    pub trace: Vec<u8>,
    /// What the recording was asked to write.
    pub size: TraceSize,
}

/// The benchmark's data set (about 5 MB of TrackEvent packets and two
/// seconds of the probes'), also the examples'.
pub const RECORDED: &str = "recorded";

/// The tests' data set (about 130 KB of TrackEvent packets and 300 ms of
/// the probes').
pub const RECORDED_SMALL: &str = "recorded-small";

/// The directory the recorded data sets are in: `$ZEROTRACE_DECODE_DATA`,
/// else `decode-bench-data` in the target directory (`$CARGO_TARGET_DIR`,
/// else the workspace's `target`), where `cargo xtask decode-data` writes
/// them by default.
pub fn data_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("ZEROTRACE_DECODE_DATA") {
        return PathBuf::from(dir);
    }
    let workspace = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let workspace = workspace.canonicalize().unwrap_or(workspace);
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("target"));
    workspace.join(target).join("decode-bench-data")
}

/// Reads the recorded data set `name` ([`RECORDED`], [`RECORDED_SMALL`])
/// from [`data_dir`]; [`DataError::Missing`], naming the command that
/// records it, when it is not there.
pub fn recorded(name: &str) -> Result<Recorded, DataError> {
    let dir = data_dir();
    let trace_path = dir.join(format!("{name}.pftrace"));
    let size_path = dir.join(format!("{name}.size"));
    for path in [&trace_path, &size_path] {
        if !path.is_file() {
            return Err(DataError::Missing(path.clone()));
        }
    }
    let size = TraceSize::parse(&std::fs::read_to_string(&size_path)?)
        .map_err(|e| DataError::Malformed(format!("{}: {e}", size_path.display())))?;
    Ok(Recorded {
        trace: std::fs::read(&trace_path)?,
        size,
    })
}

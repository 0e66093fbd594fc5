//! Reading the kernel's per-CPU ring buffers: `per_cpu/cpuN/trace_pipe_raw`
//! opened non-blocking and read one whole sub-buffer per read into the
//! caller's buffer (no allocation per read), ready for
//! [`PageLayout::pages`](super::PageLayout::pages); `per_cpu/cpuN/stats`
//! parsed into [`CpuStats`]; and the `ftrace_stats` packet written from
//! them at the start and end of a trace, as upstream writes it.

use std::fs;
use std::io::{ErrorKind, Read};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use protozero::Message;

use zerotrace_protos::protos::FtraceStats;
use zerotrace_protos::protos::ftrace_stats::Phase;
use zerotrace_protos::upstream_tables::packet_field;

use super::tracefs::{TracefsError, read_text};

/// One CPU's `trace_pipe_raw`, open non-blocking.
#[derive(Debug)]
pub struct CpuReader {
    cpu: usize,
    path: PathBuf,
    file: fs::File,
    subbuf_size: usize,
}

/// Why reading a CPU's buffer failed.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The caller's buffer holds no whole sub-buffer.
    #[error("buffer of {len} bytes is smaller than one {subbuf}-byte sub-buffer")]
    BufferTooSmall {
        /// The buffer's length.
        len: usize,
        /// The sub-buffer size.
        subbuf: usize,
    },
    /// The read failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The system's error.
        #[source]
        source: std::io::Error,
    },
}

impl CpuReader {
    /// Opens `per_cpu/cpu<cpu>/trace_pipe_raw` under the instance directory
    /// `dir`, read in sub-buffers of `subbuf_size` bytes.
    pub fn open(dir: &Path, cpu: usize, subbuf_size: usize) -> Result<Self, ReadError> {
        let path = dir.join(format!("per_cpu/cpu{cpu}/trace_pipe_raw"));
        let file = fs::OpenOptions::new()
            .read(true)
            .custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32)
            .open(&path)
            .map_err(|source| ReadError::Io {
                path: path.clone(),
                source,
            })?;
        Ok(CpuReader {
            cpu,
            path,
            file,
            subbuf_size: subbuf_size.max(1),
        })
    }

    /// The CPU.
    pub fn cpu(&self) -> usize {
        self.cpu
    }

    /// Another descriptor of the same open pipe, for waiting on its
    /// readiness (`drain_buffer_percent`) on another thread.
    pub fn watch_fd(&self) -> std::io::Result<std::os::fd::OwnedFd> {
        self.file.try_clone().map(std::os::fd::OwnedFd::from)
    }

    /// Reads as many whole sub-buffers as are ready and fit in `buf`, each
    /// into its own `subbuf_size` slot (a short read is zero-padded to the
    /// slot; the page's commit word says how much of it is data). Returns
    /// the bytes filled, a multiple of the sub-buffer size; 0 when the
    /// buffer is empty.
    pub fn read_pages(&mut self, buf: &mut [u8]) -> Result<usize, ReadError> {
        let sb = self.subbuf_size;
        if buf.len() < sb {
            return Err(ReadError::BufferTooSmall {
                len: buf.len(),
                subbuf: sb,
            });
        }
        let mut filled = 0;
        while filled + sb <= buf.len() {
            let slot = &mut buf[filled..filled + sb];
            match self.file.read(slot) {
                Ok(0) => break,
                Ok(n) => {
                    slot[n..].fill(0);
                    filled += sb;
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(source) => {
                    return Err(ReadError::Io {
                        path: self.path.clone(),
                        source,
                    });
                }
            }
        }
        Ok(filled)
    }
}

/// `per_cpu/cpuN/stats`.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CpuStats {
    /// `entries`: events in the buffer.
    pub entries: u64,
    /// `overrun`: events overwritten before being read.
    pub overrun: u64,
    /// `commit overrun`.
    pub commit_overrun: u64,
    /// `bytes`: bytes in the buffer.
    pub bytes: u64,
    /// `oldest event ts`, seconds.
    pub oldest_event_ts: Option<f64>,
    /// `now ts`, seconds.
    pub now_ts: Option<f64>,
    /// `dropped events` (buffer full, not overwriting).
    pub dropped_events: Option<u64>,
    /// `read events`.
    pub read_events: Option<u64>,
}

/// Why a `stats` file did not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StatsError {
    /// A line has no `key: value` shape or its value is not a number.
    #[error("stats line {0:?} does not parse")]
    BadLine(String),
    /// A key every kernel prints is missing (a truncated file).
    #[error("stats has no {0:?}")]
    Missing(&'static str),
}

impl CpuStats {
    /// Parses the text of `per_cpu/cpuN/stats`.
    pub fn parse(text: &str) -> Result<Self, StatsError> {
        let mut s = CpuStats::default();
        let mut seen = [false; 4];
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let bad = || StatsError::BadLine(line.chars().take(80).collect());
            let (k, v) = line.split_once(':').ok_or_else(bad)?;
            let v = v.trim();
            let int = || v.parse::<u64>().map_err(|_| bad());
            let secs = || {
                v.parse::<f64>()
                    .ok()
                    .filter(|f| f.is_finite())
                    .ok_or_else(bad)
            };
            match k.trim() {
                "entries" => (s.entries, seen[0]) = (int()?, true),
                "overrun" => (s.overrun, seen[1]) = (int()?, true),
                "commit overrun" => (s.commit_overrun, seen[2]) = (int()?, true),
                "bytes" => (s.bytes, seen[3]) = (int()?, true),
                "oldest event ts" => s.oldest_event_ts = Some(secs()?),
                "now ts" => s.now_ts = Some(secs()?),
                "dropped events" => s.dropped_events = Some(int()?),
                "read events" => s.read_events = Some(int()?),
                _ => {}
            }
        }
        for (i, name) in ["entries", "overrun", "commit overrun", "bytes"]
            .into_iter()
            .enumerate()
        {
            if !seen[i] {
                return Err(StatsError::Missing(name));
            }
        }
        Ok(s)
    }

    /// Reads and parses `per_cpu/cpu<cpu>/stats` under the instance `dir`.
    pub fn read(dir: &Path, cpu: usize) -> Result<Self, CpuStatsReadError> {
        let text = read_text(&dir.join(format!("per_cpu/cpu{cpu}/stats")), 64 << 10)?;
        Ok(CpuStats::parse(&text)?)
    }
}

/// Why a `stats` file could not be had.
#[derive(Debug, thiserror::Error)]
pub enum CpuStatsReadError {
    /// Reading it failed.
    #[error(transparent)]
    Read(#[from] TracefsError),
    /// Parsing it failed.
    #[error(transparent)]
    Parse(#[from] StatsError),
}

/// When an `ftrace_stats` packet is taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatsPhase {
    /// At the start of the trace.
    Start,
    /// At the end (each flush).
    End,
}

/// What an `ftrace_stats` packet says besides the per-CPU stats.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StatsExtra<'a> {
    /// Symbols parsed from `/proc/kallsyms` (end of trace, `symbolize_ksyms`).
    pub kernel_symbols_parsed: Option<u32>,
    /// Memory the symbol table takes, KiB.
    pub kernel_symbols_mem_kb: Option<u32>,
    /// `atrace_errors`.
    pub atrace_errors: Option<&'a str>,
    /// Requested events the kernel does not have.
    pub unknown_ftrace_events: &'a [String],
    /// Events present that could not be enabled.
    pub failed_ftrace_events: &'a [String],
    /// Every kind of parse error met (end of trace).
    pub parse_errors: &'a [zerotrace_protos::protos::FtraceParseStatus],
    /// `preserve_ftrace_buffer`: the trace holds what the ring buffer held
    /// before it started (start of trace).
    pub preserve_ftrace_buffer: bool,
}

/// Writes an `ftrace_stats` packet into `packet` (a `TracePacket`).
pub fn write_ftrace_stats(
    packet: &mut Message<'_>,
    timestamp_ns: u64,
    phase: StatsPhase,
    cpus: &[(usize, CpuStats)],
    extra: &StatsExtra<'_>,
) {
    packet.append_uint64(packet_field::TIMESTAMP, timestamp_ns);
    let mut st = FtraceStats::from_message(packet.begin_nested(packet_field::FTRACE_STATS));
    st.set_phase(match phase {
        StatsPhase::Start => Phase::StartOfTrace,
        StatsPhase::End => Phase::EndOfTrace,
    });
    for (cpu, s) in cpus {
        let mut c = st.add_cpu_stats();
        c.set_cpu(*cpu as u64)
            .set_entries(s.entries)
            .set_overrun(s.overrun)
            .set_commit_overrun(s.commit_overrun)
            .set_bytes_read(s.bytes);
        if let Some(t) = s.oldest_event_ts {
            c.set_oldest_event_ts(t);
        }
        if let Some(t) = s.now_ts {
            c.set_now_ts(t);
        }
        if let Some(n) = s.dropped_events {
            c.set_dropped_events(n);
        }
        if let Some(n) = s.read_events {
            c.set_read_events(n);
        }
    }
    if let Some(n) = extra.kernel_symbols_parsed {
        st.set_kernel_symbols_parsed(n);
    }
    if let Some(n) = extra.kernel_symbols_mem_kb {
        st.set_kernel_symbols_mem_kb(n);
    }
    if extra.preserve_ftrace_buffer {
        st.set_preserve_ftrace_buffer(true);
    }
    if let Some(e) = extra.atrace_errors {
        st.set_atrace_errors(e);
    }
    for e in extra.unknown_ftrace_events {
        st.add_unknown_ftrace_events(e);
    }
    for e in extra.failed_ftrace_events {
        st.add_failed_ftrace_events(e);
    }
    for &s in extra.parse_errors {
        st.add_ftrace_parse_errors(s);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use protozero::HeapWriter;
    use zerotrace_protos::protos::FtraceStatsDecoder;

    /// Linux 6.x's text.
    const REAL: &str = "entries: 12\noverrun: 3\ncommit overrun: 0\nbytes: 840\n\
oldest event ts:  5421.575553\nnow ts:  5423.046413\ndropped events: 0\nread events: 7\n";

    #[test]
    fn parses_real_stats() {
        let s = CpuStats::parse(REAL).expect("parse");
        assert_eq!(s.entries, 12);
        assert_eq!(s.overrun, 3);
        assert_eq!(s.bytes, 840);
        assert_eq!(s.oldest_event_ts, Some(5421.575553));
        assert_eq!(s.now_ts, Some(5423.046413));
        assert_eq!(s.dropped_events, Some(0));
        assert_eq!(s.read_events, Some(7));
    }

    #[test]
    fn truncated_or_bad_stats_are_errors() {
        assert_eq!(
            CpuStats::parse("entries: 12\noverrun: 3\n"),
            Err(StatsError::Missing("commit overrun"))
        );
        assert!(matches!(
            CpuStats::parse("entries: 12\noverr"),
            Err(StatsError::BadLine(_))
        ));
        assert!(matches!(
            CpuStats::parse("entries: x\n"),
            Err(StatsError::BadLine(_))
        ));
        assert!(CpuStats::parse("").is_err());
        // Cut in the middle of a line that is not required: still typed.
        let cut = &REAL[..REAL.find("now ts").expect("now") + 3];
        assert!(matches!(CpuStats::parse(cut), Err(StatsError::BadLine(_))));
        // Older kernels without the optional lines.
        let old = "entries: 1\noverrun: 0\ncommit overrun: 0\nbytes: 40\n";
        assert_eq!(CpuStats::parse(old).expect("old").read_events, None);
    }

    #[test]
    fn writes_the_ftrace_stats_packet() {
        let s = CpuStats::parse(REAL).expect("parse");
        let unknown = vec!["nosuch/event".to_owned()];
        let mut w = HeapWriter::new();
        {
            let mut p = w.root();
            write_ftrace_stats(
                &mut p,
                99,
                StatsPhase::End,
                &[(0, s), (1, CpuStats::default())],
                &StatsExtra {
                    kernel_symbols_parsed: Some(1234),
                    unknown_ftrace_events: &unknown,
                    ..StatsExtra::default()
                },
            );
        }
        let bytes = w.finish().expect("finish");
        let pkt = protozero::Decoder::new(&bytes);
        let ts = pkt.clone().find_last(packet_field::TIMESTAMP).expect("ts");
        assert_eq!(ts.as_u64().expect("u64"), 99);
        let body = pkt
            .find_last(packet_field::FTRACE_STATS)
            .expect("ftrace_stats")
            .as_bytes()
            .expect("bytes");
        let d = FtraceStatsDecoder::new(body);
        assert_eq!(d.phase(), Some(Phase::EndOfTrace));
        assert_eq!(d.kernel_symbols_parsed(), Some(1234));
        assert_eq!(
            d.unknown_ftrace_events().collect::<Vec<_>>(),
            vec!["nosuch/event"]
        );
        let cpus: Vec<_> = d.cpu_stats().collect();
        assert_eq!(cpus.len(), 2);
        assert_eq!(cpus[0].overrun(), Some(3));
        assert_eq!(cpus[0].now_ts(), Some(5423.046413));
        assert_eq!(cpus[1].cpu(), Some(1));
    }
}

//! Which format a trace is in, told by its first bytes as Perfetto tells
//! it (never by a file name): Chrome JSON (an object or array whose first
//! member is a quoted key), systrace text (`# tracer`, `TRACE:`, an HTML
//! systrace page, a `cpus=` header, a line starting with a space), strace
//! text (a first line that reads as an `strace -ttt` syscall line, told
//! before systrace as upstream's detection order has it), simpleperf's
//! record file (its `SIMPLEPERF` magic), Firefox profiler JSON (an object
//! whose first key is `meta` or `libs`, told before Chrome JSON), a pprof
//! `Profile` (its top-level fields all `Profile`'s, with their wire types,
//! told before the protobuf trace, whose first tag it may share), the protobuf
//! `Trace` (the tag of `Trace.packet`), Android dumpstate and battery
//! stats checkin text (last, as upstream tells them last). Collapsed
//! stacks (every line up to three that is no comment reads `a;b;c 42`)
//! and `perf script` text (a first line that reads as a sample line) are
//! told after JSON and before strace, in upstream's order, from every
//! byte read so far (the loader waits for a first line, `TEXT_LOOKAHEAD`).
//! Anything else gets an error that says what the bytes looked like. Fuchsia's trace
//! format (its magic number record) and ART method traces (a `*version`
//! line, or the `SLOW` magic) are told early by their magic, as upstream's
//! detection priorities have them. Instruments XML (`xctrace export`) is
//! told by its XML declaration followed by `<trace-query-result>`.

/// Bytes looked at to tell the format.
pub const LOOKAHEAD: usize = 128;

/// A trace's format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Perfetto's protobuf `Trace`.
    Proto,
    /// Fuchsia's binary trace format (its magic number record).
    Fuchsia,
    /// An ART method trace (`*version` text header, or `SLOW` magic).
    ArtMethod,
    /// Chrome's JSON trace format.
    Json,
    /// Systrace / ftrace text.
    Systrace,
    /// strace text (`strace -f -ttt`).
    Strace,
    /// simpleperf's protobuf record file (`SIMPLEPERF` magic).
    Simpleperf,
    /// Android dumpstate text or battery stats checkin text.
    Dumpstate,
    /// A Firefox profiler (Gecko) JSON profile.
    Gecko,
    /// `perf script` text (or simpleperf's text output).
    PerfText,
    /// Collapsed (folded) stacks: `frame;frame;frame count` lines.
    CollapsedStack,
    /// A pprof `Profile` (`profile.proto`; gzip is inflated before).
    Pprof,
    /// A zip archive of traces (`load/archive/`).
    Zip,
    /// A tar archive of traces (`ustar` at byte 257).
    Tar,
    /// A trace manifest (`{"perfetto_manifest"`).
    Manifest,
    /// Apple Instruments' XML export (`load/instruments/`).
    InstrumentsXml,
}

/// Bytes needed to tell a tar archive (its `ustar` magic is at 257).
pub const TAR_LOOKAHEAD: usize = 512;

/// Bytes the loader holds at most, waiting for the first line break of a
/// text trace that cannot be told yet (a `perf script` sample line or a
/// collapsed stack longer than [`TAR_LOOKAHEAD`]).
pub const TEXT_LOOKAHEAD: usize = 64 * 1024;

/// Whether the loader should wait for more bytes before telling `head`'s
/// format: no format fits yet, the bytes hold no line break, and fewer
/// than [`TEXT_LOOKAHEAD`] are held.
pub fn wants_a_line(head: &[u8]) -> bool {
    head.len() < TEXT_LOOKAHEAD && !head.contains(&b'\n') && sniff(head).is_err()
}

/// Whether `head` opens a tar archive (POSIX or GNU `ustar` magic).
fn is_tar(head: &[u8]) -> bool {
    head.get(257..263) == Some(b"ustar\0") || head.get(257..265) == Some(b"ustar  \0")
}

/// The tag of `Trace.packet` (field 1, length-delimited).
const TRACE_PACKET_TAG: u8 = 0x0a;

/// The format of a trace starting with `head` (at least [`LOOKAHEAD`]
/// bytes unless the trace is shorter); what the bytes look like when no
/// format fits.
pub fn sniff(head: &[u8]) -> Result<Format, String> {
    if is_tar(head) {
        return Ok(Format::Tar);
    }
    // Some formats are told from every byte read so far, as upstream
    // tells them from the first chunk (pprof, the text profiles).
    let whole = head;
    let head = head.get(..LOOKAHEAD).unwrap_or(head);
    if head.starts_with(b"PK\x03\x04") {
        return Ok(Format::Zip);
    }
    if super::archive::manifest::sniff(head) {
        return Ok(Format::Manifest);
    }
    if head.is_empty() {
        // An empty trace is an empty protobuf trace.
        return Ok(Format::Proto);
    }
    if head.starts_with(super::simpleperf::MAGIC) {
        return Ok(Format::Simpleperf);
    }
    if super::fuchsia::sniff(head) {
        return Ok(Format::Fuchsia);
    }
    if super::art_method::sniff(head) {
        return Ok(Format::ArtMethod);
    }
    if super::gecko::sniff(head) {
        return Ok(Format::Gecko);
    }
    if super::instruments::sniff(head) {
        return Ok(Format::InstrumentsXml);
    }
    let compact: Vec<u8> = head
        .iter()
        .copied()
        .filter(|b| !b.is_ascii_whitespace() && *b != 0x0b)
        .collect();
    if compact.starts_with(b"{\"") || compact.starts_with(b"[{\"") {
        return Ok(Format::Json);
    }
    if super::collapsed_stack::sniff(whole) {
        return Ok(Format::CollapsedStack);
    }
    if super::perf_text::sniff(whole) {
        return Ok(Format::PerfText);
    }
    if super::strace::sniff(head) {
        return Ok(Format::Strace);
    }
    let contains = |needle: &[u8]| head.windows(needle.len()).any(|w| w == needle);
    let lower: Vec<u8> = head.to_ascii_lowercase();
    if contains(b"# tracer")
        || lower.starts_with(b"<!doctype html>")
        || lower.starts_with(b"<html>")
        || contains(b"TRACE:\n")
        || head.starts_with(b"cpus=")
        || head.starts_with(b" ")
    {
        return Ok(Format::Systrace);
    }
    if super::pprof::sniff(whole) {
        return Ok(Format::Pprof);
    }
    if head.first() == Some(&TRACE_PACKET_TAG) {
        return Ok(Format::Proto);
    }
    if head.starts_with(super::dumpstate::CHECKIN_START)
        || head.starts_with(super::dumpstate::DUMPSTATE_START)
    {
        return Ok(Format::Dumpstate);
    }
    Err(describe(head))
}

/// What unreadable first bytes look like.
fn describe(head: &[u8]) -> String {
    let known: &[(&[u8], &str)] = &[
        (b"\x28\xb5\x2f\xfd", "a zstd stream"),
        (b"PERFILE2", "a perf.data file"),
        (b"\x89PNG", "a PNG image"),
    ];
    let hex: Vec<String> = head.iter().take(8).map(|b| format!("{b:02x}")).collect();
    let hex = hex.join(" ");
    for (magic, what) in known {
        if head.starts_with(magic) {
            return format!("{what} ({hex}), which is not read yet");
        }
    }
    let text = head
        .iter()
        .take(32)
        .all(|b| b.is_ascii_graphic() || b.is_ascii_whitespace());
    if text {
        let shown: String = String::from_utf8_lossy(head.get(..32).unwrap_or(head))
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect();
        return format!(
            "text that is neither JSON nor systrace: {:?}",
            shown.trim_end()
        );
    }
    format!("bytes {hex}, which are no protobuf trace (its first byte is 0x0a)")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_are_told_by_content() {
        assert_eq!(sniff(b"\n  [ {\"ph\": \"X\"}]"), Ok(Format::Json));
        assert_eq!(sniff(b"{\"traceEvents\": []}"), Ok(Format::Json));
        assert_eq!(sniff(b"# tracer: nop\n#\n"), Ok(Format::Systrace));
        assert_eq!(sniff(b"TRACE:\n# tracer"), Ok(Format::Systrace));
        assert_eq!(sniff(b"\x0a\x02\x08\x01"), Ok(Format::Proto));
        assert_eq!(
            sniff(b"42 1700000000.000001 read(3, \"abc\", 3) = 3\n"),
            Ok(Format::Strace)
        );
        assert_eq!(sniff(b"SIMPLEPERF\x01\x00"), Ok(Format::Simpleperf));
        assert_eq!(
            sniff(b"\x10\x00\x04\x46\x78\x54\x16\x00"),
            Ok(Format::Fuchsia)
        );
        assert_eq!(sniff(b"*version\n3\n"), Ok(Format::ArtMethod));
        assert_eq!(sniff(b"SLOW\xf5\x00"), Ok(Format::ArtMethod));
        assert_eq!(sniff(b"9,0,i,vers,36,214\n"), Ok(Format::Dumpstate));
        assert_eq!(
            sniff(b"{ \"meta\": {}, \"threads\": []}"),
            Ok(Format::Gecko)
        );
        assert_eq!(sniff(b""), Ok(Format::Proto));
        // A pprof profile: sample_type {type: 1 unit: 2}, then a string table.
        assert_eq!(
            sniff(b"\x0a\x04\x08\x01\x10\x02\x32\x00\x32\x03cpu\x32\x02ns"),
            Ok(Format::Pprof)
        );
        // A trace of packets only (field 1) is no profile.
        assert_eq!(
            sniff(b"\x0a\x04\x08\x01\x10\x02\x0a\x04\x08\x01\x10\x02"),
            Ok(Format::Proto)
        );
        assert_eq!(
            sniff(b"  perf 12/13 [001] 7.000001: 1 cycles:\n\t1 main (/bin/x)\n"),
            Ok(Format::PerfText)
        );
        assert_eq!(
            sniff(b"# folded\nmain;work 3\nmain;a 1\nmain;a;b 7\n"),
            Ok(Format::CollapsedStack)
        );
        assert_eq!(
            sniff(b"<?xml version=\"1.0\"?>\n<trace-query-result>\n<node>"),
            Ok(Format::InstrumentsXml)
        );
        assert_ne!(
            sniff(b"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<trace-query-result>"),
            Ok(Format::InstrumentsXml)
        );
        assert_eq!(sniff(b"PK\x03\x04\x14\x00"), Ok(Format::Zip));
        assert_eq!(
            sniff(b" {\"perfetto_manifest\": {\"version\": 1}}"),
            Ok(Format::Manifest)
        );
        let mut tar = vec![0u8; 512];
        tar[257..263].copy_from_slice(b"ustar\0");
        assert_eq!(sniff(&tar), Ok(Format::Tar));
        let text = sniff(b"hello world").unwrap_err();
        assert!(text.contains("hello world"), "{text}");
    }
}

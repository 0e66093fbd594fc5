//! The trace processor's readers of strace text, battery stats checkin
//! text, simpleperf's record file, Firefox profiler JSON and pprof
//! profiles on any bytes: the input's first byte picks the format, whose
//! opening (a syscall line, the checkin version line, the simpleperf
//! magic and version, a Gecko profile's first key, a pprof string table's
//! first entry) goes before the rest of the input so that the loader
//! takes it for that format whatever it holds (a pprof profile: whenever
//! the rest's top-level fields are all `Profile`'s); then the
//! `trace_processor` target's invariants (no panic; the same tables or the
//! same error whether pushed at once or in small chunks; every table
//! answers) and `trace_processor_time`'s (work linear in the bytes).
//! `perf script` text (a sample line) and collapsed stacks (three stack
//! lines) have openings too.
//! Fuchsia traces (their magic number record) and ART method traces
//! (the text header's first line, the v2 and streaming v1 magics) have
//! openings too, and so do Instruments XML exports (the XML declaration
//! and `<trace-query-result>`).
//! Android dumpstate text (its banner and `== dumpstate: ` line), zip
//! archives (a local file header's signature) and tar archives (a whole
//! `ustar` header of an empty directory, so that the rest is the archive's
//! next entries) have openings too: hostile archives (huge declared sizes,
//! many members, nested archives) must fail with a typed error in bounded
//! work.

/// A tar header (POSIX `ustar`) of `name` (at most 100 bytes), its size
/// the 11 octal digits `size`, of type `typeflag` (`b'0'` a file, `b'5'` a
/// directory), its checksum computed as tar defines it (the header's byte
/// sum with the checksum field read as spaces, six octal digits, a NUL and
/// a space).
const fn tar_header(name: &[u8], size: &[u8; 11], typeflag: u8) -> [u8; 512] {
    let mut h = [0u8; 512];
    let fields: [(usize, &[u8]); 9] = [
        (0, name),
        (100, b"0000755\0"),
        (108, b"0000000\0"),
        (116, b"0000000\0"),
        (124, size),
        (136, b"00000000000\0"),
        (156, &[typeflag]),
        (257, b"ustar\0"),
        (263, b"00"),
    ];
    let mut f = 0;
    while f < fields.len() {
        let (at, text) = fields[f];
        let mut i = 0;
        while i < text.len() {
            h[at + i] = text[i];
            i += 1;
        }
        f += 1;
    }
    let mut sum: u32 = 8 * b' ' as u32;
    let mut i = 0;
    while i < h.len() {
        sum += h[i] as u32;
        i += 1;
    }
    let mut digit = 0;
    while digit < 6 {
        h[148 + 5 - digit] = b'0' + ((sum >> (3 * digit)) & 7) as u8;
        digit += 1;
    }
    h[154] = 0;
    h[155] = b' ';
    h
}

/// The tar opening: an empty directory `d/`.
const TAR_DIRECTORY: [u8; 512] = tar_header(b"d/", b"00000000000", b'5');

/// The openings, by the input's first byte modulo their number (new ones
/// are added at the end, so that a seed's first byte keeps its format).
const OPENINGS: [&[u8]; 15] = [
    b"1 1700000000.000000 read(3, \"x\", 1) = 1\n",
    b"9,0,i,vers,36,214,A,B\n",
    b"SIMPLEPERF\x01\x00",
    b"{\"meta\": {},",
    b"\x32\x00",
    b"\x10\x00\x04\x46\x78\x54\x16\x00",
    b"*version\n3\n",
    b"SLOW\x04\x00",
    b"SLOW\xf3\x00",
    b"perf 1/1 [0] 1.000000: 1 cycles:\n",
    b"a;b 1\na;c 2\na;d 3\n",
    b"<?xml version=\"1.0\"?>\n<trace-query-result>",
    b"========================================================\n== dumpstate: ",
    b"PK\x03\x04",
    &TAR_DIRECTORY,
];

/// The trace a fuzz input stands for: the opening its first byte picks,
/// then the rest (None for an empty input).
fn trace_of(data: &[u8]) -> Option<Vec<u8>> {
    let (&pick, rest) = data.split_first()?;
    let opening = OPENINGS[usize::from(pick) % OPENINGS.len()];
    let mut trace = opening.to_vec();
    trace.extend_from_slice(rest);
    Some(trace)
}

/// The `other_formats` target: the first byte picks the format, the rest
/// follows its opening.
pub fn other_formats(data: &[u8]) {
    let Some(trace) = trace_of(data) else {
        return;
    };
    crate::trace_processor(&trace);
    crate::trace_processor_time(&trace);
}

#[cfg(test)]
mod tests {
    use super::{TAR_DIRECTORY, other_formats, tar_header, trace_of};
    use zerotrace_trace_processor::{Loader, TraceError, TraceProcessor};

    /// Loads `trace` whole: the error, if any.
    fn load_error(trace: &[u8]) -> Option<TraceError> {
        let mut loader = Loader::new();
        match loader.push(trace) {
            Ok(()) => loader.finish().err(),
            Err(e) => Some(e),
        }
    }

    /// A fuzz input of the tar opening followed by `entries` and the
    /// archive's end (two zero blocks).
    fn tar_input(entries: &[u8]) -> Vec<u8> {
        let mut input = vec![14u8];
        input.extend_from_slice(entries);
        input.extend_from_slice(&[0u8; 1024]);
        input
    }

    #[test]
    fn hostile_tar_archives_fail_with_a_typed_error_in_bounded_work() {
        // A member declaring 8 GiB with 100 bytes behind it.
        let mut huge = tar_header(b"big.pb", b"77777777777", b'0').to_vec();
        huge.extend_from_slice(&[0x0a; 100]);
        let input = tar_input(&huge);
        other_formats(&input);
        let trace = trace_of(&input).expect("not empty");
        assert!(
            matches!(load_error(&trace), Some(TraceError::Archive { .. })),
            "{:?}",
            load_error(&trace)
        );
        // A member that is itself a tar archive.
        let mut nested = tar_header(b"inner.tar", b"00000002000", b'0').to_vec();
        nested.extend_from_slice(&TAR_DIRECTORY);
        nested.extend_from_slice(&[0u8; 512]);
        let input = tar_input(&nested);
        other_formats(&input);
        let error = load_error(&trace_of(&input).expect("not empty"));
        assert!(
            error
                .as_ref()
                .is_some_and(|e| e.to_string().contains("nested")),
            "{error:?}"
        );
    }

    #[test]
    fn a_tar_of_many_small_traces_loads_in_linear_work() {
        // 1,000 members, each a systrace text with one line: the time
        // invariant (work linear in the bytes) holds.
        let text = b"# tracer: nop\n";
        let mut entries = Vec::new();
        for _ in 0..1000 {
            entries.extend_from_slice(&tar_header(b"t.systrace", b"00000000016", b'0'));
            let mut block = [0u8; 512];
            block[..text.len()].copy_from_slice(text);
            entries.extend_from_slice(&block);
        }
        let input = tar_input(&entries);
        other_formats(&input);
        assert_eq!(load_error(&trace_of(&input).expect("not empty")), None);
    }

    #[test]
    fn a_zip_directory_claiming_every_entry_fails_with_a_typed_error() {
        // The zip opening, then an end of central directory record saying
        // 65,535 entries in a 4 GiB directory at offset 0.
        let mut input = vec![13u8];
        input.extend_from_slice(&[0u8; 26]);
        input.extend_from_slice(b"PK\x05\x06");
        input.extend_from_slice(&0u16.to_le_bytes());
        input.extend_from_slice(&0u16.to_le_bytes());
        input.extend_from_slice(&u16::MAX.to_le_bytes());
        input.extend_from_slice(&u16::MAX.to_le_bytes());
        input.extend_from_slice(&u32::MAX.to_le_bytes());
        input.extend_from_slice(&0u32.to_le_bytes());
        input.extend_from_slice(&0u16.to_le_bytes());
        other_formats(&input);
        let error = load_error(&trace_of(&input).expect("not empty"));
        assert!(
            matches!(error, Some(TraceError::Archive { .. })),
            "{error:?}"
        );
    }

    /// The seed `name`'s trace, loaded: the first column of `sql`'s rows.
    fn query_seed(name: &str, sql: &str) -> Vec<String> {
        let path = format!(
            "{}/../seeds/other_formats/{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        let seed = std::fs::read(&path).expect("the seed reads");
        let trace = trace_of(&seed).expect("a seed is not empty");
        let mut loader = Loader::new();
        loader.push(&trace).expect("the seed's trace loads");
        let storage = loader.finish().expect("the seed's trace loads");
        let tp = TraceProcessor::from_storage(storage).expect("the tables build");
        let result = tp.query(sql).expect("the query runs");
        result.rows.iter().map(|r| format!("{:?}", r[0])).collect()
    }

    #[test]
    fn the_archive_seeds_load_their_member_behind_their_opening() {
        for seed in ["zip", "tar"] {
            let names = query_seed(seed, "SELECT name FROM slice");
            assert_eq!(names.len(), 1, "{seed}: {names:?}");
            assert!(names[0].contains("work"), "{seed}: {names:?}");
            let files = query_seed(seed, "SELECT trace_type FROM __intrinsic_trace_file");
            assert!(files.iter().any(|t| t.contains(seed)), "{seed}: {files:?}");
        }
    }

    #[test]
    fn the_dumpstate_seed_loads_as_dumpstate() {
        let lines = query_seed(
            "dumpstate",
            "SELECT line FROM __intrinsic_android_dumpstate",
        );
        assert!(
            lines.iter().any(|l| l.contains("DUMP OF SERVICE")),
            "{lines:?}"
        );
    }
}

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

/// The openings, by the input's first byte modulo their number.
const OPENINGS: [&[u8]; 12] = [
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
];

/// The `other_formats` target: the first byte picks the format, the rest
/// follows its opening.
pub fn other_formats(data: &[u8]) {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let opening = OPENINGS[usize::from(pick) % OPENINGS.len()];
    let mut trace = opening.to_vec();
    trace.extend_from_slice(rest);
    crate::trace_processor(&trace);
    crate::trace_processor_time(&trace);
}

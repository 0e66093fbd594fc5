//! Inputs on which a fuzz target once failed, each a named test through the
//! target's logic (the corpus test replays them too, with every other
//! committed input). The inputs are `fuzz/regressions/<target>/<name>`.

/// An empty chunk stored exactly at the end of the ring stayed at the front
/// of the eviction queue after a wrap and stopped the eviction of the chunks
/// the next one overwrote: a later read returned another writer's bytes.
/// (The same case built by hand: `tracing-core/tests/all/fuzz_regressions.rs`.)
#[test]
fn trace_buffer_empty_record_at_the_ring_end() {
    zerotrace_fuzz_logic::trace_buffer(include_bytes!(
        "../../regressions/trace_buffer/empty-record-at-ring-end"
    ));
}

/// The target's own invariant was wrong, not the parser: an error on a
/// last line that ends in a lone '\r' (no '\n' after it) quotes the line
/// with that '\r', as `str::lines` splits it (only "\r\n" is a line ending).
#[test]
fn text_config_lone_cr_at_the_end() {
    zerotrace_fuzz_logic::text_config(include_bytes!(
        "../../regressions/text_config/lone-cr-at-the-end"
    ));
}

/// Again the invariant, not the parser: a string cut by the end of its line
/// is reported at the '\n', so on a "\r\n" line the column points past the
/// excerpt (which drops the "\r\n") at the line ending itself.
#[test]
fn text_config_string_cut_at_crlf() {
    zerotrace_fuzz_logic::text_config(include_bytes!(
        "../../regressions/text_config/string-cut-at-crlf"
    ));
}

/// A return address at the very start of the executable mapping: the
/// unwinder looks up the byte before a return address, which lies outside
/// the module there.
#[test]
fn perf_unwind_return_address_at_mapping_start() {
    zerotrace_fuzz_logic::perf_unwind(include_bytes!(
        "../../regressions/perf_unwind/return_address_at_mapping_start"
    ));
}

/// An `.eh_frame_hdr` whose search-table entries point before `.eh_frame`:
/// gimli turned the entry into an `.eh_frame` offset by an unchecked
/// subtraction (a panic under overflow checks, found by a dev-built fuzz
/// run; a wrapped offset in release). The table is now checked when
/// the module loads and dropped when unsound
/// (`tracing-core/unwind/src/eh_frame_hdr_check.rs`).
#[test]
fn perf_unwind_eh_frame_hdr_fde_before_eh_frame() {
    zerotrace_fuzz_logic::perf_unwind(include_bytes!(
        "../../regressions/perf_unwind/eh_frame_hdr_fde_before_eh_frame"
    ));
}

//! Inputs on which a fuzz target once failed, each a named test through the
//! target's logic (the corpus test replays them too, with every other
//! committed input). The inputs are `fuzz/regressions/<target>/<name>`.

/// An empty chunk stored exactly at the end of the ring stayed at the front
/// of the eviction queue after a wrap and stopped the eviction of the chunks
/// the next one overwrote: a later read returned another writer's bytes.
/// (The same case built by hand: `tracing-core/tests/fuzz_regressions.rs`.)
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

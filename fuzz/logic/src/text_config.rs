//! Text-format TraceConfigs (`zerotrace record --txt`): the parser never
//! panics; an error points at a line and column inside the text, and shows
//! that line with a caret under the column; a config that parses prints
//! (`to_text`) as text that parses again to the same bytes.

use zerotrace_cli::schema;
use zerotrace_cli::text_config::{TextConfigError, parse, to_text};

/// The file name errors are reported under.
const FILE: &str = "fuzz.cfg";

/// The `text_config` target: the input, as UTF-8 (invalid sequences
/// replaced), is a text config.
pub fn text_config(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    match parse(FILE, &text) {
        Ok(bytes) => round_trip(&text, &bytes),
        Err(e) => check_error(&text, &e),
    }
}

/// `bytes` (parsed from `text`) printed and parsed again are `bytes`.
fn round_trip(text: &str, bytes: &[u8]) {
    let printed = match to_text(schema::trace_config(), bytes) {
        Ok(printed) => printed,
        Err(e) => panic!("the encoding of a parsed config does not decode: {e}\n{text}"),
    };
    match parse(FILE, &printed) {
        Ok(again) => assert!(
            again == bytes,
            "printing and parsing again changed the config:\n--- input\n{text}\n--- printed\n{printed}\n--- bytes\n{bytes:02x?}\n--- again\n{again:02x?}"
        ),
        Err(e) => panic!(
            "the printed config does not parse: {e}\n--- input\n{text}\n--- printed\n{printed}"
        ),
    }
}

/// The error's position and excerpt are those of a place in `text`.
fn check_error(text: &str, e: &TextConfigError) {
    assert_eq!(e.file, FILE);
    // Lines as the error counts them: split at '\n' (a text ending in '\n'
    // has an empty last line, where an error at the very end points).
    let lines: Vec<&str> = text.split('\n').collect();
    assert!(
        e.line >= 1 && e.line <= lines.len(),
        "line {} of a {}-line text: {e}",
        e.line,
        lines.len()
    );
    let raw = lines[e.line - 1];
    // The column may point at any character of the line, its '\r' and '\n'
    // included (a string cut by the end of its line is reported there).
    let chars = raw.chars().count();
    assert!(
        e.column >= 1 && e.column <= chars + 1,
        "column {} of a {chars}-character line: {e}",
        e.column
    );
    // The excerpt is the line without its ending: "\n" or "\r\n" (a last
    // line keeps a lone '\r').
    let line = match raw.strip_suffix('\r') {
        Some(stripped) if e.line < lines.len() => stripped,
        _ => raw,
    };
    assert_eq!(e.source_line, line, "the excerpt is the line: {e}");
    assert_eq!(
        e.caret.chars().count(),
        e.column,
        "the caret is under the column"
    );
    assert!(e.caret.ends_with('^'));
    // Display never panics and starts with the position.
    let shown = e.to_string();
    assert!(shown.starts_with(&format!("{FILE}:{}:{} error: ", e.line, e.column)));
}

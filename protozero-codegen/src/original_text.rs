//! A `.proto` file's original text, before any lowering, read from the
//! include directories: what the front end's diagnoses and respellings
//! quote and search. A leaf, so that its readers need not import the
//! front end that drives them.

use std::path::PathBuf;

/// The original text of the file `name` (not lowered), from the first
/// include directory that has it.
pub(crate) fn source_text(includes: &[PathBuf], name: &str) -> Option<String> {
    includes
        .iter()
        .map(|d| d.join(name))
        .find(|p| p.is_file())
        .and_then(|p| std::fs::read_to_string(p).ok())
}

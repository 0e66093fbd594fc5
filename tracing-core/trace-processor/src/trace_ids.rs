//! The name each trace of a multi-trace session goes by: the value of
//! its `trace` column, and its partition in a Parquet dataset
//! (`TABLE/trace=ID/`). A name is derived from the file's name, made safe
//! as a path component and unique within the session, so that the SQL over
//! many traces and the dataset written from them name each trace alike.

use std::path::PathBuf;

/// A partition value for each trace file: its file name without the trace
/// extensions, every character but ASCII letters, digits, `.`, `_` and `-`
/// made `_`, and `-2`, `-3`... added where names would repeat.
pub fn trace_ids(paths: &[PathBuf]) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::with_capacity(paths.len());
    for p in paths {
        let mut name = p
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        for ext in [
            ".gz",
            ".pftrace",
            ".perfetto-trace",
            ".perfetto",
            ".trace",
            ".pb",
        ] {
            if let Some(stem) = name.strip_suffix(ext) {
                if !stem.is_empty() {
                    name = stem.to_owned();
                }
            }
        }
        let mut id: String = name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        if id.trim_matches('.').is_empty() {
            id = format!("trace_{}", out.len());
        }
        let mut unique = id.clone();
        let mut n = 2;
        while !seen.insert(unique.clone()) {
            unique = format!("{id}-{n}");
            n += 1;
        }
        out.push(unique);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trace_ids_are_partition_values_and_unique() {
        let paths: Vec<PathBuf> = [
            "/a/run 1.pftrace",
            "/b/run 1.pftrace",
            "x.perfetto-trace.gz",
            "=odd/..",
            "t.pb",
        ]
        .iter()
        .map(PathBuf::from)
        .collect();
        assert_eq!(trace_ids(&paths), ["run_1", "run_1-2", "x", "trace_3", "t"]);
    }
}

//! Every corpus entry of every fuzz target as a plain test: the committed
//! seeds (`fuzz/seeds/<target>/`) and regression inputs
//! (`fuzz/regressions/<target>/`, each a minimised input on which the
//! target once failed), and, where a local fuzzing run left them, the
//! corpus it grew (`fuzz/corpus/<target>/`) and the crashes it found
//! (`fuzz/artifacts/<target>/crash-*`), all through the same logic the
//! cargo-fuzz binaries run.
//!
//! A local corpus can be large, so at most `ZEROTRACE_FUZZ_CORPUS_LIMIT`
//! (default 2000) of its entries run per target, the count printed; seeds,
//! regressions and crashes always run in full.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::time::Instant;

use zerotrace_fuzz_logic::TARGETS;

/// `fuzz/`.
fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The files of `dir` (sorted; none if it does not exist) whose names
/// `keep` accepts.
fn files(dir: &Path, keep: impl Fn(&str) -> bool) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(&keep))
        .collect();
    out.sort();
    out
}

/// The logic of `target`.
fn logic(target: &str) -> fn(&[u8]) {
    match TARGETS.iter().find(|(name, _)| *name == target) {
        Some((_, f)) => *f,
        None => panic!("no target {target}"),
    }
}

/// Runs every entry of `target`'s corpora; fails naming each entry that
/// panicked.
fn replay(target: &str) {
    let f = logic(target);
    let fuzz = fuzz_dir();
    let limit: usize = std::env::var("ZEROTRACE_FUZZ_CORPUS_LIMIT")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2000);
    let local_corpus = files(&fuzz.join("corpus").join(target), |n| !n.starts_with('.'));
    let sets = [
        ("seeds", files(&fuzz.join("seeds").join(target), |_| true)),
        (
            "regressions",
            files(&fuzz.join("regressions").join(target), |_| true),
        ),
        (
            "artifacts",
            files(&fuzz.join("artifacts").join(target), |n| {
                n.starts_with("crash-")
            }),
        ),
        ("corpus", local_corpus.iter().take(limit).cloned().collect()),
    ];
    let start = Instant::now();
    let mut failed = Vec::new();
    let mut counts = Vec::new();
    for (set, entries) in &sets {
        for path in entries {
            let data = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            if catch_unwind(AssertUnwindSafe(|| f(&data))).is_err() {
                failed.push(path.display().to_string());
            }
        }
        counts.push(format!("{} {set}", entries.len()));
    }
    let skipped = local_corpus.len().saturating_sub(limit);
    println!(
        "{target}: {}{} in {:.2} s",
        counts.join(", "),
        if skipped > 0 {
            format!(
                " (of {} corpus entries; {skipped} skipped by the limit)",
                local_corpus.len()
            )
        } else {
            String::new()
        },
        start.elapsed().as_secs_f64()
    );
    // Every target starts from committed seeds (a regression input alone
    // is no seed corpus).
    assert!(
        !sets[0].1.is_empty(),
        "{target} has no committed seeds (fuzz/seeds/{target}/)"
    );
    assert!(
        failed.is_empty(),
        "{target} failed on:\n{}",
        failed.join("\n")
    );
}

macro_rules! corpus_tests {
    ($($target:ident),* $(,)?) => {
        $(
            #[test]
            fn $target() {
                replay(stringify!($target));
            }
        )*

        /// The tests above cover every target.
        #[test]
        fn every_target_is_replayed() {
            let tested = [$(stringify!($target)),*];
            let all: Vec<&str> = TARGETS.iter().map(|(name, _)| *name).collect();
            assert_eq!(tested.as_slice(), all.as_slice());
        }
    };
}

corpus_tests!(
    decoder,
    typed_decoder,
    trace_packet,
    trace_full_schema,
    commit_data_request,
    chunk_fragments,
    smb_abi,
    trace_buffer,
    ipc_frames,
    producer_port,
    producer_endpoint,
    consumer_port,
    trace_config,
    text_config,
    codegen_frontend,
    derive_decoders,
    trace_file,
    procfs,
    ftrace_page,
    perf_records,
    perf_unwind,
    trace_processor,
    trace_processor_time,
    json_trace,
    systrace_text,
    other_formats,
);

/// Every target has its cargo-fuzz binary (a `[[bin]]` in fuzz/Cargo.toml,
/// whose source calls the shared logic), and every binary is a target.
#[test]
fn the_cargo_fuzz_binaries_are_the_targets() {
    let fuzz = fuzz_dir();
    let manifest = std::fs::read_to_string(fuzz.join("Cargo.toml")).expect("fuzz/Cargo.toml");
    let bins: Vec<&str> = manifest
        .split("[[bin]]")
        .skip(1)
        .filter_map(|section| {
            section
                .lines()
                .find_map(|l| l.trim().strip_prefix("name = \""))
                .and_then(|r| r.strip_suffix('"'))
        })
        .collect();
    let names: Vec<&str> = TARGETS.iter().map(|(name, _)| *name).collect();
    assert_eq!(bins, names);
    for name in names {
        let source = std::fs::read_to_string(fuzz.join("fuzz_targets").join(format!("{name}.rs")))
            .unwrap_or_else(|e| panic!("fuzz_targets/{name}.rs: {e}"));
        assert!(
            source.contains(&format!("zerotrace_fuzz_logic::{name}(data)")),
            "fuzz_targets/{name}.rs does not call zerotrace_fuzz_logic::{name}"
        );
    }
}

/// The repository README's counts of fuzz targets ("the N of the M fuzz
/// targets" CI's smoke run takes: M every target, N those of them that
/// need no feature of the fuzz package) are the numbers of targets.
#[test]
fn the_readme_counts_every_target() {
    let readme = std::fs::read_to_string(fuzz_dir().join("../README.md")).expect("README.md");
    let manifest = std::fs::read_to_string(fuzz_dir().join("Cargo.toml")).expect("fuzz/Cargo.toml");
    let smoke = manifest
        .split("[[bin]]")
        .skip(1)
        .filter(|section| !section.contains("required-features"))
        .count();
    let flat = readme.split_whitespace().collect::<Vec<_>>().join(" ");
    let claim = format!("the {smoke} of the {} fuzz targets", TARGETS.len());
    assert!(
        flat.contains(&claim),
        "README.md does not say \"{claim}\" (fuzz/fuzz_targets holds {} targets, {smoke} without a feature)",
        TARGETS.len()
    );
}

//! `cargo xtask upstream-codegen`: runs our code generator over whole
//! public schema sets (Perfetto's upstream protos and others fetched through
//! the package registries at run time, never committed) and proves that the
//! output compiles, by writing one throwaway crate per corpus under
//! `target/upstream-codegen/` and building it; then that the generated
//! decoders read what `protoc --encode` writes for a sample of each
//! corpus' messages (module `roundtrip`). The code is generated with the
//! pure front end, and `protoc`'s descriptors and code for the same files
//! must be the same (module `front_ends`).
//!
//! Each corpus says where its files come from, which include roots it
//! needs, which files it generates and which it skips (with the reason);
//! the run prints a table of files generated / compiled / skipped and the
//! round trip's counts.

mod build;
mod front_ends;
mod list;
mod locate;
mod report;
mod roundtrip;
mod rustnames;
mod sample;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use protozero_codegen::{CodegenError, FrontEnd, Generated};

pub use list::CORPORA;
pub use report::Outcome;

/// Why a corpus run failed.
#[derive(Debug, thiserror::Error)]
pub enum CorpusError {
    /// The corpus' files could not be found or fetched.
    #[error("locating sources: {0}")]
    Locate(String),
    /// The generator failed.
    #[error("code generation: {0}")]
    Codegen(#[from] CodegenError),
    /// Writing the throwaway crate or running cargo failed.
    #[error("{path}: {source}")]
    Io {
        /// The file, directory or program.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// No corpus has this name.
    #[error("unknown corpus `{0}` (known: {1})")]
    UnknownCorpus(String, String),
}

/// Where a corpus' files come from.
#[derive(Debug, Clone, Copy)]
pub enum Source {
    /// The sources of a registry crate, resolved through `cargo metadata`
    /// on `manifest` (relative to the workspace root), which lists it under
    /// a never-true `cfg(any())` target so it is fetched but not built.
    Crate {
        /// Manifest that depends on the crate.
        manifest: &'static str,
        /// Package name.
        package: &'static str,
    },
    /// The include directory shipped by `protoc-bin-vendored`.
    ProtocInclude,
    /// A wheel from PyPI, fetched with `pip download --no-deps` into
    /// `target/upstream-codegen/pypi` and unpacked there.
    Pypi {
        /// Distribution name.
        package: &'static str,
        /// Exact version.
        version: &'static str,
    },
}

/// A public schema set to generate and compile.
#[derive(Debug, Clone, Copy)]
pub struct Corpus {
    /// Short name (also the throwaway crate's directory).
    pub name: &'static str,
    /// What the schema set is, for the report.
    pub title: &'static str,
    /// Where it comes from.
    pub source: Source,
    /// Include roots, relative to the source directory (`""` is the directory itself).
    pub includes: &'static [&'static str],
    /// Directories or files, relative to the source directory, whose
    /// `.proto` files are generated.
    pub inputs: &'static [&'static str],
    /// Whether protoc's well-known types are an extra include root.
    pub with_protoc_include: bool,
    /// Files (or directory prefixes), relative to the source directory,
    /// that are not generated, each with the reason.
    pub excludes: &'static [(&'static str, &'static str)],
}

impl Corpus {
    /// The corpus named `name`.
    pub fn by_name(name: &str) -> Result<&'static Corpus, CorpusError> {
        CORPORA.iter().find(|c| c.name == name).ok_or_else(|| {
            let known: Vec<&str> = CORPORA.iter().map(|c| c.name).collect();
            CorpusError::UnknownCorpus(name.to_owned(), known.join(", "))
        })
    }

    fn source_dir(&self, workspace: &Path, out: &Path) -> Result<PathBuf, CorpusError> {
        match self.source {
            Source::Crate { manifest, package } => {
                locate::crate_dir(&workspace.join(manifest), package)
            }
            Source::ProtocInclude => locate::protoc_include(),
            Source::Pypi { package, version } => {
                locate::pypi_wheel(&out.join("pypi"), package, version)
            }
        }
    }

    /// The reason `rel` (relative to the source directory) is skipped, if it is.
    fn excluded(&self, rel: &str) -> Option<&'static str> {
        self.excludes
            .iter()
            .find(|(prefix, _)| corpus_match(rel, prefix))
            .map(|(_, why)| *why)
    }
}

/// Whether relative path `rel` is `prefix` or lies under directory `prefix`.
fn corpus_match(rel: &str, prefix: &str) -> bool {
    rel == prefix
        || rel
            .strip_prefix(prefix)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// Files of one corpus: what is generated and what was skipped.
#[derive(Debug, Default)]
pub struct Selection {
    /// Inputs, absolute paths.
    pub inputs: Vec<PathBuf>,
    /// Skipped files (relative to the source directory) and why.
    pub skipped: Vec<(String, &'static str)>,
}

/// Lists the corpus' input files under `dir` and applies the exclude list.
pub fn select(corpus: &Corpus, dir: &Path) -> Result<Selection, CorpusError> {
    let mut sel = Selection::default();
    for input in corpus.inputs {
        let path = dir.join(input);
        let files = if path.is_file() {
            vec![path]
        } else {
            protozero_codegen::parse::find_proto_files(&path)?
        };
        for f in files {
            let rel = f
                .strip_prefix(dir)
                .unwrap_or(&f)
                .to_string_lossy()
                .replace('\\', "/");
            match corpus.excluded(&rel) {
                Some(why) => sel.skipped.push((rel, why)),
                None => sel.inputs.push(f),
            }
        }
    }
    sel.inputs.sort();
    sel.inputs.dedup();
    // An entry that matches nothing means the corpus changed under us: the
    // list must be revisited rather than silently carried along.
    if let Some((stale, _)) = corpus
        .excludes
        .iter()
        .find(|(prefix, _)| !sel.skipped.iter().any(|(rel, _)| corpus_match(rel, prefix)))
    {
        return Err(CorpusError::Locate(format!(
            "exclude entry `{stale}` of corpus {} matches no input file",
            corpus.name
        )));
    }
    Ok(sel)
}

/// Options of one `upstream-codegen` run.
#[derive(Debug, Clone)]
pub struct Options {
    /// Corpora to run, by name (empty: all).
    pub corpora: Vec<String>,
    /// Generate only; do not build the throwaway crates.
    pub no_build: bool,
    /// Build only; skip the protoc round trip through the decoders.
    pub no_roundtrip: bool,
}

/// Runs the selected corpora; `Ok(false)` if any failed (all are attempted).
pub fn run(workspace: &Path, opts: &Options) -> Result<bool, CorpusError> {
    let corpora: Vec<&Corpus> = if opts.corpora.is_empty() {
        CORPORA.iter().collect()
    } else {
        opts.corpora
            .iter()
            .map(|n| Corpus::by_name(n))
            .collect::<Result<_, _>>()?
    };
    let out = workspace.join("target/upstream-codegen");
    let mut outcomes = Vec::new();
    for corpus in corpora {
        println!("== corpus {}: {}", corpus.name, corpus.title);
        let outcome = run_one(workspace, &out, corpus, opts);
        outcome.print_summary();
        outcomes.push(outcome);
    }
    let table = report::table(&outcomes);
    println!("\n{table}");
    let report_path = out.join("report.md");
    std::fs::create_dir_all(&out).map_err(|source| CorpusError::Io {
        path: out.clone(),
        source,
    })?;
    std::fs::write(&report_path, &table).map_err(|source| CorpusError::Io {
        path: report_path,
        source,
    })?;
    Ok(outcomes.iter().all(Outcome::ok))
}

fn run_one(workspace: &Path, out: &Path, corpus: &'static Corpus, opts: &Options) -> Outcome {
    let mut outcome = Outcome::new(corpus);
    let started = Instant::now();
    let generated = (|| {
        let dir = corpus.source_dir(workspace, out)?;
        let sel = select(corpus, &dir)?;
        let mut includes: Vec<PathBuf> = corpus.includes.iter().map(|i| dir.join(i)).collect();
        if corpus.with_protoc_include {
            includes.push(locate::protoc_include()?);
        }
        let parsed =
            protozero_codegen::parse::parse_files(&includes, &sel.inputs, &FrontEnd::Pure)?;
        let files = protozero_codegen::generate_rust(
            &parsed.schema,
            protozero_codegen::DEFAULT_HEADER,
            "mod.rs",
            None,
        )?;
        let generated = Generated { files };
        let generate_time = started.elapsed();
        // The round trip encodes with protoc against the very descriptors
        // the code was generated from (the pure front end's own
        // well-known types are not protoc's copies).
        let set = parsed.descriptors.to_bytes()?;
        let comparison = front_ends::compare(&includes, &sel.inputs, &set, &generated)?;
        Ok::<_, CorpusError>((
            sel,
            generated,
            parsed.schema,
            set,
            generate_time,
            comparison,
        ))
    })();
    outcome.generate_time = started.elapsed();
    let (sel, generated, schema, set, generate_time, comparison) = match generated {
        Ok(g) => g,
        Err(e) => {
            outcome.error = Some(e.to_string());
            return outcome;
        }
    };
    outcome.generate_time = generate_time;
    outcome.record_generation(&sel, &generated);
    outcome.front_ends = Some((comparison.files, comparison.protoc_time));
    if let Some(d) = comparison.difference {
        outcome.error = Some(format!("the pure front end and protoc disagree: {d}"));
        return outcome;
    }
    if opts.no_build {
        return outcome;
    }
    let started = Instant::now();
    let built = build::write_crate(workspace, out, corpus.name, &generated)
        .and_then(|()| build::build_crate(out, corpus.name));
    outcome.build_time = Some(started.elapsed());
    if let Err(e) = built {
        outcome.error = Some(e.to_string());
        return outcome;
    }
    outcome.compiled = true;
    if opts.no_roundtrip {
        return outcome;
    }
    let started = Instant::now();
    let mut rt = roundtrip::RoundTrip::default();
    let checked = roundtrip::write_test(out, corpus.name, &schema, &set).and_then(|r| {
        rt = r;
        roundtrip::run_test(out, corpus.name, &mut rt)
    });
    outcome.roundtrip_time = Some(started.elapsed());
    if let Err(e) = checked {
        outcome.error = Some(e.to_string());
    }
    outcome.roundtrip = Some(rt);
    outcome
}

/// Seconds with one decimal, for reports.
pub fn secs(d: Duration) -> String {
    format!("{:.1}s", d.as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEST: Corpus = Corpus {
        name: "test",
        title: "test corpus",
        source: Source::Crate {
            manifest: "x",
            package: "y",
        },
        includes: &[""],
        inputs: &["a", "top.proto"],
        with_protoc_include: false,
        excludes: &[("a/dup.proto", "duplicate"), ("a/old", "old tree")],
    };

    fn touch(dir: &Path, rel: &str) {
        let p = dir.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, "syntax = \"proto3\";\n").unwrap();
    }

    #[test]
    fn excludes_match_files_and_directories_only() {
        assert!(corpus_match("a/old/x.proto", "a/old"));
        assert!(corpus_match("a/dup.proto", "a/dup.proto"));
        assert!(!corpus_match("a/older/x.proto", "a/old"));
        assert!(!corpus_match("a/dup.proto.bak", "a/dup.proto"));
    }

    #[test]
    fn selection_skips_excluded_files_with_reasons() {
        let dir = tempfile::tempdir().unwrap();
        for f in [
            "a/x.proto",
            "a/dup.proto",
            "a/old/y.proto",
            "top.proto",
            "b/z.proto",
        ] {
            touch(dir.path(), f);
        }
        let sel = select(&TEST, dir.path()).unwrap();
        let inputs: Vec<_> = sel
            .inputs
            .iter()
            .map(|p| {
                p.strip_prefix(dir.path())
                    .unwrap()
                    .to_string_lossy()
                    .into_owned()
            })
            .collect();
        assert_eq!(inputs, ["a/x.proto", "top.proto"]);
        let mut skipped = sel.skipped.clone();
        skipped.sort();
        assert_eq!(
            skipped,
            [
                ("a/dup.proto".to_owned(), "duplicate"),
                ("a/old/y.proto".to_owned(), "old tree")
            ]
        );
    }

    #[test]
    fn stale_exclude_entries_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        touch(dir.path(), "a/x.proto");
        touch(dir.path(), "a/dup.proto");
        touch(dir.path(), "top.proto");
        let err = select(&TEST, dir.path()).unwrap_err().to_string();
        assert!(err.contains("a/old"), "{err}");
    }

    #[test]
    fn corpus_names_are_unique_and_known() {
        for c in CORPORA {
            assert_eq!(Corpus::by_name(c.name).unwrap().name, c.name);
        }
        assert!(Corpus::by_name("nope").is_err());
    }
}

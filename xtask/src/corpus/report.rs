//! What one corpus run produced, and the markdown table the run prints
//! (and writes to `target/upstream-codegen/report.md`) for the README.

use std::time::Duration;

use protozero_codegen::Generated;

use super::roundtrip::RoundTrip;
use super::{Corpus, Selection, secs};

/// The result of generating and building one corpus.
#[derive(Debug)]
pub struct Outcome {
    /// The corpus.
    pub corpus: &'static Corpus,
    /// Input files generated.
    pub inputs: usize,
    /// Files generated because inputs import them.
    pub imported: usize,
    /// Lines of Rust generated.
    pub lines: usize,
    /// Skipped files and reasons.
    pub skipped: Vec<(String, &'static str)>,
    /// Whether the throwaway crate built.
    pub compiled: bool,
    /// Time spent parsing and generating.
    pub generate_time: Duration,
    /// Time spent building, if built.
    pub build_time: Option<Duration>,
    /// Round trip through the decoders, if run.
    pub roundtrip: Option<RoundTrip>,
    /// Time spent encoding with protoc and running the round-trip test.
    pub roundtrip_time: Option<Duration>,
    /// Files whose descriptors and code the two front ends agree on, and
    /// protoc's parse time, once compared.
    pub front_ends: Option<(usize, Duration)>,
    /// What failed, if anything.
    pub error: Option<String>,
}

impl Outcome {
    /// An outcome with nothing done yet.
    pub fn new(corpus: &'static Corpus) -> Self {
        Outcome {
            corpus,
            inputs: 0,
            imported: 0,
            lines: 0,
            skipped: Vec::new(),
            compiled: false,
            generate_time: Duration::ZERO,
            build_time: None,
            roundtrip: None,
            roundtrip_time: None,
            front_ends: None,
            error: None,
        }
    }

    /// Records the generator's output for `sel`.
    pub fn record_generation(&mut self, sel: &Selection, generated: &Generated) {
        let rs_files = generated
            .files
            .iter()
            .filter(|f| f.path.extension().is_some_and(|e| e == "rs"))
            .count();
        // One root file besides the per-.proto files.
        let per_proto = rs_files.saturating_sub(1);
        self.inputs = sel.inputs.len();
        self.imported = per_proto.saturating_sub(sel.inputs.len());
        self.lines = generated
            .files
            .iter()
            .map(|f| f.contents.iter().filter(|&&b| b == b'\n').count())
            .sum();
        self.skipped = sel.skipped.clone();
    }

    /// Whether the corpus generated (and, if asked, compiled) without error.
    pub fn ok(&self) -> bool {
        self.error.is_none()
    }

    /// Prints a short per-corpus summary, with every skipped file.
    pub fn print_summary(&self) {
        for (file, why) in &self.skipped {
            println!("   skipped {file}: {why}");
        }
        if let Some(rt) = &self.roundtrip {
            for e in &rt.unencodable {
                println!("   protoc could not encode {e}");
            }
            println!(
                "   round trip: {} messages, {} cases, {} passed, {} failed, {}",
                rt.messages,
                rt.cases,
                rt.passed,
                rt.failed,
                self.roundtrip_time.map_or_else(|| "-".to_owned(), secs)
            );
        }
        match &self.error {
            Some(e) => println!("   FAILED: {e}"),
            None => println!(
                "   ok: {} files generated ({} imported), {} lines, generate {}{}, build {}",
                self.inputs + self.imported,
                self.imported,
                self.lines,
                secs(self.generate_time),
                self.front_ends.map_or_else(String::new, |(n, t)| format!(
                    "; protoc's descriptors and code agree for {n} files (protoc {})",
                    secs(t)
                )),
                self.build_time.map_or_else(|| "skipped".to_owned(), secs)
            ),
        }
    }
}

/// A markdown table: one row per corpus.
pub fn table(outcomes: &[Outcome]) -> String {
    let mut s = String::from(
        "| corpus | files generated | compiled | skipped (reason) | Rust lines | generate (pure) | \
         protoc agrees: files (protoc's parse) | build | \
         round trip: messages / cases / passed | round trip |\n\
         |---|---|---|---|---|---|---|---|---|---|\n",
    );
    for o in outcomes {
        let compiled = if o.compiled {
            format!("{}", o.inputs + o.imported)
        } else if o.build_time.is_none() && o.error.is_none() {
            "not built".to_owned()
        } else {
            "0 (failed)".to_owned()
        };
        let mut reasons: Vec<&str> = o.skipped.iter().map(|(_, w)| *w).collect();
        reasons.sort_unstable();
        reasons.dedup();
        let skipped = if o.skipped.is_empty() {
            "0".to_owned()
        } else {
            format!("{} ({})", o.skipped.len(), reasons.join("; "))
        };
        s.push_str(&format!(
            "| {} | {} ({} imported) | {} | {} | {} | {} | {} | {} | {} | {} |\n",
            o.corpus.name,
            o.inputs + o.imported,
            o.imported,
            compiled,
            skipped,
            o.lines,
            secs(o.generate_time),
            match (&o.front_ends, &o.error) {
                (Some((n, t)), None) => format!("{n} ({})", secs(*t)),
                (Some(_), Some(_)) => "no".to_owned(),
                (None, _) => "-".to_owned(),
            },
            o.build_time.map_or_else(|| "-".to_owned(), secs),
            o.roundtrip.as_ref().map_or_else(
                || "-".to_owned(),
                |r| format!("{} / {} / {}", r.messages, r.cases, r.passed)
            ),
            o.roundtrip_time.map_or_else(|| "-".to_owned(), secs)
        ));
    }
    s
}

//! Repository task runner (`cargo xtask <task>`): jobs that need the whole
//! workspace, such as regenerating the checked-in protobuf code, kept out of
//! build scripts so normal builds stay fast and offline.

mod codegen;
mod corpus;
mod decode_data;
mod fuzz;
mod fuzz_build;
mod heap_cost;
mod instructions;
mod interop;
mod miri;
mod msrv;
mod perf_cost;
mod private_deps;
mod required;
mod scale;
mod soak;
mod suites;
mod tp_bench;
mod tp_bench_formats;
mod tp_bench_json;
mod tp_bench_perf;
mod tp_conformance;
mod tp_data;
mod tp_parquet;
mod tp_python;
mod tp_threads_check;
mod tsan;
mod unoptimised;
mod valgrind;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Workspace tasks.
#[derive(Debug, Parser)]
#[command(name = "cargo xtask", about = "zerotrace workspace tasks")]
struct Cli {
    #[command(subcommand)]
    task: Task,
}

#[derive(Debug, Subcommand)]
enum Task {
    /// Regenerate every output of the schema pipeline (protos/pipeline):
    /// protos/src/generated (ours and upstream's messages) and the
    /// command's descriptor set.
    Codegen {
        /// Do not write; fail (exit 1) and list the files that are stale.
        #[arg(long)]
        check: bool,
        /// Parse with Google's protoc (vendored) instead of the pure-Rust front end (protox).
        #[arg(long)]
        protoc: bool,
    },
    /// Generate and compile whole public schema sets (Perfetto upstream and
    /// others fetched from the package registries) in throwaway crates
    /// under target/upstream-codegen.
    UpstreamCodegen {
        /// Only these corpora (repeatable); default: all.
        #[arg(long = "corpus")]
        corpora: Vec<String>,
        /// Generate only, do not build.
        #[arg(long)]
        no_build: bool,
        /// Build only, skip the protoc-encoded round trip through the decoders.
        #[arg(long)]
        no_roundtrip: bool,
    },
    /// Run the tests that exercise unsafe code under Miri, with Stacked and
    /// Tree Borrows (needs a nightly toolchain with the miri component).
    Miri {
        /// Proptest cases per property (CI uses few; the long run more).
        #[arg(long, default_value_t = 4)]
        cases: u32,
        /// Fail when no nightly Miri is installed instead of skipping (as
        /// ZEROTRACE_REQUIRE_MIRI=1 or CI set do).
        #[arg(long)]
        require: bool,
        /// Every target, the slow ones included (CI runs the short list).
        #[arg(long)]
        full: bool,
    },
    /// Build protozero, protozero-codegen and protozero-derive, and the
    /// code the generator emits, with the MSRV toolchain itself (Rust
    /// `rust-version`, from Debian's packages; see xtask/src/msrv/mod.rs).
    Msrv,
    /// Check that the public API of protozero and protozero-codegen names
    /// no type of a private dependency (nightly's
    /// exported_private_dependencies lint; skipped without a nightly, a
    /// failure under CI or ZEROTRACE_REQUIRE_PRIVATE_DEPS=1).
    PrivateDeps,
    /// Run the test binaries of protozero and zerotrace-core under
    /// valgrind's memcheck (CI's short list; every binary with --full).
    Valgrind {
        /// Every test binary of the two crates.
        #[arg(long)]
        full: bool,
    },
    /// The hot paths under callgrind's instruction counts (TRACE_EVENT,
    /// the `tracing` Layer, the SMB write, the generated decoders, the
    /// heap profiler's sample, and their baselines): instructions per
    /// iteration against xtask/instruction-budgets.toml, and the issues'
    /// ratio goals (release examples; needs valgrind).
    Instructions {
        /// Fail (exit 1) on a path over its budget by more than the
        /// tolerance, a path without a budget, or a goal missed.
        #[arg(long)]
        check: bool,
        /// Write the measured figures into the budget file.
        #[arg(long)]
        bless: bool,
        /// Only these paths (repeatable).
        #[arg(long = "path")]
        only: Vec<String>,
        /// Also count the genuine Perfetto C SDK's slice (built at -O3 in
        /// the `hot-paths` profile: minutes of a cold build, so not part
        /// of CI's `--check`) and fail unless TRACE_EVENT costs at most
        /// 0.2× its instructions (issue 61). Run before closing an issue
        /// that touches the TrackEvent path; BENCHMARKS.md has today's
        /// figures.
        #[arg(long)]
        genuine: bool,
    },
    /// Run every cargo-fuzz target (or those named) for N seconds each,
    /// seeded from fuzz/seeds; reports executions and findings per target.
    Fuzz {
        /// Seconds per target.
        #[arg(long, default_value_t = 60)]
        seconds: u64,
        /// Only these targets (repeatable).
        #[arg(long = "target")]
        targets: Vec<String>,
        /// Build unoptimised, with debug assertions and overflow checks
        /// (CI's smoke run: a quicker build, fewer executions, and an
        /// arithmetic overflow anywhere in the fuzzed code is a finding).
        #[arg(long)]
        dev: bool,
        /// Only the targets over code with `unsafe` in it and the wire
        /// protocols' endpoints (CI's smoke run): not `trace_full_schema`
        /// (Perfetto's whole generated schema), nor the targets over the
        /// trace processor, the command line and the code generator, whose
        /// sanitized build is most of the whole one. `cargo test` replays
        /// every target's corpus.
        #[arg(long)]
        smoke: bool,
    },
    /// Build the genuine Perfetto SDK clients and run the interop tests
    /// against genuine Perfetto (its service, trace buffers, SDK and schemas).
    Interop {
        /// Also run the end-to-end benchmark (zerotraced vs the genuine service)
        /// and the TrackEvent benchmark (vs the C SDK and other layers).
        #[arg(long)]
        bench: bool,
    },
    /// Run the tests where this process's threads share memory with the
    /// embedded service under ThreadSanitizer (nightly, `rust-src`).
    Tsan,
    /// The soak (issue #22): producer processes (default 16 × 4 threads ×
    /// 60 s) write into a ring-buffer session of zerotraced and then of the
    /// genuine Perfetto service while a consumer reads every second; prints
    /// each service's resident set over time, the packets and the losses.
    Soak {
        /// `ours`, `genuine` or `both` (default).
        #[arg(long)]
        which: Option<String>,
        /// Producer processes (default 16).
        #[arg(long)]
        producers: Option<u32>,
        /// Writer threads per producer (default 4).
        #[arg(long)]
        threads: Option<u32>,
        /// Seconds of writing (default 60).
        #[arg(long)]
        seconds: Option<f64>,
        /// Packets a second per thread, 0 for unpaced (default 2000).
        #[arg(long)]
        rate: Option<u32>,
        /// The ring buffer in KiB (default 32768).
        #[arg(long)]
        buffer_kb: Option<u32>,
        /// Writing samples (one a second) per table row (default 5).
        #[arg(long)]
        table_step: Option<u32>,
    },
    /// The scale sweep (issue 32): 1, 16, 64 and 256 producer processes,
    /// each writing at the same rate into one session of zerotraced and of
    /// the genuine Perfetto service in turn; prints each service's CPU
    /// time per MB ingested and read and writes the plot as an SVG.
    Scale {
        /// Producer counts, comma-separated (default 1,16,64,256).
        #[arg(long)]
        producers: Option<String>,
        /// Seconds each run writes (default 8).
        #[arg(long)]
        seconds: Option<f64>,
        /// Packets a second per producer (default 200).
        #[arg(long)]
        rate: Option<u32>,
        /// Runs of each service per point; the table takes the median
        /// (default 3).
        #[arg(long)]
        repeat: Option<u32>,
        /// Where the plot goes (default target/scale/scale.svg).
        #[arg(long)]
        svg: Option<String>,
    },
    /// The heap profiler's overhead next to dhat-rs and heaptrack (issue
    /// #40): an allocation-heavy Rust and C workload, plain, idle,
    /// profiled at 4096 bytes and under the other profilers.
    HeapCost {
        /// Rounds of the table (default 5).
        #[arg(long, default_value_t = 5)]
        rounds: u32,
        /// Rounds of the workload in each run (default 40).
        #[arg(long, default_value_t = 40)]
        work: u32,
        /// Only issue #51's allocation-heavy C program (plain, idle,
        /// lossless at 4096 bytes, heaptrack).
        #[arg(long)]
        churn_only: bool,
    },
    /// Record the decode bench's data sets (protos/decode-bench): traces
    /// of TrackEvent and the system probes through the in-process service,
    /// into target/decode-bench-data/ unless --out says otherwise.
    DecodeData {
        /// The directory to write to.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Only this data set (`recorded`, the bench's; `recorded-small`,
        /// its tests').
        #[arg(long)]
        only: Option<String>,
        /// Write each trace this many times over (traces concatenate): a
        /// larger file for timing the command-line tools.
        #[arg(long)]
        copies: Option<usize>,
    },
    /// Record the trace processor bench's trace (issue 49): TrackEvent
    /// from several threads, ftrace sched, process and sys stats and
    /// linux.perf samples through the in-process service, about --mb MB,
    /// into target/tp-bench-data/tp.pftrace unless --out says otherwise;
    /// prints its size and packets per kind.
    TpData {
        /// The directory to write to.
        #[arg(long)]
        out: Option<PathBuf>,
        /// The target size in MB (default 200).
        #[arg(long)]
        mb: Option<u64>,
        /// Record as a long trace: written into the file while it runs,
        /// with periodic flushes (see tp_data::Options::long_trace).
        #[arg(long)]
        long_trace: bool,
    },
    /// The trace processor's performance figures (issue 49): load
    /// throughput and its split, the scanner floor, peak memory, the
    /// standard queries with their plans (release build). Loads TRACE, or
    /// tp-data's trace (recorded first when missing).
    TpBench {
        /// The trace (default: tp-data's, or with --json / --perf-text
        /// the generated one).
        trace: Option<PathBuf>,
        /// Timed loads (default 3).
        #[arg(long)]
        runs: Option<u32>,
        /// Chrome JSON instead (issue 65): a generated trace of --mb MB
        /// (or TRACE), its load's CPU time and peak memory.
        #[arg(long, conflicts_with = "perf_text")]
        json: bool,
        /// `perf script` text instead, likewise.
        #[arg(long)]
        perf_text: bool,
        /// The generated trace's size in MB (default 300).
        #[arg(long)]
        mb: Option<u64>,
    },
    /// Run Perfetto's trace processor diff test cases (index.json, each
    /// case's trace.pb, query.sql, expected.csv) through our trace
    /// processor; PASS/FAIL per case with the first differing line.
    TpConformance {
        /// The cases' directory (default: `perfetto-difftests` in the
        /// `shared` directory beside the repository).
        dir: Option<PathBuf>,
        /// Fail unless at least this many cases pass (CI's floor: what
        /// passes today, so that no change takes a passing case back).
        #[arg(long)]
        min_pass: Option<usize>,
        /// Each case's time limit in seconds (a case runs in a process of
        /// its own, killed past it).
        #[arg(long, default_value_t = tp_conformance::DEFAULT_CASE_TIMEOUT.as_secs())]
        case_timeout: u64,
        /// Cases run at once (default: one per core).
        #[arg(long, default_value_t = 0)]
        jobs: usize,
        /// Instead of the expected outputs, check that each case's trace
        /// loads to the same tables (every row) on one thread and on
        /// several: a case passes when they agree.
        #[arg(long)]
        threads_check: bool,
    },
    /// One case of `tp-conformance`, in the process it runs each case in:
    /// prints PASS, or FAIL and the reason.
    #[command(hide = true)]
    TpConformanceCase {
        /// The case's directory.
        dir: PathBuf,
        /// Compare the loads on one and several threads instead.
        #[arg(long)]
        threads_check: bool,
    },
    /// Google's Python client (`perfetto` from PyPI, in a venv under
    /// target/tp-python) against zerotrace-tp and `zerotrace sql --httpd`:
    /// every answer must equal `zerotrace sql -q`'s. Skips without Python
    /// unless ZEROTRACE_REQUIRE_PYTHON_PERFETTO=1.
    TpPython {
        /// More traces to query (a demo recording is always queried).
        traces: Vec<PathBuf>,
        /// Perfetto diff test cases (index.json) to query too.
        #[arg(long)]
        cases: Option<PathBuf>,
        /// An interpreter with `perfetto` installed, instead of the venv.
        #[arg(long)]
        python: Option<PathBuf>,
        /// Measure the cells per second of an answer this many rows long
        /// (release binaries) instead of comparing.
        #[arg(long, value_name = "ROWS")]
        throughput: Option<u64>,
        /// Take zerotrace and zerotrace-tp from DIR instead of building
        /// them (CI: the ones `cargo test` built).
        #[arg(long, value_name = "DIR")]
        bins: Option<PathBuf>,
        /// Only make the venv (target/tp-python/venv, with `perfetto`,
        /// `pandas` and `duckdb`) and print its interpreter: CI makes it
        /// once before tp-python and tp-parquet run side by side.
        #[arg(long)]
        venv_only: bool,
    },
    /// DuckDB (PyPI, in tp-python's venv) over the Parquet dataset
    /// `zerotrace export` writes: every answer must equal `zerotrace sql`'s,
    /// per trace and over a fleet of 20 or more traces. Skips without
    /// Python unless ZEROTRACE_REQUIRE_PYTHON_PERFETTO=1.
    TpParquet {
        /// Perfetto diff test cases (index.json): their traces join the
        /// fleet.
        #[arg(long)]
        cases: Option<PathBuf>,
        /// An interpreter with `duckdb` installed, instead of the venv.
        #[arg(long)]
        python: Option<PathBuf>,
        /// Measure on this trace (release binaries): the export's
        /// throughput, and the standard queries in DuckDB beside ours.
        #[arg(long, value_name = "TRACE")]
        bench: Option<PathBuf>,
        /// Take zerotrace from DIR instead of building it.
        #[arg(long, value_name = "DIR")]
        bins: Option<PathBuf>,
    },
    /// Issue #39's cost of linux.perf at 1 kHz per CPU (DWARF) next to
    /// `perf record` + `perf script` at the same rate, on two CPU-bound
    /// fixture programs: the workload's slowdown, each sampler's CPU per
    /// sample, samples lost, bytes per sample (medians of the rounds).
    /// Needs root, `perf` and `rustc`.
    PerfCost {
        /// Rounds (default 3).
        #[arg(long)]
        rounds: Option<u32>,
        /// Seconds each workload runs (default 5).
        #[arg(long)]
        seconds: Option<f64>,
        /// Our ring buffer's data pages per CPU (default 256).
        #[arg(long)]
        pages: Option<u32>,
        /// Sampling frequency per CPU, Hz (default 1000).
        #[arg(long)]
        frequency: Option<u64>,
    },
}

/// The exit of a task that could not run here: success, unless `var` is
/// `1` or CI is set (`required.rs`), where a skipped check is a failure.
fn skipped(var: &str) -> ExitCode {
    if required::required(var) {
        eprintln!("error: {var}=1 or CI: this check must run here, not skip");
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// The workspace root (the parent of this crate's directory).
/// The exit code of a step that passes, fails, or cannot run (said on
/// stderr).
fn verdict(res: Result<bool, impl std::fmt::Display>) -> ExitCode {
    match res {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn workspace_root() -> PathBuf {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().map(PathBuf::from).unwrap_or(manifest)
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.task {
        Task::Fuzz {
            seconds,
            targets,
            dev,
            smoke,
        } => match fuzz::run(
            &workspace_root(),
            seconds,
            &targets,
            dev,
            if smoke {
                fuzz::Selection::Smoke
            } else {
                fuzz::Selection::All
            },
        ) {
            Ok(outcomes) if outcomes.iter().any(|o| o.crashed) => ExitCode::FAILURE,
            Ok(outcomes) => {
                for o in &outcomes {
                    println!(
                        "| {} | {} executions | {:.0} s |",
                        o.target, o.executions, o.seconds
                    );
                }
                let total: u64 = outcomes.iter().map(|o| o.executions).sum();
                println!(
                    "fuzz: {} targets, {total} executions, no crash",
                    outcomes.len()
                );
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::FAILURE
            }
        },
        Task::Tsan => match tsan::run(&workspace_root()) {
            Ok(Some(())) => {
                println!("tsan: clean");
                ExitCode::SUCCESS
            }
            Ok(None) => {
                println!("tsan: skipped, no nightly toolchain with rust-src here");
                skipped("ZEROTRACE_REQUIRE_TSAN")
            }
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::FAILURE
            }
        },
        Task::Miri {
            cases,
            require,
            full,
        } => match miri::run(&workspace_root(), cases, full) {
            Ok(Some(true)) => ExitCode::SUCCESS,
            Ok(Some(false)) => ExitCode::FAILURE,
            Ok(None) if require => {
                eprintln!(
                    "error: no nightly toolchain with Miri (rustup component add --toolchain nightly miri)"
                );
                ExitCode::FAILURE
            }
            Ok(None) => {
                println!("miri: skipped, no nightly toolchain with the miri component here");
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::FAILURE
            }
        },
        Task::Msrv => match msrv::run(&workspace_root()) {
            Ok(msrv::Outcome::Passed(version)) => {
                println!("msrv: ok ({version})");
                ExitCode::SUCCESS
            }
            Ok(msrv::Outcome::Failed) => ExitCode::FAILURE,
            Ok(msrv::Outcome::Skipped(why)) => {
                println!("msrv: skipped: {why}");
                skipped("ZEROTRACE_REQUIRE_MSRV")
            }
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::FAILURE
            }
        },
        Task::PrivateDeps => match private_deps::run(&workspace_root()) {
            Ok(Some(true)) => {
                println!("private-deps: ok");
                ExitCode::SUCCESS
            }
            Ok(Some(false)) => ExitCode::FAILURE,
            Ok(None) => {
                println!("private-deps: skipped, no nightly toolchain here");
                skipped("ZEROTRACE_REQUIRE_PRIVATE_DEPS")
            }
            Err(e) => {
                eprintln!("error: cargo: {e}");
                ExitCode::FAILURE
            }
        },
        Task::Instructions {
            check,
            bless,
            only,
            genuine,
        } => verdict(instructions::run(
            &workspace_root(),
            check,
            bless,
            &only,
            genuine,
        )),
        Task::Valgrind { full } => verdict(valgrind::run(&workspace_root(), full)),
        Task::Interop { bench } => verdict(interop::run(&workspace_root(), bench)),
        Task::Soak {
            which,
            producers,
            threads,
            seconds,
            rate,
            buffer_kb,
            table_step,
        } => {
            let opts = soak::Options {
                which,
                producers,
                threads,
                seconds,
                rate,
                buffer_kb,
                table_step,
            };
            verdict(soak::run(&workspace_root(), &opts))
        }
        Task::Scale {
            producers,
            seconds,
            rate,
            repeat,
            svg,
        } => {
            let opts = scale::Options {
                producers,
                seconds,
                rate,
                repeat,
                svg,
            };
            verdict(scale::run(&workspace_root(), &opts))
        }
        Task::HeapCost {
            rounds,
            work,
            churn_only,
        } => verdict(heap_cost::run(&workspace_root(), rounds, work, churn_only)),
        Task::PerfCost {
            rounds,
            seconds,
            pages,
            frequency,
        } => {
            let opts = perf_cost::Options {
                rounds,
                seconds,
                pages,
                frequency,
            };
            verdict(perf_cost::run(&workspace_root(), &opts))
        }
        Task::TpConformanceCase { dir, threads_check } => {
            tp_conformance::child(&dir, threads_check);
            ExitCode::SUCCESS
        }
        Task::TpConformance {
            dir,
            min_pass,
            case_timeout,
            jobs,
            threads_check,
        } => {
            let dir = dir.unwrap_or_else(|| {
                let root = workspace_root();
                root.parent()
                    .unwrap_or(&root)
                    .join("shared")
                    .join("perfetto-difftests")
            });
            let opts = tp_conformance::Options {
                case_timeout: std::time::Duration::from_secs(case_timeout),
                jobs,
                threads_check,
            };
            match tp_conformance::run(&dir, &opts) {
                Ok(passed) if passed >= min_pass.unwrap_or(0) => ExitCode::SUCCESS,
                Ok(passed) => {
                    eprintln!(
                        "tp-conformance: {passed} cases passed, fewer than --min-pass {}",
                        min_pass.unwrap_or(0)
                    );
                    ExitCode::FAILURE
                }
                Err(e) => {
                    eprintln!("error: {e}");
                    ExitCode::FAILURE
                }
            }
        }
        Task::TpData {
            out,
            mb,
            long_trace,
        } => {
            let opts = tp_data::Options {
                out,
                mb,
                long_trace,
            };
            match tp_data::run(&workspace_root(), &opts) {
                Ok(_) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("error: {e}");
                    ExitCode::FAILURE
                }
            }
        }
        Task::TpPython {
            venv_only: true, ..
        } => match tp_python::venv_python(&workspace_root().join("target").join("tp-python")) {
            Ok(python) => {
                println!("tp-python: venv interpreter {}", python.display());
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::FAILURE
            }
        },
        Task::TpPython {
            traces,
            cases,
            python,
            throughput,
            bins,
            venv_only: false,
        } => {
            let opts = tp_python::Options {
                python,
                cases,
                traces,
                throughput,
                bins,
            };
            verdict(tp_python::run(&workspace_root(), &opts))
        }
        Task::TpParquet {
            cases,
            python,
            bench,
            bins,
        } => {
            let opts = tp_parquet::Options {
                python,
                cases,
                bench,
                bins,
            };
            verdict(tp_parquet::run(&workspace_root(), &opts))
        }
        Task::TpBench {
            trace,
            runs,
            json,
            perf_text,
            mb,
        } => {
            let format = match (json, perf_text) {
                (true, _) => Some(tp_bench_formats::Format::Json),
                (_, true) => Some(tp_bench_formats::Format::PerfText),
                _ => None,
            };
            let res = match format {
                Some(format) => tp_bench_formats::run(
                    &workspace_root(),
                    &tp_bench_formats::Options {
                        format,
                        trace,
                        mb,
                        runs,
                    },
                ),
                None => tp_bench::run(&workspace_root(), &tp_bench::Options { trace, runs }),
            };
            verdict(res)
        }
        Task::DecodeData { out, only, copies } => {
            let opts = decode_data::Options { out, only, copies };
            match decode_data::run(&workspace_root(), &opts) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("error: {e}");
                    ExitCode::FAILURE
                }
            }
        }
        Task::Codegen { check, protoc } => match codegen::run(&workspace_root(), check, protoc) {
            Ok(code) => code,
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::FAILURE
            }
        },
        Task::UpstreamCodegen {
            corpora,
            no_build,
            no_roundtrip,
        } => {
            let opts = corpus::Options {
                corpora,
                no_build,
                no_roundtrip,
            };
            verdict(corpus::run(&workspace_root(), &opts))
        }
    }
}

//! `cargo xtask instructions [--check] [--bless]`: the hot paths under
//! callgrind's instruction counts, which do not move with the machine as
//! timings do. Each path is a small release program (a binary of
//! `tracing-core/hot-paths`, a package with nothing but the dependencies
//! they run, so that CI's release build of it is short) running a fixed
//! number of iterations of it in a function of its own, counted alone by
//! `--toggle-collect` (so set-up and tear-down are left out); each runs at
//! two counts, and the difference of the totals over the difference of
//! the counts is its cost per iteration (one-off costs, such as a
//! sequence's first interning, cancel). The committed budgets
//! (`xtask/instruction-budgets.toml`) fail a path that costs more than its
//! budget by more than the file's tolerance (or the path's own), and the
//! issues' goals (ratios to a baseline path) fail when missed.
//!
//! `--genuine` also counts the genuine Perfetto C SDK's slice (the program
//! `c_sdk_track_event_loop` of `tracing-core/interop/genuine-sdk`, built in
//! the same profile, which compiles Perfetto's C++ at -O3: minutes of a
//! cold build, hence not part of CI's `--check`) the same way, and fails
//! unless TRACE_EVENT costs at most 0.2× its instructions (issue 61). Run
//! it before closing an issue that touches the TrackEvent path.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

mod paths;

use paths::{GENUINE_GOALS, GENUINE_PATHS, GOALS, HotPath, PATHS, RATIOS};

/// The budget file, relative to the workspace root.
const BUDGETS: &str = "xtask/instruction-budgets.toml";

/// The committed budgets and their tolerance.
struct Budgets {
    tolerance: f64,
    per_path: BTreeMap<String, f64>,
}

/// Reads the budget file's text.
fn parse_budgets(text: &str) -> Result<Budgets, String> {
    let table: toml::Table = text
        .parse()
        .map_err(|e| format!("{BUDGETS}: not TOML: {e}"))?;
    let tolerance = match table.get("tolerance") {
        Some(toml::Value::Float(f)) => *f,
        Some(_) => return Err(format!("{BUDGETS}: `tolerance` is not a float")),
        None => return Err(format!("{BUDGETS}: no `tolerance`")),
    };
    let mut per_path = BTreeMap::new();
    let Some(toml::Value::Table(b)) = table.get("budgets") else {
        return Err(format!("{BUDGETS}: no [budgets] table"));
    };
    for (k, v) in b {
        let v = match v {
            toml::Value::Integer(i) => *i as f64,
            toml::Value::Float(f) => *f,
            _ => return Err(format!("{BUDGETS}: budget of {k} is not a number")),
        };
        per_path.insert(k.clone(), v);
    }
    Ok(Budgets {
        tolerance,
        per_path,
    })
}

/// The budget file's text for `measured` (each rounded up), keeping
/// `tolerance`.
fn render_budgets(tolerance: f64, measured: &BTreeMap<&str, f64>) -> String {
    let mut s = String::from(
        "# Instructions per iteration of each hot path (callgrind, `cargo xtask\n\
         # instructions`; written by `cargo xtask instructions --bless`). CI\n\
         # fails a path that costs more than its budget by more than the\n\
         # tolerance. Counts depend on the toolchain: bless after a compiler\n\
         # update, and after an improvement (so that the gain stays).\n",
    );
    let _ = writeln!(s, "tolerance = {tolerance:?}\n\n[budgets]");
    for p in PATHS {
        if let Some(v) = measured.get(p.name) {
            let _ = writeln!(s, "# {}", p.what);
            let _ = writeln!(s, "{} = {}", p.name, v.ceil() as u64);
        }
    }
    s
}

/// The `summary:` (or `totals:`) line of a callgrind output file: the
/// instructions counted.
fn callgrind_total(text: &str) -> Option<u64> {
    let line = text
        .lines()
        .find(|l| l.starts_with("summary:"))
        .or_else(|| text.lines().find(|l| l.starts_with("totals:")))?;
    line.split_once(':')?
        .1
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// Instructions per iteration from the totals at two counts.
fn per_iteration(counts: (u64, u64), totals: (u64, u64)) -> Option<f64> {
    let dn = counts.1.checked_sub(counts.0).filter(|d| *d > 0)?;
    let dt = totals.1.checked_sub(totals.0)?;
    Some(dt as f64 / dn as f64)
}

/// How one path stands against its budget.
#[derive(Debug, PartialEq)]
enum Verdict {
    /// Within the budget and the tolerance.
    Ok,
    /// Below the budget by more than the tolerance (bless to keep it).
    Below,
    /// Above the budget by more than the tolerance.
    Over,
    /// No budget for it.
    NoBudget,
}

fn verdict(measured: f64, budget: Option<f64>, tolerance: f64) -> Verdict {
    match budget {
        None => Verdict::NoBudget,
        Some(b) if measured > b * (1.0 + tolerance) => Verdict::Over,
        Some(b) if measured < b * (1.0 - tolerance) => Verdict::Below,
        Some(_) => Verdict::Ok,
    }
}

/// The package of the measured programs: nothing but what they run, so
/// that its release build from a fresh clone stays short (CI's budget).
const PACKAGE: &str = "zerotrace-hot-paths";

/// Its profile (the workspace's `Cargo.toml`): release, but for crates no
/// counted function runs, built unoptimised to shorten CI's build.
const PROFILE: &str = "hot-paths";

/// The executables a `cargo build --message-format=json` reports, by
/// binary name (so that the programs are found wherever the target
/// directory is: `CARGO_TARGET_DIR`, `build.target-dir`).
fn executables(messages: &str) -> BTreeMap<String, PathBuf> {
    let mut found = BTreeMap::new();
    for line in messages.lines() {
        let Ok(m) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        if m["reason"] != "compiler-artifact" {
            continue;
        }
        let is_bin = m["target"]["kind"]
            .as_array()
            .is_some_and(|k| k.iter().any(|k| k == "bin"));
        if let (true, Some(name), Some(exe)) = (
            is_bin,
            m["target"]["name"].as_str(),
            m["executable"].as_str(),
        ) {
            found.insert(name.to_owned(), PathBuf::from(exe));
        }
    }
    found
}

/// The package of the genuine C SDK's program (`--genuine`): not a default
/// member, and the only one whose build compiles the C SDK optimised.
const GENUINE_PACKAGE: &str = "zerotrace-genuine-sdk";

/// The crate whose build script compiles Perfetto's C SDK (cc's flags
/// follow its opt-level).
const C_SDK_CRATE: &str = "perfetto-sdk-sys";

/// `cargo build --profile hot-paths` with `args`; cargo's JSON messages.
fn cargo_build(root: &Path, args: &[&str]) -> Result<String, String> {
    let output = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .current_dir(root)
        .args(["build", "--profile", PROFILE])
        .args(args)
        .arg("--message-format=json-render-diagnostics")
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("running cargo build: {e}"))?;
    if !output.status.success() {
        return Err(format!("cargo build {} failed", args.join(" ")));
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

/// Builds the programs (profile `hot-paths`) of `paths` in `package` and
/// returns their executables by name.
fn build(
    root: &Path,
    package: &str,
    paths: &[HotPath],
) -> Result<(BTreeMap<String, PathBuf>, String), String> {
    let mut args = vec!["-p", package];
    for p in paths {
        if !args.contains(&p.bin) {
            args.extend(["--bin", p.bin]);
        }
    }
    let messages = cargo_build(root, &args)?;
    let found = executables(&messages);
    for p in paths {
        if !found.contains_key(p.bin) {
            return Err(format!("cargo built no program {} in {package}", p.bin));
        }
    }
    Ok((found, messages))
}

/// The opt-level cargo built `krate` with (its `compiler-artifact`
/// message), which its build script's C++ compiler follows (the `cc`
/// crate's `-O`).
fn opt_level_of(messages: &str, krate: &str) -> Option<String> {
    messages
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|m| {
            m["reason"] == "compiler-artifact" && m["target"]["name"] == krate.replace('-', "_")
        })
        .and_then(|m| m["profile"]["opt_level"].as_str().map(str::to_owned))
}

/// Builds the genuine C SDK's program and checks that the C SDK in it was
/// compiled optimised (-O2 or more, without its debug build): a ratio to
/// an unoptimised C SDK would flatter ours.
fn build_genuine(root: &Path) -> Result<BTreeMap<String, PathBuf>, String> {
    if std::env::var("PERFETTO_SYS_LIB_DEBUG").is_ok_and(|v| v == "true") {
        return Err("PERFETTO_SYS_LIB_DEBUG=true builds the C SDK without NDEBUG: unset it".into());
    }
    let (found, messages) = build(root, GENUINE_PACKAGE, GENUINE_PATHS)?;
    match opt_level_of(&messages, C_SDK_CRATE).as_deref() {
        Some("2" | "3") => Ok(found),
        Some(other) => Err(format!(
            "{C_SDK_CRATE} built at opt-level {other} in profile {PROFILE}: the C SDK must be measured at -O2 or more"
        )),
        None => Err(format!("cargo reported no build of {C_SDK_CRATE}")),
    }
}

/// The target directory cargo uses (`cargo metadata`), where the
/// callgrind outputs go.
fn target_dir(root: &Path) -> Result<PathBuf, String> {
    let output = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .current_dir(root)
        .args(["metadata", "--format-version=1", "--no-deps"])
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("running cargo metadata: {e}"))?;
    if !output.status.success() {
        return Err("cargo metadata failed".into());
    }
    let m: serde_json::Value = serde_json::from_slice(&output.stdout)
        .map_err(|e| format!("cargo metadata: not JSON: {e}"))?;
    m["target_directory"]
        .as_str()
        .map(PathBuf::from)
        .ok_or_else(|| "cargo metadata: no target_directory".into())
}

/// Runs `path` at `count` iterations under callgrind (the `run`th job of
/// its list, which names the output file); its total.
fn measure(
    exe: &Path,
    out_dir: &Path,
    path: &HotPath,
    count: u64,
    run: usize,
) -> Result<u64, String> {
    let out = out_dir.join(format!("{}.{count}.{run}.callgrind", path.name));
    let output = Command::new("valgrind")
        .arg("--tool=callgrind")
        .arg(format!("--toggle-collect={}", path.toggle))
        .arg(format!("--callgrind-out-file={}", out.display()))
        .arg(exe)
        .arg(count.to_string())
        .args(path.args)
        .stdout(Stdio::null())
        .output()
        .map_err(|e| format!("running valgrind: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "{} {count} under callgrind failed:\n{}",
            path.name,
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    let text =
        std::fs::read_to_string(&out).map_err(|e| format!("reading {}: {e}", out.display()))?;
    callgrind_total(&text).ok_or_else(|| format!("{}: no summary line", out.display()))
}

/// One callgrind run: the path (its index in the selection), which of its
/// two counts.
type Job = (usize, bool);

/// The jobs of `paths`: those whose count is exact first (they may run
/// several at once), then, one at a time, the runs of those measured more
/// than once, whose count moves with the scheduler.
fn jobs(paths: &[&HotPath]) -> (Vec<Job>, Vec<Job>) {
    let (mut together, mut alone) = (Vec::new(), Vec::new());
    for (i, p) in paths.iter().enumerate() {
        let runs = p.runs.max(1);
        let list = if runs == 1 { &mut together } else { &mut alone };
        for _ in 0..runs {
            list.push((i, false));
            list.push((i, true));
        }
    }
    (together, alone)
}

/// Runs every path at its two counts; the smallest total at each, in
/// `paths`' order. Most of a run under valgrind is its start and the
/// session's set-up waiting on threads, not counted work, so the exact
/// paths run as many at once as the machine has cores (at least two):
/// their counts do not depend on it.
fn run_all(
    bins: &BTreeMap<String, PathBuf>,
    out_dir: &Path,
    paths: &[&HotPath],
) -> Result<Vec<(u64, u64)>, String> {
    let mut exes = Vec::with_capacity(paths.len());
    for p in paths {
        exes.push(
            bins.get(p.bin)
                .ok_or_else(|| format!("no program {}", p.bin))?
                .as_path(),
        );
    }
    let one = |(i, second): Job, run: usize| -> Result<(Job, u64), String> {
        let p = paths[i];
        let count = if second { p.counts.1 } else { p.counts.0 };
        measure(exes[i], out_dir, p, count, run).map(|t| ((i, second), t))
    };
    let (together, alone) = jobs(paths);
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get().max(2));
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut results: Vec<Result<(Job, u64), String>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                s.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(&job) = together.get(k) else {
                            return done;
                        };
                        done.push(one(job, k));
                    }
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| {
                h.join()
                    .unwrap_or_else(|_| vec![Err("a measuring thread panicked".into())])
            })
            .collect()
    });
    for (k, &job) in alone.iter().enumerate() {
        results.push(one(job, k));
    }
    let mut totals = vec![(u64::MAX, u64::MAX); paths.len()];
    for r in results {
        let ((i, second), t) = r?;
        let slot = &mut totals[i];
        if second {
            slot.1 = slot.1.min(t);
        } else {
            slot.0 = slot.0.min(t);
        }
    }
    Ok(totals)
}

/// Measures every path (those named in `only`, if any), prints the table,
/// and with `check` fails on a path over its budget or a goal missed;
/// with `bless` writes the measured figures as the budgets. Whether all
/// held.
/// With `genuine`, the C SDK's paths are measured too, and
/// [`GENUINE_GOALS`] fail the run when missed (whatever `check` says).
pub fn run(
    root: &Path,
    check: bool,
    bless: bool,
    only: &[String],
    genuine: bool,
) -> Result<bool, String> {
    if !Command::new("valgrind")
        .arg("--version")
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
    {
        return Err("no valgrind here (apt-get install valgrind)".into());
    }
    let budget_file = root.join(BUDGETS);
    let budgets = parse_budgets(
        &std::fs::read_to_string(&budget_file)
            .map_err(|e| format!("reading {}: {e}", budget_file.display()))?,
    )?;
    let (mut bins, _) = build(root, PACKAGE, PATHS)?;
    if genuine {
        bins.extend(build_genuine(root)?);
    }
    let out_dir = target_dir(root)?.join("instructions");
    std::fs::create_dir_all(&out_dir).map_err(|e| format!("{}: {e}", out_dir.display()))?;

    let selected = select(only, genuine);
    let totals = run_all(&bins, &out_dir, &selected)?;
    let mut measured: BTreeMap<&str, f64> = BTreeMap::new();
    for (p, (a, b)) in selected.iter().zip(totals) {
        let v = per_iteration(p.counts, (a, b))
            .ok_or_else(|| format!("{}: totals {a} and {b} do not grow with the count", p.name))?;
        measured.insert(p.name, v);
    }

    let mut ok = true;
    let mut genuine_ok = true;
    println!("| path | instructions / iteration | budget | vs budget | |");
    println!("|---|---:|---:|---:|---|");
    for p in PATHS {
        let Some(&v) = measured.get(p.name) else {
            continue;
        };
        let budget = budgets.per_path.get(p.name).copied();
        let verdict = verdict(v, budget, p.tolerance.unwrap_or(budgets.tolerance));
        let note = match verdict {
            Verdict::Ok => "ok",
            Verdict::Below => "below budget: bless to keep the gain",
            Verdict::Over => "OVER BUDGET",
            Verdict::NoBudget => "no budget",
        };
        if verdict == Verdict::Over || (check && verdict == Verdict::NoBudget) {
            ok = false;
        }
        match budget {
            Some(b) => println!("| {} | {v:.1} | {b:.0} | {:.3} | {note} |", p.name, v / b),
            None => println!("| {} | {v:.1} | | | {note} |", p.name),
        }
    }
    println!();
    println!("| ratio | measured | goal | |");
    println!("|---|---:|---:|---|");
    for g in GOALS {
        let (Some(a), Some(b)) = (measured.get(g.path), measured.get(g.over)) else {
            continue;
        };
        let r = a / b;
        let met = r <= g.goal;
        ok &= met;
        println!(
            "| {} / {} | {r:.3}× | ≤ {}× | {} |",
            g.path,
            g.over,
            g.goal,
            if met { "met" } else { "NOT MET" }
        );
    }
    for g in GENUINE_GOALS {
        let (Some(a), Some(b)) = (measured.get(g.path), measured.get(g.over)) else {
            continue;
        };
        let r = a / b;
        let met = r <= g.goal;
        genuine_ok &= met;
        println!(
            "| {} / {} | {r:.3}× ({a:.1} / {b:.1}) | ≤ {}× | {} |",
            g.path,
            g.over,
            g.goal,
            if met { "met" } else { "NOT MET" }
        );
    }
    for (a, b) in RATIOS {
        if let (Some(x), Some(y)) = (measured.get(a), measured.get(b)) {
            println!("| {a} / {b} | {:.3}× | | |", x / y);
        }
    }
    if genuine {
        println!();
        println!("| the genuine C SDK (a reference: no budget) | instructions / iteration |");
        println!("|---|---:|");
        for p in GENUINE_PATHS {
            if let Some(v) = measured.get(p.name) {
                println!("| {} ({}) | {v:.1} |", p.name, p.what);
            }
        }
    }

    if bless {
        let mut all: BTreeMap<&str, f64> = budgets
            .per_path
            .iter()
            .filter_map(|(k, v)| PATHS.iter().find(|p| p.name == k).map(|p| (p.name, *v)))
            .collect();
        all.extend(measured.iter().map(|(k, v)| (*k, *v)));
        std::fs::write(&budget_file, render_budgets(budgets.tolerance, &all))
            .map_err(|e| format!("writing {}: {e}", budget_file.display()))?;
        println!("wrote {}", budget_file.display());
        return Ok(genuine_ok);
    }
    Ok(genuine_ok && (ok || !check))
}

/// The paths a run measures: ours named in `only` (all if none), and with
/// `genuine` the C SDK's and the paths its goals compare with them.
fn select(only: &[String], genuine: bool) -> Vec<&'static HotPath> {
    let needed_by_genuine = |p: &HotPath| genuine && GENUINE_GOALS.iter().any(|g| g.path == p.name);
    let mut selected: Vec<&HotPath> = PATHS
        .iter()
        .filter(|p| only.is_empty() || only.iter().any(|o| o == p.name) || needed_by_genuine(p))
        .collect();
    if genuine {
        selected.extend(GENUINE_PATHS);
    }
    selected
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_summary_line() {
        let text =
            "version: 1\ncreator: callgrind-3.19.0\nevents: Ir\nsummary: 26834970\n\nfn=main\n";
        assert_eq!(callgrind_total(text), Some(26_834_970));
        assert_eq!(callgrind_total("totals: 12 3\n"), Some(12));
        assert_eq!(callgrind_total("events: Ir\n"), None);
    }

    #[test]
    fn per_iteration_is_the_slope() {
        assert_eq!(per_iteration((10, 20), (1500, 2500)), Some(100.0));
        assert_eq!(per_iteration((10, 10), (1500, 2500)), None);
        assert_eq!(per_iteration((10, 20), (2500, 1500)), None);
    }

    #[test]
    fn a_path_over_its_budget_fails_and_one_below_asks_for_a_bless() {
        assert_eq!(verdict(103.0, Some(100.0), 0.03), Verdict::Ok);
        assert_eq!(verdict(103.5, Some(100.0), 0.03), Verdict::Over);
        assert_eq!(verdict(96.0, Some(100.0), 0.03), Verdict::Below);
        assert_eq!(verdict(96.0, None, 0.03), Verdict::NoBudget);
    }

    #[test]
    fn exact_paths_run_together_and_the_others_alone_at_both_counts() {
        let exact = &PATHS[0];
        let moving = PATHS
            .iter()
            .find(|p| p.runs > 1)
            .expect("a path run thrice");
        let (together, alone) = jobs(&[exact, moving]);
        assert_eq!(together, [(0, false), (0, true)]);
        assert_eq!(
            alone,
            [
                (1, false),
                (1, true),
                (1, false),
                (1, true),
                (1, false),
                (1, true)
            ]
        );
    }

    #[test]
    fn the_programs_are_found_where_cargo_says_it_built_them() {
        // As cargo prints them with CARGO_TARGET_DIR set: the programs
        // are where the messages say, not under the workspace's target/.
        let messages = concat!(
            r#"{"reason":"compiler-artifact","target":{"kind":["lib"],"name":"zerotrace_core"},"executable":null}"#,
            "\n",
            r#"{"reason":"compiler-artifact","target":{"kind":["bin"],"name":"decode_loop"},"executable":"/tmp/t/release/decode_loop"}"#,
            "\nnot json\n",
            r#"{"reason":"build-finished","success":true}"#,
        );
        let found = executables(messages);
        assert_eq!(found.len(), 1);
        assert_eq!(
            found.get("decode_loop"),
            Some(&PathBuf::from("/tmp/t/release/decode_loop"))
        );
    }

    #[test]
    fn every_path_is_a_program_of_the_hot_paths_package() {
        let bins = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tracing-core/hot-paths/src/bin");
        for p in PATHS {
            let src = bins.join(format!("{}.rs", p.bin));
            let text = std::fs::read_to_string(&src).expect("the program's source");
            // The counted functions are the program's `run_*`.
            let prefix = format!("{}::", p.bin);
            assert!(p.toggle.starts_with(&prefix), "{}: {}", p.name, p.toggle);
            assert!(text.contains("fn run_"), "{} has no run_ function", p.bin);
        }
    }

    #[test]
    fn the_genuine_programs_are_those_of_the_genuine_sdk_package() {
        let bins = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../tracing-core/interop/genuine-sdk/src/bin");
        for p in GENUINE_PATHS {
            let text = std::fs::read_to_string(bins.join(format!("{}.rs", p.bin)))
                .expect("the program's source");
            assert!(p.toggle.starts_with(&format!("{}::", p.bin)), "{}", p.name);
            // Each variant is one the program knows.
            assert!(
                text.contains(&format!("\"{}\" =>", p.args[0])),
                "{}",
                p.name
            );
        }
        for g in GENUINE_GOALS {
            assert!(PATHS.iter().any(|p| p.name == g.path));
            assert!(GENUINE_PATHS.iter().any(|p| p.name == g.over));
        }
    }

    #[test]
    fn genuine_runs_measure_what_its_goals_compare_and_never_bless_them() {
        let only = ["smb_write".to_owned()];
        let names = |v: Vec<&HotPath>| v.iter().map(|p| p.name).collect::<Vec<_>>();
        assert_eq!(names(select(&only, false)), ["smb_write"]);
        let with = names(select(&only, true));
        for g in GENUINE_GOALS {
            assert!(with.contains(&g.path) && with.contains(&g.over), "{with:?}");
        }
        assert!(with.contains(&"smb_write"));
        // A bless writes ours only: the C SDK's counts are no budget.
        let measured: BTreeMap<&str, f64> = GENUINE_PATHS
            .iter()
            .map(|p| (p.name, 1.0))
            .chain([("smb_write", 2.0)])
            .collect();
        let text = render_budgets(0.03, &measured);
        assert!(text.contains("smb_write = 2"));
        assert!(!text.contains("c_sdk"), "{text}");
    }

    #[test]
    fn the_c_sdk_opt_level_is_read_from_cargo_messages() {
        let messages = concat!(
            r#"{"reason":"build-script-executed","package_id":"perfetto-sdk-sys"}"#,
            "\n",
            r#"{"reason":"compiler-artifact","target":{"kind":["lib"],"name":"perfetto_sdk"},"profile":{"opt_level":"1"}}"#,
            "\n",
            r#"{"reason":"compiler-artifact","target":{"kind":["lib"],"name":"perfetto_sdk_sys"},"profile":{"opt_level":"3"}}"#,
        );
        assert_eq!(
            opt_level_of(messages, "perfetto-sdk-sys").as_deref(),
            Some("3")
        );
        assert_eq!(opt_level_of(messages, "perfetto-sdk").as_deref(), Some("1"));
        assert_eq!(opt_level_of(messages, "zerotrace-core"), None);
    }

    #[test]
    fn the_committed_budgets_name_every_path_and_read_back() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let text = std::fs::read_to_string(root.join(BUDGETS)).expect("budget file");
        let b = parse_budgets(&text).expect("parses");
        assert!(b.tolerance > 0.0 && b.tolerance < 0.1);
        for p in PATHS {
            assert!(b.per_path.contains_key(p.name), "no budget for {}", p.name);
        }
        for g in GOALS {
            assert!(PATHS.iter().any(|p| p.name == g.path));
            assert!(PATHS.iter().any(|p| p.name == g.over));
        }
        let measured: BTreeMap<&str, f64> =
            PATHS.iter().map(|p| (p.name, b.per_path[p.name])).collect();
        let again = parse_budgets(&render_budgets(b.tolerance, &measured)).expect("parses");
        assert_eq!(again.per_path, b.per_path);
    }
}

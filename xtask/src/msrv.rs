//! `cargo xtask msrv`: what can be checked, without that toolchain, of the
//! minimum supported Rust version (MSRV) that the crates users depend on
//! (`protozero`, `protozero-codegen`) state as their `rust-version`.
//!
//! Only the current stable and a nightly are installed where this runs, so
//! building with the MSRV itself (`cargo +1.85 check`) is out of reach.
//! What is checked instead:
//!
//! * both crates, and every crate of this workspace they pull in, declare a
//!   `rust-version`;
//! * no package in their normal and build dependency trees (every target,
//!   with default features and with all features, at the versions of
//!   `Cargo.lock`) declares a higher one. Packages that declare none are
//!   listed as unchecked;
//! * while their rust-version is below 1.88, the sources of our crates in
//!   those trees use no let chain (`if let .. && ..`, Rust 1.88), the newer
//!   language feature edition 2024 code most easily slips in and that no
//!   lint flags (rustc accepts them whatever the rust-version). The
//!   templates inside `quote!` are scanned too: users compile what the
//!   generator and the derive emit;
//! * clippy's `incompatible_msrv` lint, which flags std APIs (and const
//!   uses of them) stabilised after `rust-version` and fails CI's clippy
//!   step (`-D warnings`), is not switched off: no `clippy.toml` sets an
//!   `msrv`, and no manifest or source of those crates names the lint.
//!
//! Not checked: other language features newer than the MSRV, std APIs in
//! test-only code (the lint skips it), the packages without a
//! `rust-version`, and dependency versions other than the locked ones (a
//! user's own resolution picks versions for the user's toolchain).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::str::FromStr;

use proc_macro2::{Delimiter, Spacing, TokenStream, TokenTree};
use serde_json::Value;

/// The crates users depend on, whose MSRV is checked.
pub const CRATES: &[&str] = &["protozero", "protozero-codegen"];

/// The Rust version that stabilised let chains (in edition 2024).
const LET_CHAINS: [u64; 3] = [1, 88, 0];

/// Why the check could not be made (a finding is not an error: [`run`]
/// reports findings and returns `Ok(false)`).
#[derive(Debug, thiserror::Error)]
pub enum MsrvError {
    /// A command could not be started.
    #[error("running {command}: {source}")]
    Spawn {
        /// The command line.
        command: String,
        /// Why it did not start.
        source: std::io::Error,
    },
    /// A cargo command failed.
    #[error("{command} failed:\n{stderr}")]
    Cargo {
        /// The command line.
        command: String,
        /// What it printed on stderr.
        stderr: String,
    },
    /// `cargo metadata` or `cargo tree` printed something unexpected.
    #[error("unexpected cargo output: {0}")]
    Output(String),
    /// A file could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A source file did not tokenize.
    #[error("{path}: does not tokenize: {message}")]
    Tokens {
        /// The file.
        path: PathBuf,
        /// The lexer's message.
        message: String,
    },
}

/// A `rust-version`: `1.85` or `1.85.1`, as written, compared numerically
/// (`1.85` = `1.85.0` < `1.85.1` < `1.100`).
#[derive(Debug, Clone)]
struct RustVersion {
    /// Major, minor and patch (0 when omitted).
    parts: [u64; 3],
    /// As the manifest writes it.
    text: String,
}

impl RustVersion {
    fn parse(text: &str) -> Option<RustVersion> {
        let mut parts = [0; 3];
        let mut fields = text.split('.');
        for part in &mut parts {
            if let Some(f) = fields.next() {
                *part = f.parse().ok()?;
            }
        }
        if fields.next().is_some() {
            return None;
        }
        Some(RustVersion {
            parts,
            text: text.to_owned(),
        })
    }
}

impl PartialEq for RustVersion {
    fn eq(&self, other: &Self) -> bool {
        self.parts == other.parts
    }
}

impl Eq for RustVersion {}

impl PartialOrd for RustVersion {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for RustVersion {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.parts.cmp(&other.parts)
    }
}

impl fmt::Display for RustVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// What `cargo metadata` says of one package.
struct Package {
    rust_version: Option<RustVersion>,
    /// The directory of its manifest.
    dir: PathBuf,
    /// A package of this workspace (a path dependency), not a registry one.
    ours: bool,
}

/// Runs cargo with `args` in `root`; its stdout.
fn cargo(root: &Path, args: &[&str]) -> Result<String, MsrvError> {
    let command = format!("cargo {}", args.join(" "));
    let output = Command::new("cargo")
        .current_dir(root)
        .args(args)
        .output()
        .map_err(|source| MsrvError::Spawn {
            command: command.clone(),
            source,
        })?;
    if !output.status.success() {
        return Err(MsrvError::Cargo {
            command,
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        });
    }
    String::from_utf8(output.stdout).map_err(|_| MsrvError::Output(format!("{command}: not UTF-8")))
}

/// Every package of the lock file, by name and version.
fn packages(root: &Path) -> Result<BTreeMap<(String, String), Package>, MsrvError> {
    let text = cargo(root, &["metadata", "--format-version", "1", "--locked"])?;
    let json: Value = serde_json::from_str(&text)
        .map_err(|e| MsrvError::Output(format!("cargo metadata: {e}")))?;
    let list = json["packages"]
        .as_array()
        .ok_or_else(|| MsrvError::Output("cargo metadata: no packages".to_owned()))?;
    let mut out = BTreeMap::new();
    for p in list {
        let field = |key: &str| {
            p[key].as_str().map(str::to_owned).ok_or_else(|| {
                MsrvError::Output(format!("cargo metadata: a package without {key}"))
            })
        };
        let (name, version, manifest) =
            (field("name")?, field("version")?, field("manifest_path")?);
        let rust_version = match p["rust_version"].as_str() {
            None => None,
            Some(text) => Some(RustVersion::parse(text).ok_or_else(|| {
                MsrvError::Output(format!("{name} {version}: rust-version `{text}`"))
            })?),
        };
        let dir = Path::new(&manifest)
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default();
        let ours = p["source"].is_null();
        out.insert(
            (name, version),
            Package {
                rust_version,
                dir,
                ours,
            },
        );
    }
    Ok(out)
}

/// The packages (name, version) `krate` builds with for a user: its normal
/// and build dependencies, transitively, on every target, with its default
/// features and with all of them.
fn tree(root: &Path, krate: &str) -> Result<BTreeSet<(String, String)>, MsrvError> {
    let mut out = BTreeSet::new();
    for features in [None, Some("--all-features")] {
        let mut args = vec![
            "tree",
            "--locked",
            "-p",
            krate,
            "-e",
            "normal,build",
            "--target",
            "all",
            "--prefix",
            "none",
            "--format",
            "{p}",
        ];
        args.extend(features);
        for line in cargo(root, &args)?.lines() {
            // `name v1.2.3`, then `(proc-macro)`, a path or `(*)`.
            let mut words = line.split_whitespace();
            let (Some(name), Some(version)) = (words.next(), words.next()) else {
                continue;
            };
            let version = version.strip_prefix('v').ok_or_else(|| {
                MsrvError::Output(format!("cargo tree: a line `{line}` without a version"))
            })?;
            out.insert((name.to_owned(), version.to_owned()));
        }
    }
    Ok(out)
}

/// The `.rs` files under `dir`, sorted.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), MsrvError> {
    let entries = std::fs::read_dir(dir).map_err(|source| MsrvError::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut paths = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|source| MsrvError::Io {
            path: dir.to_path_buf(),
            source,
        })?;
        paths.push(entry.path());
    }
    paths.sort();
    for path in paths {
        if path.is_dir() {
            rust_files(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    Ok(())
}

fn is_ident(t: &TokenTree, name: &str) -> bool {
    matches!(t, TokenTree::Ident(i) if i == name)
}

/// Whether `tokens[i..]` starts with `&&`.
fn is_and_and(tokens: &[TokenTree], i: usize) -> bool {
    match (tokens.get(i), tokens.get(i + 1)) {
        (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b))) => {
            a.as_char() == '&' && a.spacing() == Spacing::Joint && b.as_char() == '&'
        }
        _ => false,
    }
}

/// The conditions of `if` and `while` in `stream` (and in every group in
/// it, `quote!` bodies included) that chain a `let` with `&&`, as text.
/// A condition runs from the keyword to the first `{ .. }` at its level;
/// its own parentheses and brackets are single tokens here, so an `&&`
/// inside them (an argument, a closure) does not count.
fn let_chains(stream: TokenStream, out: &mut Vec<String>) {
    let tokens: Vec<TokenTree> = stream.into_iter().collect();
    for (i, t) in tokens.iter().enumerate() {
        if let TokenTree::Group(g) = t {
            let_chains(g.stream(), out);
        }
        if !(is_ident(t, "if") || is_ident(t, "while")) {
            continue;
        }
        let rest = &tokens[i + 1..];
        let end = rest
            .iter()
            .position(|t| matches!(t, TokenTree::Group(g) if g.delimiter() == Delimiter::Brace))
            .unwrap_or(rest.len());
        let cond = &rest[..end];
        let has_let = cond.iter().any(|t| is_ident(t, "let"));
        let has_and = (0..cond.len()).any(|j| is_and_and(cond, j));
        if has_let && has_and {
            // The keyword and its condition.
            let shown: TokenStream = tokens[i..i + 1 + end].iter().cloned().collect();
            let mut text = shown.to_string();
            if text.len() > 100 {
                let cut = (0..=100)
                    .rev()
                    .find(|&k| text.is_char_boundary(k))
                    .unwrap_or(0);
                text.truncate(cut);
                text.push_str(" ...");
            }
            out.push(text);
        }
    }
}

/// Findings in the sources and manifest of our package `name` (in `dir`,
/// with rust-version `msrv`): let chains, if `msrv` is older than they
/// are, and anything naming the lint.
fn scan_sources(
    root: &Path,
    name: &str,
    dir: &Path,
    msrv: Option<&RustVersion>,
) -> Result<Vec<String>, MsrvError> {
    let chains_allowed = msrv.is_some_and(|m| m.parts >= LET_CHAINS);
    let mut files = Vec::new();
    rust_files(&dir.join("src"), &mut files)?;
    let build = dir.join("build.rs");
    if build.is_file() {
        files.push(build);
    }
    files.push(dir.join("Cargo.toml"));
    let mut findings = Vec::new();
    for path in &files {
        let text = std::fs::read_to_string(path).map_err(|source| MsrvError::Io {
            path: path.clone(),
            source,
        })?;
        let shown = path.strip_prefix(root).unwrap_or(path).display();
        if text.contains("incompatible_msrv") {
            findings.push(format!(
                "{shown} names clippy's incompatible_msrv lint: it must stay on"
            ));
        }
        if !chains_allowed && path.extension().is_some_and(|e| e == "rs") {
            let stream = TokenStream::from_str(&text).map_err(|e| MsrvError::Tokens {
                path: path.clone(),
                message: e.to_string(),
            })?;
            let mut chains = Vec::new();
            let_chains(stream, &mut chains);
            for chain in chains {
                let declared = msrv.map_or_else(|| "none".to_owned(), ToString::to_string);
                findings.push(format!(
                    "{shown} ({name}, rust-version {declared}): a let chain, Rust 1.88: `{chain}`"
                ));
            }
        }
    }
    Ok(findings)
}

/// Findings about clippy's configuration: a `clippy.toml` at the root or
/// in one of our packages' directories that sets `msrv` (it would take the
/// place of `rust-version`), or a root manifest naming the lint.
fn lint_configuration(root: &Path, dirs: &BTreeSet<PathBuf>) -> Result<Vec<String>, MsrvError> {
    let mut findings = Vec::new();
    let mut candidates = vec![root.join("Cargo.toml")];
    for dir in std::iter::once(root).chain(dirs.iter().map(PathBuf::as_path)) {
        candidates.push(dir.join("clippy.toml"));
        candidates.push(dir.join(".clippy.toml"));
    }
    for path in candidates {
        if !path.is_file() {
            continue;
        }
        let text = std::fs::read_to_string(&path).map_err(|source| MsrvError::Io {
            path: path.clone(),
            source,
        })?;
        let shown = path.strip_prefix(root).unwrap_or(&path).display();
        if text.contains("incompatible_msrv") {
            findings.push(format!(
                "{shown} names clippy's incompatible_msrv lint: it must stay on"
            ));
        }
        if path.file_name().is_some_and(|n| n != "Cargo.toml")
            && text.lines().any(|l| l.trim_start().starts_with("msrv"))
        {
            findings.push(format!(
                "{shown} sets clippy's msrv: the crates' rust-version must be the one"
            ));
        }
    }
    Ok(findings)
}

/// What the dependency tree of one of [`CRATES`] says about its MSRV.
#[derive(Debug, Default)]
struct TreeReport {
    /// Packages declaring a higher rust-version, ours declaring none.
    findings: Vec<String>,
    /// The highest rust-version declared in the tree (the crate itself
    /// aside), and who declares it.
    highest: Option<(RustVersion, Vec<String>)>,
    /// Registry packages declaring no rust-version (`name version`).
    unchecked: Vec<String>,
    /// Our packages in the tree: their directories, names and
    /// rust-versions.
    ours: BTreeMap<PathBuf, (String, Option<RustVersion>)>,
}

/// Compares the rust-version of every package in `deps` (the tree of
/// `krate` at `version`, whose rust-version is `msrv`, if it has one) with
/// `msrv`.
fn check_tree(
    krate: &str,
    version: &str,
    msrv: Option<&RustVersion>,
    deps: &BTreeSet<(String, String)>,
    packages: &BTreeMap<(String, String), Package>,
) -> Result<TreeReport, MsrvError> {
    let mut report = TreeReport::default();
    for (name, v) in deps {
        let p = packages
            .get(&(name.clone(), v.clone()))
            .ok_or_else(|| MsrvError::Output(format!("{name} {v} is not in cargo metadata")))?;
        if p.ours {
            report
                .ours
                .insert(p.dir.clone(), (name.clone(), p.rust_version.clone()));
        }
        let Some(rv) = &p.rust_version else {
            if p.ours {
                report.findings.push(format!(
                    "{name} (ours, in {krate}'s tree) declares no rust-version"
                ));
            } else {
                report.unchecked.push(format!("{name} {v}"));
            }
            continue;
        };
        if let Some(msrv) = msrv.filter(|m| rv > *m) {
            report.findings.push(format!(
                "{krate} (rust-version {msrv}) depends on {name} {v}, whose rust-version is {rv}"
            ));
        }
        if name == krate && v == version {
            continue;
        }
        match &mut report.highest {
            Some((h, names)) if rv == h => names.push(name.clone()),
            Some((h, _)) if rv < h => {}
            _ => report.highest = Some((rv.clone(), vec![name.clone()])),
        }
    }
    Ok(report)
}

/// Runs the checks, printing what was checked and every finding; whether
/// there was none.
pub fn run(root: &Path) -> Result<bool, MsrvError> {
    let packages = packages(root)?;
    let mut findings = Vec::new();
    let mut ours_dirs: BTreeMap<PathBuf, (String, Option<RustVersion>)> = BTreeMap::new();
    for krate in CRATES {
        let (version, own) = packages
            .iter()
            .find(|((name, _), p)| name == krate && p.ours)
            .map(|((_, version), p)| (version.clone(), p))
            .ok_or_else(|| MsrvError::Output(format!("{krate} is not a workspace package")))?;
        let msrv = own.rust_version.as_ref();
        let deps = tree(root, krate)?;
        let report = check_tree(krate, &version, msrv, &deps, &packages)?;
        let Some(msrv) = msrv else {
            findings.push(format!("{krate} declares no rust-version"));
            ours_dirs.extend(report.ours);
            continue;
        };
        let highest = report.highest.map_or_else(
            || "none declares one".to_owned(),
            |(rv, names)| format!("the highest declared is {rv} ({})", names.join(", ")),
        );
        println!(
            "msrv: {krate} {version}: rust-version {msrv}; {} packages in its tree (all targets, default and all features), {highest}",
            deps.len()
        );
        if !report.unchecked.is_empty() {
            println!(
                "msrv:   declaring no rust-version, unchecked: {}",
                report.unchecked.join(", ")
            );
        }
        findings.extend(report.findings);
        ours_dirs.extend(report.ours);
    }
    for (dir, (name, msrv)) in &ours_dirs {
        findings.extend(scan_sources(root, name, dir, msrv.as_ref())?);
    }
    let dirs: BTreeSet<PathBuf> = ours_dirs.keys().cloned().collect();
    findings.extend(lint_configuration(root, &dirs)?);
    println!(
        "msrv: sources of {} scanned for let chains (for a rust-version below 1.88); clippy's incompatible_msrv lint checks std APIs in CI's clippy step",
        ours_dirs
            .values()
            .map(|(name, _)| name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    );
    for f in &findings {
        eprintln!("msrv: {f}");
    }
    Ok(findings.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chains(src: &str) -> Vec<String> {
        let mut out = Vec::new();
        let_chains(TokenStream::from_str(src).unwrap(), &mut out);
        out
    }

    #[test]
    fn versions_order_numerically() {
        let v = |t: &str| RustVersion::parse(t).unwrap();
        assert!(v("1.85") < v("1.86"));
        assert!(v("1.9") < v("1.10"));
        assert!(v("1.85") < v("1.85.1"));
        assert!(v("1.99") < v("1.100"));
        assert!(v("1.85") == v("1.85.0"));
        assert!(v("1.85.0") <= v("1.85"));
        assert!(RustVersion::parse("1.x").is_none());
        assert!(RustVersion::parse("1.2.3.4").is_none());
    }

    #[test]
    fn a_tree_above_the_msrv_or_ours_without_one_is_a_finding() {
        let v = |t: &str| RustVersion::parse(t).unwrap();
        let mut packages = BTreeMap::new();
        let mut add = |name: &str, rv: Option<&str>, ours: bool| {
            let p = Package {
                rust_version: rv.map(v),
                dir: PathBuf::from(name),
                ours,
            };
            packages.insert((name.to_owned(), "1.0.0".to_owned()), p);
        };
        add("ours", Some("1.85"), true);
        add("ours-helper", None, true);
        add("old", Some("1.60"), false);
        add("level", Some("1.85.0"), false);
        add("new", Some("1.86"), false);
        add("silent", None, false);
        let tree = |names: &[&str]| -> BTreeSet<(String, String)> {
            names
                .iter()
                .map(|n| ((*n).to_owned(), "1.0.0".to_owned()))
                .collect()
        };
        let msrv = v("1.85");

        let fine = check_tree(
            "ours",
            "1.0.0",
            Some(&msrv),
            &tree(&["ours", "old", "level", "silent"]),
            &packages,
        )
        .unwrap();
        assert!(fine.findings.is_empty(), "{:?}", fine.findings);
        assert_eq!(fine.unchecked, ["silent 1.0.0"]);
        let (highest, by) = fine.highest.unwrap();
        assert_eq!(
            (highest.to_string(), by),
            ("1.85.0".to_owned(), vec!["level".to_owned()])
        );
        let ours: Vec<&str> = fine.ours.values().map(|(n, _)| n.as_str()).collect();
        assert_eq!(ours, ["ours"]);

        let bad = check_tree(
            "ours",
            "1.0.0",
            Some(&msrv),
            &tree(&["ours", "new", "ours-helper"]),
            &packages,
        )
        .unwrap();
        assert_eq!(bad.findings.len(), 2, "{:?}", bad.findings);
        assert!(
            bad.findings
                .iter()
                .any(|f| f.contains("new 1.0.0, whose rust-version is 1.86"))
        );
        assert!(bad.findings.iter().any(|f| f.contains("ours-helper (ours")));

        assert!(check_tree("ours", "1.0.0", Some(&msrv), &tree(&["unknown"]), &packages).is_err());
    }

    #[test]
    fn let_chains_are_found() {
        let found = chains("fn f() { if let Some(x) = y && x > 1 { } }");
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].starts_with("if let Some"), "{found:?}");
        assert_eq!(
            chains("fn f() { while a && let Some(x) = it.next() { } }").len(),
            1
        );
        // Nested in a block, an else branch, a macro's body.
        assert_eq!(
            chains("fn f() { { if x {} else if let A = b && c {} } }").len(),
            1
        );
        assert_eq!(
            chains("fn f() { quote! { if let Some(v) = #x && v {} } }").len(),
            1
        );
    }

    #[test]
    fn what_is_not_a_let_chain_is_not_found() {
        for src in [
            "fn f() { if let Some(x) = y { if x && z {} } }",
            "fn f() { if a && b { let c = 1; } }",
            "fn f() { if let Some(x) = y.find(|v| a && b) {} }",
            "fn f() { if let Some(x) = (a && b).then_some(1) {} }",
            "fn f() { while let Some(x) = it.next() { let y = a && b; } }",
            "fn f() { match x { Some(v) if a && b => {} _ => { let z = 1; } } }",
        ] {
            assert!(chains(src).is_empty(), "{src}: {:?}", chains(src));
        }
    }
}

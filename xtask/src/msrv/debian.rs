//! The Rust toolchain of the minimum supported version, fetched as Debian
//! packages: rustup reaches no toolchain server here, but Debian ships
//! `rustc-web`/`cargo-web` at several Rust versions (bookworm has 1.85).
//! The packages are downloaded with `apt-get download` and unpacked with
//! `dpkg-deb -x` into a directory of the build tree, never installed: the
//! machine's own toolchain stays as it is.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::MsrvError;

/// A toolchain unpacked from Debian's packages.
pub struct Toolchain {
    /// The unpacked tree (`usr/bin/cargo`, `usr/bin/rustc`, ...).
    root: PathBuf,
}

impl Toolchain {
    /// Its `cargo`.
    pub fn cargo(&self) -> PathBuf {
        self.root.join("usr/bin/cargo")
    }

    /// Its `rustc`.
    pub fn rustc(&self) -> PathBuf {
        self.root.join("usr/bin/rustc")
    }

    /// Its `rustdoc`.
    pub fn rustdoc(&self) -> PathBuf {
        self.root.join("usr/bin/rustdoc")
    }

    /// The library path its binaries need (LLVM and cargo's libraries
    /// come from the unpacked packages too), before any inherited one.
    pub fn library_path(&self) -> String {
        let mut dirs = vec![
            self.root.join("usr/lib/x86_64-linux-gnu"),
            self.root.join("lib/x86_64-linux-gnu"),
        ]
        .into_iter()
        .map(|d| d.display().to_string())
        .collect::<Vec<_>>();
        if let Ok(old) = std::env::var("LD_LIBRARY_PATH") {
            if !old.is_empty() {
                dirs.push(old);
            }
        }
        dirs.join(":")
    }

    /// What its `rustc --version` prints.
    pub fn version(&self) -> Option<String> {
        let out = Command::new(self.rustc())
            .arg("--version")
            .env("LD_LIBRARY_PATH", self.library_path())
            .output()
            .ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
    }
}

/// Why no toolchain could be had here, where that is the machine's lot
/// and not a failure (no Debian tools, no package of that version).
pub struct Unavailable(pub String);

/// Runs a command, returning its stdout.
fn run(command: &mut Command) -> Result<String, MsrvError> {
    let shown = format!("{command:?}");
    let output = command.output().map_err(|source| MsrvError::Spawn {
        command: shown.clone(),
        source,
    })?;
    if !output.status.success() {
        return Err(MsrvError::Cargo {
            command: shown,
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        });
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

/// The newest package version in `apt-cache madison` output that builds
/// Rust `major.minor` (`1.85.0+dfsg3-1~deb12u3` for 1.85).
pub fn package_version(madison: &str, major_minor: &str) -> Option<String> {
    let prefix = format!("{major_minor}.");
    madison
        .lines()
        .filter_map(|line| line.split('|').nth(1).map(str::trim))
        .find(|v| v.starts_with(&prefix))
        .map(str::to_owned)
}

/// The package names of a `Depends:` field, the first of each set of
/// alternatives, without version constraints or architecture qualifiers.
pub fn depends(field: &str) -> Vec<String> {
    field
        .split(',')
        .filter_map(|group| group.split('|').next())
        .filter_map(|alt| alt.split_whitespace().next())
        .map(|name| name.split(':').next().unwrap_or(name).to_owned())
        .filter(|name| !name.is_empty())
        .collect()
}

/// Whether dpkg has `package` installed.
fn installed(package: &str) -> bool {
    Command::new("dpkg-query")
        .args(["-W", "-f=${Status}", package])
        .output()
        .is_ok_and(|o| o.status.success() && o.stdout.starts_with(b"install ok installed"))
}

/// The toolchain of Rust `major_minor` under `dir`: reused when already
/// unpacked there, else downloaded from Debian's packages and unpacked.
pub fn toolchain(
    dir: &Path,
    major_minor: &str,
) -> Result<Result<Toolchain, Unavailable>, MsrvError> {
    let tc = Toolchain {
        root: dir.join("root"),
    };
    let wanted = format!("rustc {major_minor}.");
    if tc.version().is_some_and(|v| v.starts_with(&wanted)) {
        return Ok(Ok(tc));
    }
    for tool in ["apt-cache", "apt-get", "dpkg-deb", "dpkg-query"] {
        if Command::new(tool).arg("--version").output().is_err() {
            return Ok(Err(Unavailable(format!(
                "no {tool} here: Rust {major_minor} comes from Debian's packages"
            ))));
        }
    }
    let madison = run(Command::new("apt-cache").args(["madison", "rustc-web"]))?;
    let Some(version) = package_version(&madison, major_minor) else {
        return Ok(Err(Unavailable(format!(
            "Debian's package lists here hold no rustc-web {major_minor}.x"
        ))));
    };
    let rust = [
        "rustc-web".to_owned(),
        "cargo-web".to_owned(),
        "libstd-rust-web-dev".to_owned(),
        format!("libstd-rust-web-{major_minor}"),
    ];
    // Their shared libraries that this machine lacks (LLVM, cargo's
    // libgit2 dependencies) come along, unpacked beside them.
    let mut wanted_packages: Vec<String> = rust.iter().map(|p| format!("{p}={version}")).collect();
    for p in &rust {
        let show = run(Command::new("apt-cache").args(["show", &format!("{p}={version}")]))?;
        for line in show.lines().filter_map(|l| l.strip_prefix("Depends:")) {
            for dep in depends(line) {
                // Shared libraries only: `-dev` packages (headers, and
                // virtual ones such as libc-dev) are not needed to run.
                if dep.starts_with("lib")
                    && !dep.ends_with("-dev")
                    && !rust.contains(&dep)
                    && !installed(&dep)
                    && !wanted_packages.contains(&dep)
                {
                    wanted_packages.push(dep);
                }
            }
        }
    }
    let debs = dir.join("debs");
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(&debs).map_err(|source| MsrvError::Io {
        path: debs.clone(),
        source,
    })?;
    run(Command::new("apt-get")
        .current_dir(&debs)
        .arg("download")
        .args(&wanted_packages))?;
    let entries = std::fs::read_dir(&debs).map_err(|source| MsrvError::Io {
        path: debs.clone(),
        source,
    })?;
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().is_some_and(|e| e == "deb") {
            run(Command::new("dpkg-deb").arg("-x").arg(&path).arg(&tc.root))?;
        }
    }
    let _ = std::fs::remove_dir_all(&debs);
    match tc.version() {
        Some(v) if v.starts_with(&wanted) => Ok(Ok(tc)),
        other => Err(MsrvError::Output(format!(
            "the unpacked rustc-web {version} says {other:?}, not Rust {major_minor}"
        ))),
    }
}

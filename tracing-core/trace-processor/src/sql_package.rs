//! A user's own PerfettoSQL package (`--add-sql-package PATH[@PACKAGE]`,
//! as `trace_processor_shell` takes it): a directory of `.sql` files read
//! into modules that `INCLUDE PERFETTO MODULE` can name. A file
//! `dir/a/b.sql` becomes module `pkg.a.b`, where `pkg` is the name after
//! `@` or else the directory's own name; a file whose path holds another
//! `.` is skipped (its name could not be written in an `INCLUDE`), as
//! upstream skips it. Registering one on an engine, and the refusal of a
//! name that clashes with a built-in or an earlier package, is the
//! engine's (`sql/perfetto_sql/packages.rs`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

/// How deep below its root a package's files are looked for (a symbolic
/// link that loops ends here).
const MAX_DEPTH: usize = 32;

/// Why a package could not be read or registered.
#[derive(Debug, thiserror::Error)]
pub enum SqlPackageError {
    /// The directory is missing or is not a directory.
    #[error("SQL package: directory {} does not exist", .0.display())]
    NoDirectory(PathBuf),
    /// No package name was given and the directory has none to lend.
    #[error("SQL package: cannot name the package of {} (give PATH@PACKAGE)", .0.display())]
    NoName(PathBuf),
    /// A package name that is not dot-separated words of letters, digits
    /// and `_`.
    #[error(
        "SQL package: '{0}' is not a package name (dot-separated words of letters, digits and '_')"
    )]
    BadName(String),
    /// A file or directory that could not be read.
    #[error("SQL package: cannot read {}: {source}", path.display())]
    Read {
        /// The file or directory.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A file that is not UTF-8 text.
    #[error("SQL package: {} is not UTF-8 text", .0.display())]
    NotText(PathBuf),
    /// Directories nested deeper than the limit (a link loop?).
    #[error("SQL package: {} is nested more than {MAX_DEPTH} directories deep", .0.display())]
    TooDeep(PathBuf),
    /// The package's name clashes with a package already there.
    #[error(
        "SQL package '{package}' clashes with the {kind} package '{existing}': choose another name (PATH@PACKAGE)"
    )]
    Clash {
        /// The package being registered.
        package: String,
        /// The package it clashes with.
        existing: String,
        /// `built-in` or `user`.
        kind: &'static str,
    },
}

/// One module of a package: its name, its text and the file it came from.
#[derive(Debug, Clone)]
pub(crate) struct SqlModule {
    /// The module's name (`pkg.a.b`).
    pub key: String,
    /// Its PerfettoSQL text.
    pub sql: Arc<str>,
    /// The file it was read from (for errors).
    pub file: PathBuf,
}

/// A user's package of PerfettoSQL modules.
#[derive(Debug, Clone)]
pub struct SqlPackage {
    name: String,
    modules: Vec<SqlModule>,
}

impl SqlPackage {
    /// Reads the package a `--add-sql-package` argument names: `PATH` or
    /// `PATH@PACKAGE` (the last `@` splits them).
    pub fn from_arg(arg: &str) -> Result<Self, SqlPackageError> {
        match arg.rsplit_once('@') {
            Some((path, name)) => Self::from_dir(Path::new(path), Some(name)),
            None => Self::from_dir(Path::new(arg), None),
        }
    }

    /// Reads every `.sql` file under `dir` as a module of package `name`
    /// (the directory's own name when None).
    pub fn from_dir(dir: &Path, name: Option<&str>) -> Result<Self, SqlPackageError> {
        if !dir.is_dir() {
            return Err(SqlPackageError::NoDirectory(dir.to_path_buf()));
        }
        let name = match name {
            Some(n) => n.to_owned(),
            None => {
                let full = dir.canonicalize().map_err(|source| SqlPackageError::Read {
                    path: dir.to_path_buf(),
                    source,
                })?;
                full.file_name()
                    .and_then(|n| n.to_str())
                    .map(str::to_owned)
                    .ok_or_else(|| SqlPackageError::NoName(dir.to_path_buf()))?
            }
        };
        let mut files = Vec::new();
        collect(dir, &mut Vec::new(), &mut files)?;
        let mut modules = Vec::new();
        for (file, parts) in files {
            let bytes = std::fs::read(&file).map_err(|source| SqlPackageError::Read {
                path: file.clone(),
                source,
            })?;
            let text =
                String::from_utf8(bytes).map_err(|_| SqlPackageError::NotText(file.clone()))?;
            modules.push((format!("{name}.{}", parts.join(".")), text, file));
        }
        Self::new(name, modules)
    }

    /// A package of `modules` (name, text, file), each named `name.…`.
    pub(crate) fn new(
        name: String,
        modules: Vec<(String, String, PathBuf)>,
    ) -> Result<Self, SqlPackageError> {
        if !is_package_name(&name) {
            return Err(SqlPackageError::BadName(name));
        }
        let mut modules: Vec<SqlModule> = modules
            .into_iter()
            .map(|(key, sql, file)| SqlModule {
                key,
                sql: Arc::from(sql),
                file,
            })
            .collect();
        modules.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(SqlPackage { name, modules })
    }

    /// The package's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its modules' names, sorted.
    pub fn module_names(&self) -> impl Iterator<Item = &str> {
        self.modules.iter().map(|m| m.key.as_str())
    }

    /// Its modules, sorted by name.
    pub(crate) fn modules(&self) -> &[SqlModule] {
        &self.modules
    }

    /// Whether module `key` belongs to this package (`key` is the
    /// package's name or starts with it and a dot).
    pub(crate) fn owns(&self, key: &str) -> bool {
        is_prefix(&self.name, key)
    }
}

/// Whether dotted name `prefix` is `name` or a whole-component prefix of it.
pub(crate) fn is_prefix(prefix: &str, name: &str) -> bool {
    name == prefix
        || name
            .strip_prefix(prefix)
            .is_some_and(|rest| rest.starts_with('.'))
}

/// Dot-separated words of ASCII letters, digits and `_`.
fn is_package_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .split('.')
            .all(|w| !w.is_empty() && w.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'))
}

/// Adds the `.sql` files under `dir` to `out` with their path's components
/// below the root (`parts`, without `.sql`), skipping any whose path holds
/// another dot.
fn collect(
    dir: &Path,
    parts: &mut Vec<String>,
    out: &mut Vec<(PathBuf, Vec<String>)>,
) -> Result<(), SqlPackageError> {
    if parts.len() > MAX_DEPTH {
        return Err(SqlPackageError::TooDeep(dir.to_path_buf()));
    }
    let read = |source| SqlPackageError::Read {
        path: dir.to_path_buf(),
        source,
    };
    let mut entries = std::fs::read_dir(dir)
        .map_err(read)?
        .collect::<Result<Vec<_>, _>>()
        .map_err(read)?;
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let path = entry.path();
        let Some(file_name) = entry.file_name().to_str().map(str::to_owned) else {
            continue;
        };
        if path.is_dir() {
            if file_name.contains('.') {
                continue;
            }
            parts.push(file_name);
            let result = collect(&path, parts, out);
            parts.pop();
            result?;
        } else if let Some(stem) = file_name.strip_suffix(".sql") {
            if stem.is_empty() || stem.contains('.') {
                continue;
            }
            let mut p = parts.clone();
            p.push(stem.to_owned());
            out.push((path, p));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_becomes_modules_named_by_package_and_path() {
        let dir = std::env::temp_dir().join(format!("zt-sqlpkg-{}", std::process::id()));
        let root = dir.join("mine");
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::write(root.join("a.sql"), "SELECT 1;").unwrap();
        std::fs::write(root.join("sub/b.sql"), "SELECT 2;").unwrap();
        std::fs::write(root.join("skip.me.sql"), "SELECT 3;").unwrap();
        std::fs::write(root.join("notes.txt"), "x").unwrap();
        let p = SqlPackage::from_arg(root.to_str().unwrap()).unwrap();
        assert_eq!(p.name(), "mine");
        assert_eq!(
            p.module_names().collect::<Vec<_>>(),
            ["mine.a", "mine.sub.b"]
        );
        let p = SqlPackage::from_arg(&format!("{}@foo.bar", root.display())).unwrap();
        assert_eq!(
            p.module_names().collect::<Vec<_>>(),
            ["foo.bar.a", "foo.bar.sub.b"]
        );
        assert!(matches!(
            SqlPackage::from_arg(&format!("{}@bad-name", root.display())),
            Err(SqlPackageError::BadName(_))
        ));
        assert!(matches!(
            SqlPackage::from_arg(dir.join("nothing").to_str().unwrap()),
            Err(SqlPackageError::NoDirectory(_))
        ));
        std::fs::write(root.join("bin.sql"), [0xff, 0xfe]).unwrap();
        let e = SqlPackage::from_arg(root.to_str().unwrap()).unwrap_err();
        assert!(e.to_string().contains("bin.sql"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

//! The test suites the Miri and valgrind tasks name. A package's
//! integration tests are modules of one test binary, `tests/all/main.rs`
//! (each module a former `tests/<name>.rs`: the stack is compiled and
//! linked once for all of them); only the files that need a process to
//! themselves are binaries of their own, directly in `tests/`. So a suite
//! is the lib's unit tests, one of those binaries, or a module of `all`,
//! which the harness selects by the filter `<module>::`.

/// The combined test binary of a package (`tests/all/main.rs`).
pub const ALL: &str = "all";

/// A set of tests of one package that cargo and the test harness select.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Suite {
    /// The lib's unit tests (`--lib`).
    Lib,
    /// A test binary of its own (`--test NAME`, `tests/NAME.rs`).
    Test(&'static str),
    /// A module of the combined binary (`--test all -- NAME::`,
    /// `tests/all/NAME.rs`).
    Module(&'static str),
}

impl Suite {
    /// The test target cargo builds it in (`None`: the lib's unit tests).
    pub fn target(self) -> Option<&'static str> {
        match self {
            Suite::Lib => None,
            Suite::Test(t) => Some(t),
            Suite::Module(_) => Some(ALL),
        }
    }

    /// The harness filter that selects it in its binary (`None`: all of it).
    pub fn filter(self) -> Option<String> {
        match self {
            Suite::Module(m) => Some(format!("{m}::")),
            _ => None,
        }
    }

    /// Its name in messages.
    pub fn name(self) -> &'static str {
        match self {
            Suite::Lib => "(unit tests)",
            Suite::Test(t) | Suite::Module(t) => t,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{ALL, Suite};
    use std::path::{Path, PathBuf};

    /// The packages the tasks name suites of, and their directories.
    const PACKAGES: &[(&str, &str)] = &[
        ("protozero", "protozero"),
        ("zerotrace-core", "tracing-core"),
        ("zerotrace-heap-profile", "tracing-core/heap-profile"),
        ("zerotrace-loom", "tracing-core/loom"),
    ];

    fn root() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
    }

    /// Every `tests/all/` directory of the workspace.
    fn combined_dirs(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            let name = e.file_name();
            if !p.is_dir() || name == "target" || name == ".git" {
                continue;
            }
            if name == ALL && dir.ends_with("tests") && p.join("main.rs").exists() {
                out.push(p.clone());
            }
            combined_dirs(&p, out);
        }
    }

    /// The modules of a combined binary: its files' names, and the inline
    /// or nested `mod x` inside them (a test's path holds all of these).
    fn module_names(dir: &Path) -> Vec<String> {
        let mut out = Vec::new();
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            if p.extension().is_none_or(|x| x != "rs") {
                continue;
            }
            let stem = p.file_stem().unwrap().to_string_lossy().into_owned();
            if stem != "main" {
                out.push(stem);
            }
            for line in std::fs::read_to_string(&p).unwrap().lines() {
                let l = line.trim_start().trim_start_matches("pub ");
                if let Some(rest) = l.strip_prefix("mod ") {
                    let name: String = rest
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect();
                    out.push(name);
                }
            }
        }
        out
    }

    /// A file in `tests/all/` that main.rs does not declare would silently
    /// never be built: every one is a module.
    #[test]
    fn every_file_of_a_combined_binary_is_one_of_its_modules() {
        let mut dirs = Vec::new();
        combined_dirs(&root(), &mut dirs);
        assert!(!dirs.is_empty(), "no tests/all/ under {}", root().display());
        for dir in dirs {
            let main = std::fs::read_to_string(dir.join("main.rs")).unwrap();
            for e in std::fs::read_dir(&dir).unwrap().flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                let Some(stem) = name.strip_suffix(".rs") else {
                    continue;
                };
                assert!(
                    stem == "main" || main.lines().any(|l| l == format!("mod {stem};")),
                    "{}/{name} is not a module of its main.rs",
                    dir.display()
                );
            }
        }
    }

    /// What the tasks name exists, and a module's filter `name::` selects
    /// that module's tests only: no other module of the binary (nor one
    /// nested in a test file) has a name ending in `name`.
    #[test]
    fn the_named_suites_exist_and_their_filters_select_them_alone() {
        let named = crate::miri::suites().chain(crate::valgrind::suites());
        for (package, suite) in named {
            let (_, dir) = PACKAGES
                .iter()
                .find(|(p, _)| *p == package)
                .unwrap_or_else(|| panic!("{package}: add its directory to PACKAGES"));
            let tests = root().join(dir).join("tests");
            match suite {
                Suite::Lib => {}
                Suite::Test(t) => assert!(
                    tests.join(format!("{t}.rs")).exists(),
                    "{package}: no tests/{t}.rs"
                ),
                Suite::Module(m) => {
                    let all = tests.join(ALL);
                    assert!(
                        all.join(format!("{m}.rs")).exists(),
                        "{package}: no tests/all/{m}.rs"
                    );
                    for other in module_names(&all) {
                        assert!(
                            other == m || !other.ends_with(m),
                            "{package}: the filter `{m}::` would also select `{other}`"
                        );
                    }
                }
            }
        }
    }
}

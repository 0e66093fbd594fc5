//! The modules `INCLUDE PERFETTO MODULE` can name: each a name (`a.b.c`)
//! and the PerfettoSQL text we wrote for it, embedded in the binary, and
//! how a name written in an `INCLUDE` resolves to modules: its package is
//! its first component; `*` is every module, `a.*` every module whose name
//! starts with `a.`; an unknown package or module is an error naming it.
//! Running a module, once per engine, is `mod.rs`'s.

use super::error::PerfettoSqlError;

/// A module: its name and its text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Module {
    /// Its name.
    pub key: &'static str,
    /// Its PerfettoSQL text.
    pub sql: &'static str,
}

/// Every module, sorted by name. None holds upstream's text: each is ours,
/// written from the documented meaning of its tables and functions.
pub(crate) const MODULES: &[Module] = &[Module {
    key: "time.conversion",
    sql: include_str!("modules/time_conversion.sql"),
}];

/// The package of a module name: its first component.
fn package(key: &str) -> &str {
    key.split('.').next().unwrap_or(key)
}

/// The modules `key` names, in order, out of `modules`.
pub(crate) fn resolve<'m>(
    modules: &'m [Module],
    key: &str,
) -> Result<Vec<&'m Module>, PerfettoSqlError> {
    if key == "*" {
        return Ok(modules.iter().collect());
    }
    let pkg = package(key);
    if !modules.iter().any(|m| package(m.key) == pkg) {
        return Err(PerfettoSqlError::UnknownPackage {
            key: key.to_owned(),
        });
    }
    if let Some(prefix) = key.strip_suffix('*') {
        return Ok(modules
            .iter()
            .filter(|m| m.key.starts_with(prefix))
            .collect());
    }
    modules
        .iter()
        .find(|m| m.key == key)
        .map(|m| vec![m])
        .ok_or_else(|| PerfettoSqlError::UnknownModule {
            key: key.to_owned(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIXTURE: &[Module] = &[
        Module {
            key: "a.one",
            sql: "",
        },
        Module {
            key: "a.two.x",
            sql: "",
        },
        Module { key: "b", sql: "" },
    ];

    fn keys(key: &str) -> Result<Vec<&'static str>, PerfettoSqlError> {
        resolve(FIXTURE, key).map(|v| v.iter().map(|m| m.key).collect())
    }

    #[test]
    fn names_resolve_exactly_by_wildcard_or_to_an_error_naming_them() {
        assert_eq!(keys("a.one").unwrap(), ["a.one"]);
        assert_eq!(keys("a.*").unwrap(), ["a.one", "a.two.x"]);
        assert_eq!(keys("a.two.*").unwrap(), ["a.two.x"]);
        assert_eq!(keys("*").unwrap(), ["a.one", "a.two.x", "b"]);
        assert_eq!(keys("b").unwrap(), ["b"]);
        assert_eq!(keys("a.nothing.*").unwrap(), [] as [&str; 0]);
        assert_eq!(
            keys("a.three").unwrap_err().to_string(),
            "INCLUDE: unknown module 'a.three'"
        );
        assert_eq!(
            keys("zz.top").unwrap_err().to_string(),
            "INCLUDE: Package 'zz.top' not found"
        );
        // The shipped modules are sorted and unique.
        assert!(MODULES.windows(2).all(|w| w[0].key < w[1].key));
    }
}

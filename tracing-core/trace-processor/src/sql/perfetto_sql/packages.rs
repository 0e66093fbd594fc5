//! The modules `INCLUDE` reads from two places: ours, built in
//! (`modules.rs`), and the users' packages registered on an engine
//! (`--add-sql-package`, `crate::sql_package`). This is the registry of
//! the latter, the refusal of a package whose name clashes with a built-in
//! or an earlier package (a name that equals, or is a whole-component
//! prefix of, another's, so that every module name has one owner), and
//! how an `INCLUDE`'s name resolves over both.

use std::path::PathBuf;
use std::sync::{Arc, PoisonError, RwLock};

use super::error::PerfettoSqlError;
use super::modules::{self, Module};
use crate::sql_package::{SqlPackage, SqlPackageError, is_prefix};

/// The users' packages of one engine, shared with its module index table.
pub(crate) type UserPackages = Arc<RwLock<Vec<Arc<SqlPackage>>>>;

/// A module's text: ours (static) or a user's.
#[derive(Debug, Clone)]
pub(crate) enum Text {
    /// Built in.
    Static(&'static str),
    /// Read from a user's file.
    Shared(Arc<str>),
}

impl Text {
    /// The text.
    pub(crate) fn as_str(&self) -> &str {
        match self {
            Text::Static(s) => s,
            Text::Shared(s) => s,
        }
    }
}

/// A module an `INCLUDE` names.
#[derive(Debug, Clone)]
pub(crate) struct Resolved {
    /// Its name.
    pub key: String,
    /// Its text.
    pub sql: Text,
    /// The user's file it came from (None for ours).
    pub file: Option<PathBuf>,
}

/// A snapshot of the users' packages.
pub(crate) fn snapshot(user: &UserPackages) -> Vec<Arc<SqlPackage>> {
    user.read().unwrap_or_else(PoisonError::into_inner).clone()
}

/// The built-in packages' names (each module's first component), sorted.
pub(crate) fn builtin_packages(builtin: &[Module]) -> Vec<&'static str> {
    let mut names: Vec<&'static str> = builtin
        .iter()
        .map(|m| m.key.split('.').next().unwrap_or(m.key))
        .collect();
    names.dedup();
    names
}

/// Registers `package` after those in `user`, unless its name clashes
/// with a built-in package or one of theirs.
pub(crate) fn register(
    builtin: &[Module],
    user: &UserPackages,
    package: SqlPackage,
) -> Result<(), SqlPackageError> {
    let name = package.name().to_owned();
    let clash = |existing: &str| is_prefix(existing, &name) || is_prefix(&name, existing);
    if let Some(b) = builtin_packages(builtin).into_iter().find(|b| clash(b)) {
        return Err(SqlPackageError::Clash {
            package: name,
            existing: b.to_owned(),
            kind: "built-in",
        });
    }
    let mut list = user.write().unwrap_or_else(PoisonError::into_inner);
    if let Some(p) = list.iter().find(|p| clash(p.name())) {
        return Err(SqlPackageError::Clash {
            package: name,
            existing: p.name().to_owned(),
            kind: "user",
        });
    }
    list.push(Arc::new(package));
    Ok(())
}

/// The modules `key` names, in order, out of the built-in `builtin` and
/// the users' `user`: `*` is all of them; otherwise the user's package
/// that owns the name (or whose name starts with a wildcard's prefix)
/// answers, else the built-in registry does.
pub(crate) fn resolve(
    builtin: &'static [Module],
    user: &[Arc<SqlPackage>],
    key: &str,
) -> Result<Vec<Resolved>, PerfettoSqlError> {
    let ours = |m: &Module| Resolved {
        key: m.key.to_owned(),
        sql: Text::Static(m.sql),
        file: None,
    };
    let theirs = |p: &SqlPackage| -> Vec<Resolved> {
        p.modules()
            .iter()
            .map(|m| Resolved {
                key: m.key.clone(),
                sql: Text::Shared(m.sql.clone()),
                file: Some(m.file.clone()),
            })
            .collect()
    };
    if key == "*" {
        let mut all: Vec<Resolved> = builtin.iter().map(ours).collect();
        all.extend(user.iter().flat_map(|p| theirs(p)));
        return Ok(all);
    }
    if let Some(prefix) = key.strip_suffix('*') {
        let mine: Vec<Resolved> = user
            .iter()
            .filter(|p| p.owns(key) || p.name().starts_with(prefix))
            .flat_map(|p| theirs(p))
            .filter(|m| m.key.starts_with(prefix))
            .collect();
        if !mine.is_empty() || user.iter().any(|p| p.owns(key)) {
            return Ok(mine);
        }
    } else if let Some(p) = user.iter().find(|p| p.owns(key)) {
        return theirs(p)
            .into_iter()
            .find(|m| m.key == key)
            .map(|m| vec![m])
            .ok_or_else(|| PerfettoSqlError::UnknownModule {
                key: key.to_owned(),
            });
    }
    Ok(modules::resolve(builtin, key)?
        .into_iter()
        .map(ours)
        .collect())
}

/// The 1-based line and column of byte `offset` of `text`.
pub(crate) fn line_and_column(text: &str, offset: usize) -> (usize, usize) {
    let before = text.get(..offset.min(text.len())).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let column = before
        .rfind('\n')
        .map_or(before.len(), |n| before.len() - n - 1)
        + 1;
    (line, column)
}

impl crate::sql::Engine {
    /// Registers a user's package of modules for `INCLUDE PERFETTO MODULE`
    /// (refused when its name clashes with a built-in or earlier package).
    pub(crate) fn add_sql_package(&self, package: SqlPackage) -> Result<(), SqlPackageError> {
        self.perfetto.add_package(package)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIXTURE: &[Module] = &[
        Module {
            key: "a.one",
            sql: "SELECT 1;",
        },
        Module {
            key: "b",
            sql: "SELECT 2;",
        },
    ];

    fn package(name: &str, keys: &[&str]) -> SqlPackage {
        SqlPackage::new(
            name.to_owned(),
            keys.iter()
                .map(|k| {
                    (
                        k.to_string(),
                        format!("-- {k}"),
                        PathBuf::from(format!("{k}.sql")),
                    )
                })
                .collect(),
        )
        .unwrap()
    }

    fn keys(user: &UserPackages, key: &str) -> Result<Vec<String>, String> {
        resolve(FIXTURE, &snapshot(user), key)
            .map(|v| v.into_iter().map(|m| m.key).collect())
            .map_err(|e| e.to_string())
    }

    #[test]
    fn user_packages_resolve_beside_ours_and_may_not_shadow_them() {
        let user = UserPackages::default();
        assert_eq!(
            keys(&user, "mine.x").unwrap_err(),
            "INCLUDE: Package 'mine.x' not found"
        );
        register(FIXTURE, &user, package("mine", &["mine.x", "mine.y.z"])).unwrap();
        register(FIXTURE, &user, package("foo.bar.baz", &["foo.bar.baz.q"])).unwrap();
        assert_eq!(keys(&user, "mine.x").unwrap(), ["mine.x"]);
        assert_eq!(keys(&user, "mine.*").unwrap(), ["mine.x", "mine.y.z"]);
        assert_eq!(keys(&user, "mine.y.*").unwrap(), ["mine.y.z"]);
        assert_eq!(keys(&user, "foo.bar.*").unwrap(), ["foo.bar.baz.q"]);
        assert_eq!(keys(&user, "a.one").unwrap(), ["a.one"]);
        assert_eq!(
            keys(&user, "*").unwrap(),
            ["a.one", "b", "mine.x", "mine.y.z", "foo.bar.baz.q"]
        );
        assert_eq!(
            keys(&user, "mine.nope").unwrap_err(),
            "INCLUDE: unknown module 'mine.nope'"
        );
        // A built-in package's name, or one under it, is refused; so is a
        // user package's, or a name above or below it.
        for (name, existing) in [
            ("a", "a"),
            ("a.two", "a"),
            ("b", "b"),
            ("mine", "mine"),
            ("mine.y", "mine"),
            ("foo", "foo.bar.baz"),
        ] {
            let e = register(FIXTURE, &user, package(name, &[])).unwrap_err();
            assert!(
                matches!(&e, SqlPackageError::Clash { existing: x, .. } if x == existing),
                "{name}: {e}"
            );
        }
        // Nothing refused was kept.
        assert_eq!(snapshot(&user).len(), 2);
    }

    #[test]
    fn offsets_become_lines_and_columns() {
        assert_eq!(line_and_column("ab\ncd\nef", 0), (1, 1));
        assert_eq!(line_and_column("ab\ncd\nef", 4), (2, 2));
        assert_eq!(line_and_column("ab\ncd\nef", 99), (3, 3));
    }
}

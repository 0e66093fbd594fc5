//! The code generator's pipeline (syn, protox, prost-reflect, prettyplease
//! and the rest) is compiled at opt-level 2 under `dev` and `test` (the
//! workspace's Cargo.toml): that pays where the generator runs on large
//! schemas, in `target/debug` (the full upstream schema's build script,
//! the code generator's own tests). The build directories where it runs on
//! a few small files or not at all (the MSRV check, Miri) would only pay
//! the optimiser's compile time, so they build those crates unoptimised:
//! these are the `--config` arguments that say so, read from the
//! manifest, so that the list never drifts from it.

use std::path::Path;

/// `--config` arguments that compile at opt-level 0 every package the
/// workspace manifest optimises under the `dev` or `test` profile. An
/// unreadable manifest gives none (the build is then only slower).
pub fn configs(root: &Path) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(root.join("Cargo.toml")) else {
        return Vec::new();
    };
    from_manifest(&text)
}

/// [`configs`] over the manifest's text.
fn from_manifest(text: &str) -> Vec<String> {
    let Ok(manifest) = text.parse::<toml::Table>() else {
        return Vec::new();
    };
    let mut names = std::collections::BTreeSet::new();
    for profile in ["dev", "test"] {
        let packages = manifest
            .get("profile")
            .and_then(|p| p.get(profile))
            .and_then(|p| p.get("package"))
            .and_then(|p| p.as_table());
        for (name, settings) in packages.into_iter().flatten() {
            let optimised = settings
                .get("opt-level")
                .and_then(toml::Value::as_integer)
                .is_some_and(|level| level >= 2);
            if optimised {
                names.insert(name.clone());
            }
        }
    }
    let mut args = Vec::new();
    for name in names {
        for profile in ["dev", "test"] {
            args.push("--config".to_owned());
            args.push(format!("profile.{profile}.package.{name}.opt-level=0"));
        }
    }
    args
}

#[cfg(test)]
mod tests {
    use super::from_manifest;

    /// Every package optimised under `dev` or `test` is unoptimised under
    /// both; packages at opt-level 1 (protozero, for its tests' stacks)
    /// keep their setting.
    #[test]
    fn every_optimised_package_is_unoptimised_under_both_profiles() {
        let manifest = r#"
[profile.dev.package.protozero]
opt-level = 1
[profile.dev.package.syn]
opt-level = 2
[profile.test.package.protox]
opt-level = 2
"#;
        assert_eq!(
            from_manifest(manifest),
            [
                "--config",
                "profile.dev.package.protox.opt-level=0",
                "--config",
                "profile.test.package.protox.opt-level=0",
                "--config",
                "profile.dev.package.syn.opt-level=0",
                "--config",
                "profile.test.package.syn.opt-level=0",
            ]
        );
    }

    /// The workspace's own manifest optimises the generator's pipeline.
    #[test]
    fn the_workspace_manifest_names_the_pipeline() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let args = super::configs(&root);
        assert!(args.contains(&"profile.dev.package.syn.opt-level=0".to_owned()));
        assert!(args.contains(&"profile.test.package.protox.opt-level=0".to_owned()));
        assert!(!args.iter().any(|a| a.contains(".protozero.")));
    }
}

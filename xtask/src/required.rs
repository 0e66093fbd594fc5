//! Whether a task that cannot run here (no nightly, no Miri, no MSRV
//! toolchain) may say so and pass, or must fail: CI never skips a check
//! silently. A task must run when its `ZEROTRACE_REQUIRE_*` variable is
//! `1` (the repository's convention, which `.ci/run` exports) or when `CI`
//! is set (as CI services set it), unless `CI` says `false` or `0`.

/// Whether the check named by `var` (a `ZEROTRACE_REQUIRE_*` variable)
/// must run in this environment.
pub fn required(var: &str) -> bool {
    required_in(var, |k| std::env::var(k).ok())
}

/// [`required`] over the environment `env` gives.
pub fn required_in(var: &str, env: impl Fn(&str) -> Option<String>) -> bool {
    if env(var).is_some_and(|v| v == "1") {
        return true;
    }
    env("CI").is_some_and(|v| !matches!(v.trim(), "" | "0" | "false" | "False" | "FALSE"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| {
            vars.iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| (*v).to_owned())
        }
    }

    #[test]
    fn ci_or_the_require_variable_makes_a_check_required() {
        const V: &str = "ZEROTRACE_REQUIRE_MIRI";
        assert!(!required_in(V, env(&[])));
        assert!(required_in(V, env(&[(V, "1")])));
        assert!(!required_in(V, env(&[(V, "0")])));
        assert!(required_in(V, env(&[("CI", "true")])));
        assert!(required_in(V, env(&[("CI", "1")])));
        assert!(!required_in(V, env(&[("CI", "false")])));
        assert!(!required_in(V, env(&[("CI", "")])));
        assert!(required_in(V, env(&[("CI", "false"), (V, "1")])));
    }
}

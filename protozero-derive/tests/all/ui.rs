//! Compile-fail tests: misuse of the derives is a compile error on the
//! offending token. Expected compiler output is in `tests/ui/*.stderr`
//! (regenerate with `TRYBUILD=overwrite` after reviewing a change).

/// The variables that make Clippy the compiler of a workspace's crates
/// (CI's main lane sets them for its build and tests): trybuild's cargo
/// would inherit them, and Clippy's driver lists a diagnostic's candidate
/// impls in another order than rustc's, which the expected output holds.
const WRAPPER_VARS: [&str; 2] = ["RUSTC_WORKSPACE_WRAPPER", "CLIPPY_ARGS"];

#[test]
fn ui() {
    if WRAPPER_VARS.iter().any(|v| std::env::var_os(v).is_some()) {
        // This test again, in a process of its own without them.
        let exe = std::env::current_exe().expect("the test binary's path");
        let mut child = std::process::Command::new(exe);
        child.args(["ui::ui", "--exact", "--nocapture", "--test-threads=1"]);
        for v in WRAPPER_VARS {
            child.env_remove(v);
        }
        let status = child.status().expect("running the test binary");
        assert!(status.success(), "the compile-fail tests failed: {status}");
        return;
    }
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}

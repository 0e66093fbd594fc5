//! Compile-fail tests: misuse of the derives is a compile error on the
//! offending token. Expected compiler output is in `tests/ui/*.stderr`
//! (regenerate with `TRYBUILD=overwrite` after reviewing a change).

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}

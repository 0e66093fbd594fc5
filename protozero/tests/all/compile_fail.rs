//! The nesting discipline is a compile-time property: a child message
//! mutably borrows its parent, so the misuses in `tests/ui/` must not compile.
//! The expected compiler messages are kept next to each case (`.stderr`);
//! regenerate them with `TRYBUILD=overwrite` after a toolchain upgrade.

#[test]
#[cfg_attr(miri, ignore = "runs the compiler")]
fn nesting_misuse_does_not_compile() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}

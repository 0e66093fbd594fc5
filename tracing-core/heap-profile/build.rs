//! Declares the `zerotrace_loom` cfg the hook's loom build uses (`RUSTFLAGS="--cfg zerotrace_loom"`).
fn main() {
    println!("cargo::rustc-check-cfg=cfg(zerotrace_loom)");
}

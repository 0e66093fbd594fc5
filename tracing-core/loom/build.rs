//! Declares the `zerotrace_loom` cfg the models are built under
//! (`RUSTFLAGS="--cfg zerotrace_loom"`).
fn main() {
    println!("cargo::rustc-check-cfg=cfg(zerotrace_loom)");
}

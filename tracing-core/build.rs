//! Declares the `zerotrace_loom` cfg used by the model-checking tests (`RUSTFLAGS="--cfg zerotrace_loom"`).
fn main() {
    println!("cargo::rustc-check-cfg=cfg(zerotrace_loom)");
}

//! Declares the `loom` cfg used by the model-checking tests (`RUSTFLAGS="--cfg loom"`).
fn main() {
    println!("cargo::rustc-check-cfg=cfg(loom)");
}

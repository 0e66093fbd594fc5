//! Generates the protozero writers and decoders for `proto/shop/order.proto`
//! (the ten lines a user writes), and prost's types for the same file (only
//! to show that the bytes are ordinary protobuf).

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=proto");
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR")?);
    protozero_codegen::Config::new()
        .include("proto")
        .input("proto/shop/order.proto")
        .generate()?
        .write_to(out.join("protozero"))?;

    // The same file through prost, with protox (pure Rust, no protoc).
    let descriptors = protox::compile(["shop/order.proto"], ["proto"])?;
    std::fs::create_dir_all(out.join("prost"))?;
    prost_build::Config::new()
        .out_dir(out.join("prost"))
        .compile_fds(descriptors)?;
    Ok(())
}

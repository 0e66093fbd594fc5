//! Builds `cpp/service_shim.cc`, which includes Perfetto's amalgamated C++
//! source (vendored by the `perfetto-sdk-sys` crate), into a static library.
//!
//! That one translation unit takes minutes to compile, and CI builds this
//! package under more than one profile (`cargo clippy`, then `cargo test`),
//! each with its own `OUT_DIR`. So the library is cached outside the profile
//! directories, in `<target dir>/genuine-perfetto/<key>/`, where the key
//! hashes everything that changes the object code: the shim's text, the
//! amalgamation's crate version, the compiler and its version, and the flags.
//! The flags are fixed here, with one exception: optimised builds (cargo's
//! `release` and `bench`, which the benchmarks use) compile at `-O3`, and
//! the others (`cargo clippy`, `cargo build`, `cargo test`: what CI runs, for
//! the interop tests only) at `-O1`, which takes two thirds of the
//! compiler's time on this 12 MB unit. So the unoptimised profiles compute
//! one key, and the first build of a target directory is the only one that
//! compiles C++. A build writes into a private directory
//! and renames it into place, so concurrent builds never see half a library.
//!
//! The amalgamation is found through `cargo metadata` (asked by
//! `zerotrace-crate-source`, a build-dependency; it downloads the
//! crate on a fresh machine: the dependency is declared for a `cfg(any())`
//! target, so cargo never builds it). `ZEROTRACE_PERFETTO_SDK_DIR` may point
//! at an unpacked `perfetto-sdk-sys` instead.

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// The crate that vendors the amalgamation, and its pinned version (keep in
/// step with Cargo.toml).
const SDK_CRATE: &str = "perfetto-sdk-sys";
const SDK_VERSION: &str = "1.4.0";
/// The static library's name (`lib<name>.a`).
const LIB: &str = "zt_perfetto_service";
/// Bump to invalidate every cached library.
const CACHE_EPOCH: &str = "1";

fn main() {
    let manifest_dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    let shim = manifest_dir.join("cpp/service_shim.cc");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed={}", shim.display());
    for var in ["CXX", "CXXFLAGS", "ZEROTRACE_PERFETTO_SDK_DIR"] {
        println!("cargo:rerun-if-env-changed={var}");
    }

    let build = configure();
    let compiler = build.get_compiler();
    let mut key = Fnv::new();
    key.add(CACHE_EPOCH.as_bytes());
    key.add(SDK_CRATE.as_bytes());
    key.add(SDK_VERSION.as_bytes());
    key.add(&fs::read(&shim).expect("read cpp/service_shim.cc"));
    key.add(compiler.path().as_os_str().as_encoded_bytes());
    for arg in compiler.args() {
        key.add(arg.as_encoded_bytes());
    }
    key.add(&compiler_version(compiler.path()));
    key.add(env::var("TARGET").unwrap_or_default().as_bytes());

    let cache_root = target_dir().join("genuine-perfetto");
    let dir = cache_root.join(format!("{:016x}", key.finish()));
    let lib_file = dir.join(format!("lib{LIB}.a"));
    if !lib_file.is_file() {
        compile(build, &shim, &cache_root, &dir);
    }
    println!("cargo:rustc-link-search=native={}", dir.display());
    // Not bundled into the rlib: the final link finds it in the cache.
    println!("cargo:rustc-link-lib=static:-bundle={LIB}");
    let target = env::var("TARGET").unwrap_or_default();
    let cxx_stdlib = if target.contains("apple") || target.contains("freebsd") {
        "c++"
    } else {
        "stdc++"
    };
    println!("cargo:rustc-link-lib=dylib={cxx_stdlib}");
}

/// The compiler settings: in an optimised cargo profile, as Perfetto's own
/// standalone Linux release builds are (`-O3`, `NDEBUG`), since the
/// benchmarks measure this library; in the others (the tests') `-O1`.
fn configure() -> cc::Build {
    let optimised = env::var("PROFILE").is_ok_and(|p| p == "release");
    let mut build = cc::Build::new();
    build
        .cpp(true)
        .std("c++17")
        .opt_level(if optimised { 3 } else { 1 })
        .debug(false)
        .define("NDEBUG", None)
        .warnings(false)
        .cargo_metadata(false)
        .cargo_warnings(false)
        .flag("-Wno-redundant-move")
        .flag("-Wno-unused-const-variable");
    build
}

/// Compiles the shim into `dir` (through a private sibling directory).
fn compile(mut build: cc::Build, shim: &Path, cache_root: &Path, dir: &Path) {
    let sdk = locate_sdk();
    let amalgamation = sdk.join("libperfetto_c");
    assert!(
        amalgamation.join("perfetto_c.cc").is_file(),
        "{} has no libperfetto_c/perfetto_c.cc",
        sdk.display()
    );
    fs::create_dir_all(cache_root).expect("create the C++ cache directory");
    let tmp = cache_root.join(format!(
        "tmp-{}-{}",
        std::process::id(),
        dir.file_name().and_then(|n| n.to_str()).unwrap_or("lib")
    ));
    let _ = fs::remove_dir_all(&tmp);
    fs::create_dir_all(&tmp).expect("create a build directory");
    let started = Instant::now();
    build
        .include(&amalgamation)
        .file(shim)
        .out_dir(&tmp)
        .try_compile(LIB)
        .unwrap_or_else(|e| panic!("compiling {}: {e}", shim.display()));
    // Only the library is kept.
    for entry in fs::read_dir(&tmp)
        .expect("list the build directory")
        .flatten()
    {
        let path = entry.path();
        if path.file_name().and_then(|n| n.to_str()) != Some(&format!("lib{LIB}.a")) {
            let _ = if path.is_dir() {
                fs::remove_dir_all(&path)
            } else {
                fs::remove_file(&path)
            };
        }
    }
    let secs = started.elapsed().as_secs_f64();
    fs::write(
        tmp.join("BUILD-INFO"),
        format!(
            "{SDK_CRATE} {SDK_VERSION} from {}\ncompiled in {secs:.1} s\n",
            sdk.display()
        ),
    )
    .expect("write BUILD-INFO");
    // Another build may have finished the same key first: keep its copy.
    if fs::rename(&tmp, dir).is_err() {
        let _ = fs::remove_dir_all(&tmp);
        assert!(
            dir.join(format!("lib{LIB}.a")).is_file(),
            "could not move the library into {}",
            dir.display()
        );
    }
}

/// The unpacked `perfetto-sdk-sys` sources.
fn locate_sdk() -> PathBuf {
    let manifest_dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("manifest dir"));
    zerotrace_crate_source::crate_source_dir(
        "ZEROTRACE_PERFETTO_SDK_DIR",
        &manifest_dir,
        SDK_CRATE,
        SDK_VERSION,
    )
    .unwrap_or_else(|e| panic!("locating {SDK_CRATE}: {e}"))
}

/// The cargo target directory: the parent of the profile directory that
/// holds this build script's `OUT_DIR` (`<target>/<profile>/build/<pkg>/out`,
/// with a target triple level in between when cross-compiling).
fn target_dir() -> PathBuf {
    let out = PathBuf::from(env::var("OUT_DIR").expect("OUT_DIR"));
    out.ancestors()
        .find(|p| p.file_name().is_some_and(|n| n == "build"))
        .and_then(Path::parent)
        .and_then(Path::parent)
        .map(Path::to_path_buf)
        .unwrap_or(out)
}

/// `<compiler> --version`, or nothing if it cannot be run.
fn compiler_version(path: &Path) -> Vec<u8> {
    Command::new(path)
        .arg("--version")
        .output()
        .map(|o| o.stdout)
        .unwrap_or_default()
}

/// 64-bit FNV-1a: a stable hash for the cache key (std's hasher may change
/// between Rust releases).
struct Fnv(u64);

impl Fnv {
    fn new() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }

    /// Adds `bytes`, length-prefixed so that field boundaries count.
    fn add(&mut self, bytes: &[u8]) {
        for b in (bytes.len() as u64).to_le_bytes().iter().chain(bytes) {
            self.0 ^= u64::from(*b);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

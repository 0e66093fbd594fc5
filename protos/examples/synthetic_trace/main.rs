//! Writes Perfetto's four documented synthetic TrackEvent scenarios (sync
//! slices, async slices, a flow, a counter) into one trace file through the
//! generated writers; the file opens in the Perfetto UI.
//!
//! `cargo run --example synthetic_trace -- trace.pftrace`

mod scenarios;

use std::process::ExitCode;

use zerotrace_protos::protos::TraceDecoder;

fn main() -> ExitCode {
    let mut args = std::env::args_os().skip(1);
    let (Some(out), None) = (args.next(), args.next()) else {
        eprintln!("usage: synthetic_trace OUT");
        return ExitCode::from(2);
    };
    let bytes = match scenarios::synthetic_trace() {
        Ok(bytes) => bytes,
        Err(e) => {
            eprintln!("encoding failed: {e}");
            return ExitCode::FAILURE;
        }
    };
    if let Err(e) = std::fs::write(&out, &bytes) {
        eprintln!("cannot write {}: {e}", out.to_string_lossy());
        return ExitCode::FAILURE;
    }
    let packets = TraceDecoder::new(&bytes).packet().count();
    println!(
        "wrote {} bytes ({packets} packets) to {}",
        bytes.len(),
        out.to_string_lossy()
    );
    ExitCode::SUCCESS
}

//! Writes the bench's recorded TrackEvent trace to a file, `copies` times
//! over (traces concatenate), for end-to-end timings of the command-line
//! tools: `cargo run --release -p zerotrace-decode-bench --example
//! record_trace -- big.pftrace 10`.

use std::io::Write;

use zerotrace_decode_bench::data::track_event_trace;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let out = args.next().ok_or("usage: record_trace OUT [COPIES]")?;
    let copies: usize = args.next().map(|n| n.parse()).transpose()?.unwrap_or(1);
    let trace = track_event_trace()?;
    let mut f = std::io::BufWriter::new(std::fs::File::create(&out)?);
    for _ in 0..copies {
        f.write_all(&trace)?;
    }
    f.flush()?;
    println!("{out}: {} bytes", trace.len() * copies);
    Ok(())
}

//! The short soak (issue #22; `cargo xtask soak` runs the long one): 4
//! producer processes × 2 threads write for 5 s into a 2 MiB ring buffer
//! while our consumer reads it every second, first through `zerotraced`,
//! then through Perfetto's genuine service. Both must deliver every packet
//! intact, in order per sequence, with every loss flagged; ours must stay
//! within the buffer plus the genuine service's overhead (and a slack, see
//! [`SLACK_KB`]) and must not grow while the producers write.
//! (Its own test binary, not a module of `all/`: the two services are
//! measured one after the other, under nobody else's load.)
#![cfg(target_os = "linux")]

use std::path::PathBuf;
use std::time::Duration;

use zerotrace_interop::services::Which;
use zerotrace_interop::soak::{self, SoakBins, SoakOptions, SoakReport};

/// What ours may use beyond the buffer plus the genuine service's
/// overhead: 4 MiB, for what differs between the two processes besides
/// the tracing (their code and libraries: a Rust daemon against a C++ shim
/// in a Rust binary, debug builds here; the allocators' retention; a read
/// in flight when a sample is taken). Here the two measured within 0.5 MiB
/// of each other; the 2 MiB ReadBuffers steps ours took before cost 6 MiB
/// and failed this bound, as would any per-read or per-packet staging that
/// grows with the load.
const SLACK_KB: i64 = 4 * 1024;

/// Growth allowed between the middle and the last third of the writing
/// phase: 2 MiB, far below what a leak per packet (some 10^5 packets
/// here) would show.
const GROWTH_KB: i64 = 2 * 1024;

fn bins() -> SoakBins {
    SoakBins {
        service: PathBuf::from(env!("CARGO_BIN_EXE_soak_service")),
        producer: PathBuf::from(env!("CARGO_BIN_EXE_soak_producer")),
    }
}

fn short(which: Which) -> SoakOptions {
    SoakOptions {
        which,
        producers: 4,
        threads: 2,
        seconds: 5.0,
        rate: 2_000,
        buffer_kb: 2 * 1024,
        smb_kb: 256,
        read_every: Duration::from_secs(1),
    }
}

fn checked(which: Which) -> SoakReport {
    let r = soak::run(&short(which), &bins()).expect("the soak runs to its end");
    println!("{}", r.table(1));
    println!("{}", r.summary());
    let who = r.service();
    assert!(r.exits_ok, "{who}: a process did not exit cleanly");
    assert_eq!(r.problem_count, 0, "{who}: {:#?}", r.problems);
    assert_eq!(r.writers, 8, "{who}: writers that reported");
    assert!(r.counts.test_packets > 0, "{who}: nothing read");
    assert_eq!(
        r.counts.test_packets + r.counts.lost,
        r.written,
        "{who}: every packet written is read or counted in a flagged gap"
    );
    if let Some(g) = r.growth_kb() {
        assert!(g <= GROWTH_KB, "{who}: grew by {g} KiB while writing");
    }
    r
}

#[test]
fn soak_short_both_services() {
    let ours = checked(Which::Zerotraced);
    let genuine = checked(Which::Genuine);
    println!("{}", soak::report::compare(&ours, &genuine));
    let bound = i64::from(ours.options.buffer_kb) + genuine.overhead_kb().max(0) + SLACK_KB;
    assert!(
        ours.peak_hwm_kb as i64 <= bound,
        "zerotraced peaked at {} KiB, above the buffer + the genuine overhead + slack = {bound} KiB",
        ours.peak_hwm_kb
    );
}

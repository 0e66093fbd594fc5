//! The baseline of the `tracing` Layer's instruction count: `N` spans with
//! the same two fields as `trace_event_loop span_layer` (created, entered,
//! exited, closed) through a registry with a layer that does nothing, in a
//! binary of its own, so that how the compiler splits and inlines the
//! registry's code does not move with the Layer's (both are generic code
//! instantiated in the program itself):
//!
//! ```sh
//! cargo build --release -p zerotrace-hot-paths --bin span_registry_loop
//! valgrind --tool=callgrind --toggle-collect='span_registry_loop::run_*' \
//!     target/release/span_registry_loop 100000
//! ```

use std::hint::black_box;

use tracing_subscriber::layer::SubscriberExt;

#[inline(never)]
fn run_span(n: u64) {
    for i in 0..n {
        let s = tracing::info_span!(
            "span",
            count = black_box(i as i64),
            what = black_box("parse")
        );
        let _e = s.enter();
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let n: u64 = std::env::args()
        .nth(1)
        .as_deref()
        .unwrap_or("100000")
        .parse()?;
    let s = tracing_subscriber::registry().with(tracing_subscriber::layer::Identity::new());
    tracing::subscriber::with_default(s, || run_span(n));
    println!("{n} spans through a registry with a no-op layer");
    Ok(())
}

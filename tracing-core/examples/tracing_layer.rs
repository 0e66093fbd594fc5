//! A tokio app instrumented with `tracing`, recorded as a Perfetto trace
//! through zerotrace's Layer and the in-process backend: each task's spans
//! become slices, events instants, `counter.*` fields counter tracks.
//!
//! `cargo run -p zerotrace-core --example tracing_layer -- trace.pftrace`

use std::path::Path;
use std::time::Duration;

use tracing::{Instrument, info, info_span};
use tracing_subscriber::layer::SubscriberExt;
use zerotrace_core::track_event::{Category, InProcessConfig, InProcessSession, PerfettoLayer};

static TRACING: Category = Category::with("tracing", &[], "Spans and events from `tracing`");
static CATEGORIES: [&Category; 1] = [&TRACING];

async fn handle(request: u64) {
    for step in 0..3u64 {
        async {
            tokio::time::sleep(Duration::from_millis(2)).await;
            info!(step, "step done");
        }
        .instrument(info_span!("step", request, step))
        .await;
    }
    info!(counter.in_flight = (request % 4) as i64);
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let out = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "tracing_layer.pftrace".into());
    let session = InProcessSession::start(&CATEGORIES, InProcessConfig::default())?;
    let subscriber = tracing_subscriber::registry().with(PerfettoLayer::new(&TRACING));
    tracing::subscriber::set_global_default(subscriber)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()?;
    runtime.block_on(async {
        let tasks: Vec<_> = (0..8u64)
            .map(|r| tokio::spawn(handle(r).instrument(info_span!("request", id = r))))
            .collect();
        for t in tasks {
            let _ = t.await;
        }
    });
    let bytes = session.stop(Path::new(&out))?;
    println!("wrote {bytes} bytes to {out}");
    Ok(())
}

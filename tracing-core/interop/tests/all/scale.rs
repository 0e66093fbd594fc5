//! The scale sweep in small (`cargo xtask scale` runs the real one): 1 and
//! 4 producer processes for 2 s through `zerotraced` and Perfetto's genuine
//! service. Every packet written is read back or counted in a flagged gap,
//! none is damaged, and both services' CPU per MB is a positive, finite
//! figure, so the sweep cannot silently measure nothing. No timing is
//! asserted.
#![cfg(target_os = "linux")]

use std::path::PathBuf;

use zerotrace_interop::services::Which;
use zerotrace_interop::soak::SoakBins;
use zerotrace_interop::soak::scale::{self, ScaleOptions};

#[test]
fn a_small_sweep_measures_both_services() {
    let bins = SoakBins {
        service: PathBuf::from(env!("CARGO_BIN_EXE_soak_service")),
        producer: PathBuf::from(env!("CARGO_BIN_EXE_soak_producer")),
    };
    let opts = ScaleOptions {
        producers: vec![1, 4],
        seconds: 2.0,
        rate: 200,
        repeat: 1,
        buffer_kb: 4 * 1024,
        smb_kb: 256,
    };
    let mut runs = Vec::new();
    let points = scale::run(&opts, &bins, |r| runs.push(r.clone())).expect("the sweep runs");
    assert_eq!(points.len(), 2);
    assert_eq!(runs.len(), 4);
    for r in &runs {
        assert_eq!(r.problems, 0, "{r:?}");
        assert!(r.written > 0 && r.bytes > 0, "{r:?}");
        assert!(r.cpu_secs >= 0.0 && r.cpu_secs.is_finite(), "{r:?}");
        let ms = r.ms_per_mb();
        assert!(ms.is_finite(), "{r:?}");
    }
    // Both services at both points, the larger point with more data.
    for p in &points {
        assert_eq!((p.ours.len(), p.genuine.len()), (1, 1));
        assert_eq!(p.ours[0].which, Which::Zerotraced);
        assert_eq!(p.genuine[0].which, Which::Genuine);
    }
    assert!(points[1].mb() > points[0].mb());
    let table = scale::table(&points);
    println!("{table}");
    assert_eq!(table.lines().count(), 4);
    let svg = scale::svg(&points);
    assert_eq!(svg.matches("<polyline").count(), 2);
}

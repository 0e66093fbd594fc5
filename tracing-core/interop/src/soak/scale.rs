//! How a service's cost grows with the number of producers (issue 32): the
//! soak's workload with 1, 16, 64 and 256 producer processes, each writing
//! at the same fixed rate into one session (so the total grows with them),
//! through `zerotraced` and through Perfetto's genuine service, alternately
//! at every point. The figure is the service's own CPU time (user +
//! system, [`cpu`](super::cpu)) from EnableTracing to the last read, per MB
//! the consumer read back. The sweep prints a table and draws both services'
//! cost against the number of producers as an SVG.

use std::fmt::Write as _;

use super::{SoakBins, SoakError, SoakOptions, run as soak_run};
use crate::services::Which;

/// What the sweep runs.
#[derive(Debug, Clone, PartialEq)]
pub struct ScaleOptions {
    /// Producer processes at each point.
    pub producers: Vec<u32>,
    /// Seconds each run writes.
    pub seconds: f64,
    /// Packets a second each producer writes (one writer thread each).
    pub rate: u32,
    /// Runs of each service at each point (the table takes the median).
    pub repeat: u32,
    /// The session's ring buffer, in KiB.
    pub buffer_kb: u32,
    /// Each producer's SMB size hint, in KiB.
    pub smb_kb: u32,
}

impl Default for ScaleOptions {
    /// 1, 16, 64 and 256 producers at 200 packets a second each (the soak's
    /// packets, about 300 bytes on average: 60 KB/s a producer, 15 MB/s at
    /// 256), 8 s a run, 3 runs of each service a point, a 32 MiB ring read
    /// every second. The rate is what this 2-core machine sustains at 256
    /// producer processes for both services without losses, with the
    /// producers' own wake-ups (one per packet) leaving the services room.
    fn default() -> ScaleOptions {
        ScaleOptions {
            producers: vec![1, 16, 64, 256],
            seconds: 8.0,
            rate: 200,
            repeat: 3,
            buffer_kb: 32 * 1024,
            smb_kb: 256,
        }
    }
}

/// One run of one service at one point.
#[derive(Debug, Clone, PartialEq)]
pub struct ScaleRun {
    /// The service.
    pub which: Which,
    /// Producer processes.
    pub producers: u32,
    /// Bytes the consumer read back.
    pub bytes: u64,
    /// The service's CPU time over the run, in seconds.
    pub cpu_secs: f64,
    /// Packets written but not read (lost in flagged gaps).
    pub lost: u64,
    /// Packets written.
    pub written: u64,
    /// Problems the checker found (damaged or misordered packets).
    pub problems: u64,
}

impl ScaleRun {
    /// Milliseconds of the service's CPU per MB (10^6 bytes) read.
    pub fn ms_per_mb(&self) -> f64 {
        if self.bytes == 0 {
            return f64::INFINITY;
        }
        self.cpu_secs * 1000.0 / (self.bytes as f64 / 1e6)
    }
}

/// Both services' runs at one point.
#[derive(Debug, Clone, PartialEq)]
pub struct ScalePoint {
    /// Producer processes.
    pub producers: u32,
    /// `zerotraced`'s runs.
    pub ours: Vec<ScaleRun>,
    /// The genuine service's runs.
    pub genuine: Vec<ScaleRun>,
}

/// The median of `xs` (NaN when empty).
fn median(mut xs: Vec<f64>) -> f64 {
    if xs.is_empty() {
        return f64::NAN;
    }
    xs.sort_by(f64::total_cmp);
    let n = xs.len();
    if n % 2 == 1 {
        xs[n / 2]
    } else {
        (xs[n / 2 - 1] + xs[n / 2]) / 2.0
    }
}

impl ScalePoint {
    /// Median ms/MB of `zerotraced`.
    pub fn ours_ms_per_mb(&self) -> f64 {
        median(self.ours.iter().map(ScaleRun::ms_per_mb).collect())
    }

    /// Median ms/MB of the genuine service.
    pub fn genuine_ms_per_mb(&self) -> f64 {
        median(self.genuine.iter().map(ScaleRun::ms_per_mb).collect())
    }

    /// Median MB read per run (both services).
    pub fn mb(&self) -> f64 {
        let all = self.ours.iter().chain(&self.genuine);
        median(all.map(|r| r.bytes as f64 / 1e6).collect())
    }
}

/// Why the sweep stopped.
#[derive(Debug, thiserror::Error)]
pub enum ScaleError {
    /// A soak run failed.
    #[error("{which:?} with {producers} producers: {source}")]
    Run {
        /// The service.
        which: Which,
        /// Producer processes.
        producers: u32,
        /// What failed.
        source: SoakError,
    },
    /// The service's CPU time could not be read.
    #[error("{which:?} with {producers} producers: no CPU time for the service")]
    NoCpu {
        /// The service.
        which: Which,
        /// Producer processes.
        producers: u32,
    },
}

/// Runs the sweep; `progress` sees every run as it ends.
pub fn run(
    opts: &ScaleOptions,
    bins: &SoakBins,
    mut progress: impl FnMut(&ScaleRun),
) -> Result<Vec<ScalePoint>, ScaleError> {
    let mut points = Vec::new();
    for &producers in &opts.producers {
        let mut point = ScalePoint {
            producers,
            ours: Vec::new(),
            genuine: Vec::new(),
        };
        for _ in 0..opts.repeat.max(1) {
            // Alternately, so machine drift affects both alike.
            for which in [Which::Zerotraced, Which::Genuine] {
                let soak = SoakOptions {
                    which,
                    producers,
                    threads: 1,
                    seconds: opts.seconds,
                    rate: opts.rate,
                    buffer_kb: opts.buffer_kb,
                    smb_kb: opts.smb_kb,
                    read_every: std::time::Duration::from_secs(1),
                };
                let r = soak_run(&soak, bins).map_err(|source| ScaleError::Run {
                    which,
                    producers,
                    source,
                })?;
                let cpu_secs = r
                    .service_cpu_secs
                    .ok_or(ScaleError::NoCpu { which, producers })?;
                let run = ScaleRun {
                    which,
                    producers,
                    bytes: r.counts.bytes,
                    cpu_secs,
                    lost: r.counts.lost,
                    written: r.written,
                    problems: r.problem_count,
                };
                progress(&run);
                match which {
                    Which::Zerotraced => point.ours.push(run),
                    Which::Genuine => point.genuine.push(run),
                }
            }
        }
        points.push(point);
    }
    Ok(points)
}

/// The Markdown table: per point, MB read, both services' ms/MB, their
/// ratio, and each one's growth since the first point.
pub fn table(points: &[ScalePoint]) -> String {
    let mut out = String::new();
    out.push_str(
        "| producers | MB read per run | zerotraced ms CPU / MB | genuine ms CPU / MB | ours / genuine | growth since the first point: ours | genuine |\n",
    );
    out.push_str("|---:|---:|---:|---:|---:|---:|---:|\n");
    let first = points.first();
    for p in points {
        let (o, g) = (p.ours_ms_per_mb(), p.genuine_ms_per_mb());
        let (go, gg) = match first {
            Some(f) => (o / f.ours_ms_per_mb(), g / f.genuine_ms_per_mb()),
            None => (f64::NAN, f64::NAN),
        };
        let _ = writeln!(
            out,
            "| {} | {:.1} | {:.2} | {:.2} | {:.2}× | {:.2}× | {:.2}× |",
            p.producers,
            p.mb(),
            o,
            g,
            o / g,
            go,
            gg
        );
    }
    out
}

/// Whether the goal holds: ours below the genuine service's at every
/// point, and growing from the first to the last point no faster.
pub fn goal_met(points: &[ScalePoint]) -> bool {
    let (Some(first), Some(last)) = (points.first(), points.last()) else {
        return false;
    };
    let below = points
        .iter()
        .all(|p| p.ours_ms_per_mb() < p.genuine_ms_per_mb());
    let ours_growth = last.ours_ms_per_mb() / first.ours_ms_per_mb();
    let genuine_growth = last.genuine_ms_per_mb() / first.genuine_ms_per_mb();
    below && ours_growth <= genuine_growth
}

/// One line of the plot: its name, colour and value at a point.
type Series = (&'static str, &'static str, fn(&ScalePoint) -> f64);

/// Both services' ms/MB against the number of producers (log₂ axis), as a
/// self-contained SVG.
pub fn svg(points: &[ScalePoint]) -> String {
    const W: f64 = 640.0;
    const H: f64 = 400.0;
    const LEFT: f64 = 70.0;
    const RIGHT: f64 = 160.0;
    const TOP: f64 = 40.0;
    const BOTTOM: f64 = 60.0;
    let xs: Vec<f64> = points
        .iter()
        .map(|p| f64::from(p.producers.max(1)).log2())
        .collect();
    let x_max = xs.iter().copied().fold(1.0, f64::max);
    let y_max = points
        .iter()
        .flat_map(|p| [p.ours_ms_per_mb(), p.genuine_ms_per_mb()])
        .filter(|v| v.is_finite())
        .fold(0.0, f64::max)
        * 1.15;
    let y_max = if y_max > 0.0 { y_max } else { 1.0 };
    let px = |x: f64| LEFT + x / x_max * (W - LEFT - RIGHT);
    let py = |y: f64| H - BOTTOM - y / y_max * (H - TOP - BOTTOM);
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect width="{W}" height="{H}" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="{}" y="22" text-anchor="middle" font-size="14">Service CPU per MB ingested and read, against producer processes</text>"#,
        W / 2.0
    );
    // Axes.
    let (x0, y0, x1, y1) = (px(0.0), py(0.0), px(x_max), py(y_max));
    let _ = writeln!(
        s,
        r#"<line x1="{x0}" y1="{y0}" x2="{x1}" y2="{y0}" stroke="black"/><line x1="{x0}" y1="{y0}" x2="{x0}" y2="{y1}" stroke="black"/>"#
    );
    for (p, &x) in points.iter().zip(&xs) {
        let _ = writeln!(
            s,
            r#"<line x1="{0}" y1="{y0}" x2="{0}" y2="{1}" stroke="black"/><text x="{0}" y="{2}" text-anchor="middle">{3}</text>"#,
            px(x),
            y0 + 5.0,
            y0 + 20.0,
            p.producers
        );
    }
    for i in 0..=4 {
        let v = y_max * f64::from(i) / 4.0;
        let _ = writeln!(
            s,
            r##"<line x1="{0}" y1="{1}" x2="{2}" y2="{1}" stroke="#ddd"/><text x="{3}" y="{4}" text-anchor="end">{5:.1}</text>"##,
            x0,
            py(v),
            x1,
            x0 - 6.0,
            py(v) + 4.0,
            v
        );
    }
    let _ = writeln!(
        s,
        r#"<text x="{}" y="{}" text-anchor="middle">producer processes (log scale), each at the same rate</text>"#,
        (x0 + x1) / 2.0,
        H - 18.0
    );
    let _ = writeln!(
        s,
        r#"<text transform="translate(18 {}) rotate(-90)" text-anchor="middle">ms of service CPU per MB</text>"#,
        (y0 + y1) / 2.0
    );
    let series: [Series; 2] = [
        ("zerotraced", "#1f77b4", ScalePoint::ours_ms_per_mb),
        ("genuine traced", "#d62728", ScalePoint::genuine_ms_per_mb),
    ];
    for (i, (name, color, value)) in series.iter().enumerate() {
        let pts: Vec<String> = points
            .iter()
            .zip(&xs)
            .filter(|(p, _)| value(p).is_finite())
            .map(|(p, &x)| format!("{:.1},{:.1}", px(x), py(value(p))))
            .collect();
        let _ = writeln!(
            s,
            r#"<polyline fill="none" stroke="{color}" stroke-width="2" points="{}"/>"#,
            pts.join(" ")
        );
        for pt in &pts {
            let (cx, cy) = pt.split_once(',').unwrap_or(("0", "0"));
            let _ = writeln!(s, r#"<circle cx="{cx}" cy="{cy}" r="3.5" fill="{color}"/>"#);
        }
        let ly = TOP + 20.0 + 20.0 * i as f64;
        let _ = writeln!(
            s,
            r#"<line x1="{0}" y1="{ly}" x2="{1}" y2="{ly}" stroke="{color}" stroke-width="2"/><text x="{2}" y="{3}">{name}</text>"#,
            W - RIGHT + 15.0,
            W - RIGHT + 40.0,
            W - RIGHT + 46.0,
            ly + 4.0
        );
    }
    s.push_str("</svg>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(which: Which, producers: u32, bytes: u64, cpu_secs: f64) -> ScaleRun {
        ScaleRun {
            which,
            producers,
            bytes,
            cpu_secs,
            lost: 0,
            written: 1,
            problems: 0,
        }
    }

    fn point(producers: u32, ours: f64, genuine: f64) -> ScalePoint {
        ScalePoint {
            producers,
            ours: vec![run(Which::Zerotraced, producers, 1_000_000, ours / 1000.0)],
            genuine: vec![run(Which::Genuine, producers, 1_000_000, genuine / 1000.0)],
        }
    }

    #[test]
    fn the_goal_compares_levels_and_growth() {
        let ok = [point(1, 2.0, 4.0), point(256, 3.0, 8.0)];
        assert!(goal_met(&ok));
        // Below everywhere, but growing faster (1.5× the start vs 1.4×).
        let faster = [point(1, 2.0, 5.0), point(256, 3.0, 7.0)];
        assert!(!goal_met(&faster));
        // Growing slower, but above at one point.
        let above = [
            point(1, 2.0, 4.0),
            point(16, 5.0, 4.5),
            point(256, 3.0, 8.0),
        ];
        assert!(!goal_met(&above));
        assert!(!goal_met(&[]));
    }

    #[test]
    fn medians_table_and_plot() {
        let mut p = point(16, 2.0, 4.0);
        p.ours.push(run(Which::Zerotraced, 16, 1_000_000, 0.010));
        p.ours.push(run(Which::Zerotraced, 16, 1_000_000, 0.003));
        assert_eq!(p.ours_ms_per_mb(), 3.0);
        let points = [point(1, 1.0, 2.0), p];
        let t = table(&points);
        assert!(
            t.contains("| 16 | 1.0 | 3.00 | 4.00 | 0.75× | 3.00× | 2.00× |"),
            "{t}"
        );
        let svg = svg(&points);
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        assert_eq!(svg.matches("<polyline").count(), 2);
        assert_eq!(svg.matches("<circle").count(), 4);
    }
}

//! Peak memory of a load, measured in a child process of this program (so
//! nothing the parent holds counts): the child reads its resident set
//! (`VmRSS` of `/proc/self/status`) before loading, loads the trace as
//! `TraceProcessor::open` does (the file read in 1 MiB chunks into
//! [`Loader::push`], then `finish`, then `from_storage`) noting its
//! resident set and high-water mark (`VmHWM`) after each step, answers
//! `SELECT 1`, and prints one line; the parent reads it back.

use std::path::Path;
use std::process::Command;

use zerotrace_trace_processor::{Loader, TraceProcessor};

/// What the child reports, in KiB.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rss {
    /// Resident before the load.
    pub baseline_kb: u64,
    /// Resident after the load, the tables built.
    pub after_kb: u64,
    /// The high-water mark: the peak during the load.
    pub peak_kb: u64,
    /// (resident, high-water mark) after `push`, `finish`, `from_storage`.
    pub steps_kb: [(u64, u64); 3],
}

impl Rss {
    /// The line the child prints.
    pub fn line(&self) -> String {
        let steps: Vec<String> = self
            .steps_kb
            .iter()
            .map(|(r, h)| format!("{r}/{h}"))
            .collect();
        format!(
            "rss baseline_kb={} after_kb={} peak_kb={} steps_kb={}",
            self.baseline_kb,
            self.after_kb,
            self.peak_kb,
            steps.join(",")
        )
    }

    /// Reads [`Rss::line`]'s text back (from anywhere in `out`).
    pub fn parse(out: &str) -> Option<Rss> {
        let line = out.lines().find(|l| l.starts_with("rss "))?;
        let text = |name: &str| -> Option<&str> {
            line.split_whitespace()
                .find_map(|w| w.strip_prefix(name)?.strip_prefix('='))
        };
        let field = |name: &str| -> Option<u64> { text(name)?.parse().ok() };
        let mut steps_kb = [(0, 0); 3];
        let mut it = text("steps_kb")?.split(',');
        for s in &mut steps_kb {
            let (r, h) = it.next()?.split_once('/')?;
            *s = (r.parse().ok()?, h.parse().ok()?);
        }
        Some(Rss {
            baseline_kb: field("baseline_kb")?,
            after_kb: field("after_kb")?,
            peak_kb: field("peak_kb")?,
            steps_kb,
        })
    }
}

/// A `/proc/self/status` field in KiB (`VmRSS:    1234 kB`).
pub fn status_kb(status: &str, key: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with(key))?;
    let rest = line.strip_prefix(key)?.strip_prefix(':')?;
    rest.split_whitespace().next()?.parse().ok()
}

fn own(key: &str) -> Result<u64, String> {
    let s = std::fs::read_to_string("/proc/self/status").map_err(|e| format!("/proc: {e}"))?;
    status_kb(&s, key).ok_or_else(|| format!("no {key} in /proc/self/status"))
}

/// The child's side: load, print the line.
pub fn child(trace: &Path) -> Result<(), String> {
    use std::io::Read as _;
    let baseline_kb = own("VmRSS")?;
    let step = || -> Result<(u64, u64), String> { Ok((own("VmRSS")?, own("VmHWM")?)) };
    let mut f = std::fs::File::open(trace).map_err(|e| format!("{}: {e}", trace.display()))?;
    let mut loader = Loader::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f.read(&mut buf).map_err(|e| e.to_string())?;
        if n == 0 {
            break;
        }
        loader.push(&buf[..n]).map_err(|e| e.to_string())?;
    }
    drop(buf);
    let pushed = step()?;
    let storage = loader.finish().map_err(|e| e.to_string())?;
    let finished = step()?;
    let tp = TraceProcessor::from_storage(storage).map_err(|e| e.to_string())?;
    tp.query("SELECT 1").map_err(|e| e.to_string())?;
    let built = step()?;
    let rss = Rss {
        baseline_kb,
        after_kb: built.0,
        peak_kb: built.1,
        steps_kb: [pushed, finished, built],
    };
    println!("{}", rss.line());
    drop(tp);
    Ok(())
}

/// The parent's side: runs this program as the child on `trace`.
pub fn measure(trace: &Path) -> Result<Rss, String> {
    let me = std::env::current_exe().map_err(|e| format!("this program: {e}"))?;
    let out = Command::new(me)
        .arg("--peak-rss")
        .arg(trace)
        .output()
        .map_err(|e| format!("running the child: {e}"))?;
    let text = String::from_utf8_lossy(&out.stdout);
    Rss::parse(&text).ok_or_else(|| {
        format!(
            "the child said no rss line ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_childs_line_reads_back() {
        let r = Rss {
            baseline_kb: 1,
            after_kb: 22,
            peak_kb: 333,
            steps_kb: [(4, 5), (6, 7), (8, 9)],
        };
        assert_eq!(Rss::parse(&format!("noise\n{}\n", r.line())), Some(r));
        assert_eq!(
            Rss::parse("rss baseline_kb=1 after_kb=x peak_kb=3 steps_kb=1/1,2/2,3/3"),
            None
        );
        assert_eq!(
            Rss::parse("rss baseline_kb=1 after_kb=2 peak_kb=3 steps_kb=1/1,2/2"),
            None
        );
        assert_eq!(Rss::parse(""), None);
    }

    #[test]
    fn status_fields_are_read_in_kib() {
        let s = "Name:\tx\nVmHWM:\t  123456 kB\nVmRSS:\t    789 kB\n";
        assert_eq!(status_kb(s, "VmHWM"), Some(123_456));
        assert_eq!(status_kb(s, "VmRSS"), Some(789));
        assert_eq!(status_kb(s, "VmSwap"), None);
    }
}

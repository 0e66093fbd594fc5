//! A large Chrome JSON trace for `cargo xtask tp-bench --json` (issue 65),
//! made up deterministically (the same bytes for the same size on every
//! machine): what Chrome and `tracing-chrome` write, so the load's
//! throughput is measured on the shapes real traces have, not one event
//! repeated.
//!
//! The trace is `{"traceEvents":[...],"displayTimeUnit":..,"metadata":..}`
//! with events from several processes of several threads each, written
//! thread by thread in bursts (as Chrome flushes per-thread buffers, so
//! the file is only roughly in time order): process and thread names and
//! sort indexes (`M`), nested begin/end pairs (`B`/`E`), complete events
//! (`X`, with thread times), instants (`i`, each scope), counters (`C`,
//! one to three series), async begin/end pairs (`b`/`e`, `id` and
//! `id2.local`), and flows (`s`/`f`, `bp:"e"`). Times are integers of µs
//! (as `tracing-chrome`) or fractional (as Chrome); args are empty, flat,
//! nested objects and arrays, and strings with escapes.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;

/// A splitmix64 stream: cheap, deterministic, good enough for shapes.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A stream from `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n` > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    /// True with probability `pct` percent.
    pub fn chance(&mut self, pct: u64) -> bool {
        self.below(100) < pct
    }

    /// One of `items` (not empty).
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }
}

const CATEGORIES: [&str; 10] = [
    "toplevel",
    "benchmark",
    "v8",
    "blink",
    "cc",
    "gpu",
    "ipc,toplevel",
    "disabled-by-default-devtools.timeline",
    "renderer.scheduler",
    "net",
];

const WORDS: [&str; 24] = [
    "Run",
    "Task",
    "Frame",
    "Paint",
    "Layout",
    "Style",
    "Commit",
    "Draw",
    "Raster",
    "Decode",
    "Parse",
    "Compile",
    "Script",
    "Message",
    "Mojo",
    "Swap",
    "Begin",
    "Update",
    "Scheduler",
    "Resource",
    "Request",
    "Handle",
    "Dispatch",
    "Event",
];

const PROCESS_NAMES: [&str; 4] = ["Browser", "Renderer", "GPU Process", "Network Service"];
const THREAD_NAMES: [&str; 6] = [
    "CrBrowserMain",
    "CrRendererMain",
    "Compositor",
    "ThreadPoolForegroundWorker",
    "IOThread",
    "VizCompositorThread",
];

/// Processes, and threads in each.
const PROCESSES: u64 = 12;
const THREADS_PER_PROCESS: u64 = 8;
/// Open slices a thread may have.
const MAX_DEPTH: usize = 24;

/// A thread's state while its events are written.
#[derive(Debug, Clone)]
struct Thread {
    pid: u64,
    tid: u64,
    /// Its clock (ns; written as µs).
    now: u64,
    /// Its thread-time clock (ns).
    tnow: u64,
    /// The names of its open `B` slices.
    open: Vec<(usize, usize)>,
}

/// A slice name from two vocabulary words (`SchedulerTask::Paint`).
fn name(out: &mut String, (a, b): (usize, usize)) {
    out.push_str(WORDS[a % WORDS.len()]);
    out.push_str(WORDS[(a / WORDS.len() + b) % WORDS.len()]);
    out.push_str("::");
    out.push_str(WORDS[b % WORDS.len()]);
}

/// A time in µs, integral or with three decimals as Chrome writes it.
fn time(out: &mut String, ns: u64, fractional: bool) {
    if fractional {
        let _ = write!(out, "{}.{:03}", ns / 1000, ns % 1000);
    } else {
        let _ = write!(out, "{}", ns / 1000);
    }
}

/// An `args` object of one of the shapes traces carry.
fn args(out: &mut String, r: &mut Rng) {
    match r.below(10) {
        0..=2 => out.push_str(r#","args":{}"#),
        3 | 4 => {
            let _ = write!(
                out,
                r#","args":{{"src_file":"../../base/task/sequence_manager/task_{}.cc","src_func":"{}"}}"#,
                r.below(40),
                WORDS[r.below(24) as usize]
            );
        }
        5 => {
            let _ = write!(
                out,
                r#","args":{{"data":{{"frame":"0x{:x}","url":"https://example.com/p/{}?q=\"{}\"","priority":{},"visible":{}}}}}"#,
                r.next() & 0xffff_ffff,
                r.below(1000),
                r.below(100),
                r.below(5),
                r.chance(50)
            );
        }
        6 => {
            let _ = write!(
                out,
                r#","args":{{"sizes":[{},{},{}],"layers":[{{"id":{},"bounds":[0,0,{},{}]}},{{"id":{},"opaque":false}}]}}"#,
                r.below(4096),
                r.below(4096),
                r.below(4096),
                r.below(500),
                r.below(2000),
                r.below(2000),
                r.below(500)
            );
        }
        7 => {
            let _ = write!(
                out,
                r#","args":{{"chrome_task":{{"posted_from":{{"file_name":"content/browser/x_{}.cc","function_name":"Post"}},"delay_ms":{:.3}}},"n":null}}"#,
                r.below(100),
                r.below(100_000) as f64 / 1000.0
            );
        }
        8 => {
            let _ = write!(
                out,
                r#","args":{{"count":{},"ratio":{:.6},"label":"tab\t{}\u00e9"}}"#,
                r.below(1 << 40),
                r.below(1_000_000) as f64 / 1e6,
                r.below(64)
            );
        }
        _ => {
            let _ = write!(
                out,
                r#","args":{{"step":"{}","info":{{"ids":[{},{},{},{}],"ok":true}}}}"#,
                WORDS[r.below(24) as usize],
                r.below(1 << 20),
                r.below(1 << 20),
                r.below(1 << 20),
                r.below(1 << 20)
            );
        }
    }
}

/// The common head of an event: pid, tid, ts, ph.
fn head(out: &mut String, t: &Thread, ph: char, fractional: bool) {
    let _ = write!(out, r#"{{"pid":{},"tid":{},"ts":"#, t.pid, t.tid);
    time(out, t.now, fractional);
    let _ = write!(out, r#","ph":"{ph}""#);
}

/// One event of thread `t` (its clock advanced first) appended to `out`.
fn event(out: &mut String, t: &mut Thread, r: &mut Rng, async_open: &mut Vec<(u64, u64)>) {
    t.now += 1_000 + r.below(40_000);
    t.tnow += 500 + r.below(20_000);
    let frac = r.chance(50);
    let cat = *r.pick(&CATEGORIES);
    let roll = r.below(100);
    let close = !t.open.is_empty() && (t.open.len() >= MAX_DEPTH || roll < 30);
    if close {
        head(out, t, 'E', frac);
        t.open.pop();
        if r.chance(20) {
            let _ = write!(out, r#","args":{{"result":{}}}"#, r.below(100));
        }
    } else if roll < 45 {
        let n = (r.below(97) as usize, r.below(31) as usize);
        head(out, t, 'B', frac);
        let _ = write!(out, r#","cat":"{cat}","name":""#);
        name(out, n);
        out.push('"');
        args(out, r);
        t.open.push(n);
    } else if roll < 75 {
        let long = r.chance(5);
        let dur = 200 + r.below(if long { 900_000 } else { 30_000 });
        head(out, t, 'X', frac);
        out.push_str(r#","dur":"#);
        time(out, dur, frac);
        let _ = write!(
            out,
            r#","tts":{},"tdur":{},"cat":"{cat}","name":""#,
            t.tnow / 1000,
            dur / 2000
        );
        name(out, (r.below(97) as usize, r.below(31) as usize));
        out.push('"');
        args(out, r);
        // The next event of the thread comes after this one ends.
        t.now += dur;
    } else if roll < 83 {
        head(out, t, 'i', frac);
        let scope = *r.pick(&["t", "p", "g"]);
        let _ = write!(out, r#","s":"{scope}","cat":"{cat}","name":""#);
        name(out, (r.below(50) as usize, 7));
        out.push('"');
        args(out, r);
    } else if roll < 90 {
        head(out, t, 'C', frac);
        let _ = match r.below(3) {
            0 => write!(
                out,
                r#","name":"Memory","args":{{"used":{},"free":{}}}"#,
                r.below(1 << 32),
                r.below(1 << 30)
            ),
            1 => write!(
                out,
                r#","name":"FPS","args":{{"value":{:.2}}}"#,
                r.below(12_000) as f64 / 100.0
            ),
            _ => write!(
                out,
                r#","name":"Queue","cat":"{cat}","args":{{"pending":{},"running":{},"delayed":{}}}"#,
                r.below(64),
                r.below(8),
                r.below(128)
            ),
        };
    } else if roll < 96 {
        // Async: a begin, or the end of one this process began.
        let own = async_open.iter().position(|(pid, _)| *pid == t.pid);
        match own {
            Some(i) if r.chance(50) || async_open.len() > 64 => {
                let (_, id) = async_open.swap_remove(i);
                head(out, t, 'e', frac);
                let _ = write!(out, r#","cat":"net","name":"Request","id":"0x{id:x}"}}"#);
                return;
            }
            _ => {
                let id = r.next() & 0xffff_ffff;
                head(out, t, 'b', frac);
                if r.chance(70) {
                    async_open.push((t.pid, id));
                    let _ = write!(out, r#","cat":"net","name":"Request","id":"0x{id:x}""#);
                } else {
                    // A local id with its end right away (a short request).
                    let _ = write!(
                        out,
                        r#","cat":"loading","name":"Load","id2":{{"local":"0x{id:x}"}}"#
                    );
                    args(out, r);
                    out.push_str("},\n");
                    t.now += 1_000;
                    head(out, t, 'e', frac);
                    let _ = write!(
                        out,
                        r#","cat":"loading","name":"Load","id2":{{"local":"0x{id:x}"}}}}"#
                    );
                    return;
                }
                args(out, r);
            }
        }
    } else {
        // A flow: its start here, its end a little later on the same
        // thread, bound to the enclosing slice.
        let id = r.next() & 0x00ff_ffff;
        head(out, t, 's', frac);
        let _ = write!(out, r#","cat":"{cat}","name":"Post","id":{id}}},"#);
        out.push('\n');
        t.now += 2_000;
        head(out, t, 'f', frac);
        let _ = write!(out, r#","bp":"e","cat":"{cat}","name":"Post","id":{id}"#);
    }
    out.push('}');
}

/// The metadata events naming every process and thread.
fn names(out: &mut String, threads: &[Thread]) {
    for (p, pid) in (0..PROCESSES).map(|p| (p, 1000 + p * 37)) {
        let _ = write!(
            out,
            r#"{{"pid":{pid},"tid":{pid},"ts":0,"ph":"M","cat":"__metadata","name":"process_name","args":{{"name":"{}"}}}},"#,
            PROCESS_NAMES[(p % 4) as usize]
        );
        out.push('\n');
        let _ = write!(
            out,
            r#"{{"pid":{pid},"tid":{pid},"ts":0,"ph":"M","cat":"__metadata","name":"process_sort_index","args":{{"sort_index":{p}}}}},"#
        );
        out.push('\n');
    }
    for (i, t) in threads.iter().enumerate() {
        let _ = write!(
            out,
            r#"{{"pid":{},"tid":{},"ts":0,"ph":"M","cat":"__metadata","name":"thread_name","args":{{"name":"{}"}}}},"#,
            t.pid,
            t.tid,
            THREAD_NAMES[i % THREAD_NAMES.len()]
        );
        out.push('\n');
    }
}

/// Writes a trace of about `mb` MB (10^6 bytes) to `path`; its size.
pub fn write(path: &Path, mb: u64) -> Result<u64, String> {
    let target = mb.saturating_mul(1_000_000);
    let file = std::fs::File::create(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut w = std::io::BufWriter::with_capacity(1 << 20, file);
    let mut r = Rng::new(0x6a73_6f6e_7472_6163);
    let mut threads: Vec<Thread> = (0..PROCESSES)
        .flat_map(|p| {
            let pid = 1000 + p * 37;
            (0..THREADS_PER_PROCESS).map(move |t| Thread {
                pid,
                tid: if t == 0 { pid } else { pid + 1 + t * 3 },
                now: 1_000_000_000 + t * 1000,
                tnow: 0,
                open: Vec::new(),
            })
        })
        .collect();
    let mut out = String::with_capacity(1 << 20);
    out.push_str("{\"traceEvents\":[\n");
    names(&mut out, &threads);
    let mut async_open = Vec::new();
    let mut written: u64 = 0;
    let mut first = true;
    while written + (out.len() as u64) < target {
        // A burst of one thread's events, as its buffer is flushed.
        let i = r.below(threads.len() as u64) as usize;
        for _ in 0..(8 + r.below(120)) {
            if !first {
                out.push_str(",\n");
            }
            first = false;
            event(&mut out, &mut threads[i], &mut r, &mut async_open);
        }
        if out.len() >= 1 << 20 {
            w.write_all(out.as_bytes()).map_err(|e| e.to_string())?;
            written += out.len() as u64;
            out.clear();
        }
    }
    // Whatever is still open ends, so every slice has its duration.
    for t in &mut threads {
        while t.open.pop().is_some() {
            t.now += 1_000;
            out.push_str(",\n");
            head(&mut out, t, 'E', false);
            out.push('}');
        }
    }
    out.push_str(
        "\n],\"displayTimeUnit\":\"ns\",\"metadata\":{\"product-version\":\"Chrome/120.0.0.0\",\"num-cpus\":8,\"trace-config\":\"\"}}\n",
    );
    w.write_all(out.as_bytes()).map_err(|e| e.to_string())?;
    written += out.len() as u64;
    w.flush().map_err(|e| e.to_string())?;
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The trace is valid JSON (strict: no trailing commas), the same
    /// bytes each time, and about the size asked for, with every phase.
    #[test]
    fn the_trace_is_json_deterministic_and_has_every_phase() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a.json"), dir.path().join("b.json"));
        let n = write(&a, 2).unwrap();
        write(&b, 2).unwrap();
        let text = std::fs::read(&a).unwrap();
        assert_eq!(text, std::fs::read(&b).unwrap());
        assert_eq!(n, text.len() as u64);
        assert!((2_000_000..2_200_000).contains(&n), "{n}");
        let v: serde_json::Value = serde_json::from_slice(&text).unwrap();
        let events = v["traceEvents"].as_array().unwrap();
        for ph in ["M", "B", "E", "X", "i", "C", "b", "e", "s", "f"] {
            assert!(events.iter().any(|e| e["ph"] == ph), "no {ph}");
        }
        // B and E pair up per thread.
        let mut depth = std::collections::HashMap::new();
        for e in events {
            let d = depth.entry(e["tid"].as_u64().unwrap()).or_insert(0i64);
            match e["ph"].as_str().unwrap() {
                "B" => *d += 1,
                "E" => *d -= 1,
                _ => {}
            }
            assert!(*d >= 0);
        }
        assert!(depth.values().all(|d| *d == 0));
    }
}
